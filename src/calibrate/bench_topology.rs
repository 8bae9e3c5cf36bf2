//! SM topology (`origami-calibrate --only topology`, opt-in; issue 11): where the hardware
//! block scheduler places the blocks of a one-block-per-SM launch, and which SMs share a
//! GPC. The programs of a persistent kernel that run side by side in one GPC share their L2
//! reads (loads of the same operand box by SMs of one GPC reach the L2 as fewer requests),
//! so the model needs, per launch size, which blocks run in which GPC.
//!
//! `csrc/sm_topology.cu`:
//! - `topo_where`: for every grid size P from 1 to the SM count, P blocks of 128 threads
//!   with the opt-in maximum of dynamic shared memory (one block per SM, as a persistent
//!   GEMM's operand ring leaves it) record their %smid and spin ~20 us so that all of them
//!   are resident together; launched twice: the first launch's placement is kept, the second
//!   says whether each block landed in the same GPC again.
//! - `topo_where_cluster{16,8,4,2}` (compute capability 9.0): the blocks of a thread-block
//!   cluster run in one GPC, so the SMs seen in one cluster are joined (union-find over 50
//!   launches per size). Components smaller than the largest cluster size that launched are
//!   merged into one more group, the SMs no full cluster reached (on the H100 18 SMs: with 7
//!   GPCs of 16-18 SMs, the 8 GPCs of an H100 SXM). Groups are numbered from 0 in the order
//!   of their smallest %smid. Before 9.0 GPC membership is unknown: each SM is its own group.
//!
//! One measurement, [`SM_TOPOLOGY`] (unit GPCs, the number of groups), a deterministic
//! reading recorded as the power limit is: the same value every sample, CoV 0. Its details:
//! `gpc_of_sm` (index %smid, the group; [`UNSEEN`] for ids no block ran on), `block_sm`
//! (entry P - 1: the %smid of blocks 0..P of the launch of P blocks), `gpc_stable_share`,
//! `cluster_sizes` (those that launched), `gpc_sizes`, `leftover_group` and `method`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::bench::Runner;
use super::results::{Results, Skip};
use super::stability::Policy;
use super::CalibError;
use crate::gpu::{DeviceBuffer, Kernel, KernelArgs, LaunchDims};
use crate::hw::topology::SmTopology;

/// The measurement's name.
pub const SM_TOPOLOGY: &str = "sm_topology";
/// The kernels' source, `csrc/sm_topology.cu`.
const STEM: &str = "sm_topology";
/// Threads per block.
pub const THREADS: u32 = 128;
/// SM cycles every block holds its SM (~20 us at 2 GHz): all blocks of a launch are
/// resident together, none can take the SM of one that finished.
pub const SPIN_CYCLES: u64 = 40_000;
/// Cluster sizes tried, largest first (16 is above the portable 8: Hopper allows it on
/// request).
pub const CLUSTER_SIZES: [u32; 4] = [16, 8, 4, 2];
/// Launches per cluster size.
pub const CLUSTER_LAUNCHES: usize = 50;
/// The largest cluster size every GPU with clusters launches without asking.
const PORTABLE_CLUSTER_MAX: u32 = 8;
/// Thread-block clusters exist from this compute capability.
const CLUSTER_CC: [u32; 2] = [9, 0];
/// `gpc_of_sm` of a %smid no block ran on.
pub const UNSEEN: i64 = -1;
/// What a block's slot holds until the block writes its %smid.
const UNREPORTED: u32 = u32::MAX;
/// %smid values at or above this are refused as a bad readback (real ids are below a few
/// hundred; this bounds `gpc_of_sm`).
const SMID_LIMIT: u32 = 1 << 16;

/// Disjoint sets of %smid values (union-find with path halving), grown on demand.
#[derive(Debug, Clone, Default)]
pub struct SmSets {
    parent: Vec<usize>,
}

impl SmSets {
    fn grow_to(&mut self, len: usize) {
        while self.parent.len() < len {
            self.parent.push(self.parent.len());
        }
    }

    /// The representative of `sm`'s set (the smallest id of a set never merged otherwise).
    pub fn find(&mut self, sm: usize) -> usize {
        self.grow_to(sm + 1);
        let mut x = sm;
        while self.parent[x] != x {
            let grandparent = self.parent[self.parent[x]];
            self.parent[x] = grandparent;
            x = grandparent;
        }
        x
    }

    /// Put `a` and `b` in one set.
    pub fn join(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent[ra.max(rb)] = ra.min(rb);
        }
    }
}

/// Join the SMs of every cluster of one launch: `smids` is block -> %smid, clusters are
/// runs of `size` consecutive blocks (a trailing partial run is ignored).
pub fn join_clusters(sets: &mut SmSets, smids: &[u32], size: usize) {
    if size == 0 {
        return;
    }
    for cluster in smids.chunks_exact(size) {
        for &sm in &cluster[1..] {
            sets.join(cluster[0] as usize, sm as usize);
        }
    }
}

/// The GPC groups of the SMs in `seen`: the sets of `sets`, those with fewer than `full`
/// SMs merged into one group (the SMs no full cluster reached), each group ascending, the
/// groups ordered by their smallest %smid. Returns the groups and the merged group's index
/// (`None` when every set was full).
pub fn gpc_groups(
    sets: &mut SmSets,
    seen: &BTreeSet<u32>,
    full: usize,
) -> (Vec<Vec<u32>>, Option<usize>) {
    let mut by_root: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for &sm in seen {
        by_root.entry(sets.find(sm as usize)).or_default().push(sm);
    }
    let (mut groups, small): (Vec<Vec<u32>>, Vec<Vec<u32>>) =
        by_root.into_values().partition(|g| g.len() >= full);
    let mut leftover: Vec<u32> = small.into_iter().flatten().collect();
    leftover.sort_unstable();
    let leftover_first = leftover.first().copied();
    if !leftover.is_empty() {
        groups.push(leftover);
    }
    groups.sort_by_key(|g| g.first().copied());
    let leftover_index =
        leftover_first.and_then(|first| groups.iter().position(|g| g.first() == Some(&first)));
    (groups, leftover_index)
}

/// Each SM its own group (GPC membership unknown).
pub fn singleton_groups(seen: &BTreeSet<u32>) -> Vec<Vec<u32>> {
    seen.iter().map(|&sm| vec![sm]).collect()
}

/// The group of every %smid from 0 to the largest in `groups`; [`UNSEEN`] for ids in none.
pub fn gpc_of_sm(groups: &[Vec<u32>]) -> Vec<i64> {
    let len = groups
        .iter()
        .flatten()
        .max()
        .map_or(0, |&sm| sm as usize + 1);
    let mut gpc = vec![UNSEEN; len];
    for (g, sms) in groups.iter().enumerate() {
        for &sm in sms {
            gpc[sm as usize] = g as i64;
        }
    }
    gpc
}

/// The group of `sm` ([`UNSEEN`] outside `gpc_of_sm`).
fn group_of(gpc_of_sm: &[i64], sm: u32) -> i64 {
    gpc_of_sm.get(sm as usize).copied().unwrap_or(UNSEEN)
}

/// The share of (launch size, block) pairs whose block ran in the same group in the repeat
/// launch as in the first; `None` without any block.
pub fn gpc_stable_share(first: &[Vec<u32>], repeat: &[Vec<u32>], gpc_of_sm: &[i64]) -> Option<f64> {
    let (mut same, mut total) = (0usize, 0usize);
    for (a, b) in first.iter().zip(repeat) {
        for (&sa, &sb) in a.iter().zip(b) {
            let ga = group_of(gpc_of_sm, sa);
            total += 1;
            same += usize::from(ga != UNSEEN && ga == group_of(gpc_of_sm, sb));
        }
    }
    (total > 0).then(|| same as f64 / total as f64)
}

/// Check one launch's readback (block -> %smid): every block reported, every id plausible.
pub fn check_readback(smids: &[u32], launch: &str) -> Result<(), String> {
    if let Some(b) = smids.iter().position(|&s| s == UNREPORTED) {
        return Err(format!("{launch}: block {b} did not report its SM"));
    }
    if let Some(&s) = smids.iter().find(|&&s| s >= SMID_LIMIT) {
        return Err(format!("{launch}: implausible %smid {s}"));
    }
    Ok(())
}

/// What the launches read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Readings {
    /// Entry P - 1: block -> %smid of the first launch of P blocks.
    pub block_sm: Vec<Vec<u32>>,
    /// The same for the repeat launch.
    pub repeat_sm: Vec<Vec<u32>>,
    /// Per cluster size that launched: every launch's block -> %smid.
    pub clusters: Vec<(u32, Vec<Vec<u32>>)>,
}

impl Readings {
    /// Every %smid a block ran on.
    fn seen(&self) -> BTreeSet<u32> {
        let launches = self.block_sm.iter().chain(&self.repeat_sm);
        let cluster_launches = self.clusters.iter().flat_map(|(_, l)| l);
        launches
            .chain(cluster_launches)
            .flatten()
            .copied()
            .collect()
    }
}

/// The GPC groups and what follows from them.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// Groups of SMs (GPCs, or single SMs when unknown), by smallest %smid.
    pub groups: Vec<Vec<u32>>,
    /// The group of the SMs no full cluster reached, if any.
    pub leftover_group: Option<usize>,
    /// Index %smid: its group, [`UNSEEN`] where no block ran.
    pub gpc_of_sm: Vec<i64>,
    /// See [`gpc_stable_share`].
    pub gpc_stable_share: Option<f64>,
    /// Cluster sizes that launched, largest first.
    pub cluster_sizes: Vec<u32>,
}

impl Topology {
    /// Whether any cluster launched, so that the groups are GPCs.
    pub fn gpcs_known(&self) -> bool {
        !self.cluster_sizes.is_empty()
    }
}

/// The topology the readings give: union-find over the clusters, the leftover rule against
/// the largest cluster size that launched, groups by smallest %smid.
pub fn topology(r: &Readings) -> Topology {
    let seen = r.seen();
    let cluster_sizes: Vec<u32> = r.clusters.iter().map(|(size, _)| *size).collect();
    let (groups, leftover_group) = match cluster_sizes.iter().max() {
        None => (singleton_groups(&seen), None),
        Some(&full) => {
            let mut sets = SmSets::default();
            for (size, launches) in &r.clusters {
                for launch in launches {
                    join_clusters(&mut sets, launch, *size as usize);
                }
            }
            gpc_groups(&mut sets, &seen, full as usize)
        }
    };
    let gpc_of_sm = gpc_of_sm(&groups);
    let gpc_stable_share = gpc_stable_share(&r.block_sm, &r.repeat_sm, &gpc_of_sm);
    Topology {
        groups,
        leftover_group,
        gpc_of_sm,
        gpc_stable_share,
        cluster_sizes,
    }
}

/// One line on how the topology was read.
fn method(known: bool) -> String {
    let placement = format!(
        "topo_where: P = 1..SMs blocks of {THREADS} threads, one per SM (the opt-in maximum of dynamic shared memory), each records %smid and spins {SPIN_CYCLES} cycles; launched twice per P"
    );
    if known {
        format!(
            "{placement}; GPCs: SMs seen in one cluster of topo_where_cluster{{16,8,4,2}} joined over {CLUSTER_LAUNCHES} launches per size, sets smaller than the largest size launched merged into one group"
        )
    } else {
        format!("{placement}; no thread-block cluster launched: each SM is its own group")
    }
}

/// The measurement's details (everything but the launch setup).
pub fn details(t: &Topology, r: &Readings) -> BTreeMap<String, Value> {
    let mut d = BTreeMap::new();
    d.insert("gpc_of_sm".into(), json!(t.gpc_of_sm));
    d.insert("unseen_sm_gpc".into(), json!(UNSEEN));
    d.insert("block_sm".into(), json!(r.block_sm));
    d.insert("gpc_stable_share".into(), json!(t.gpc_stable_share));
    d.insert("cluster_sizes".into(), json!(t.cluster_sizes));
    let sizes: Vec<usize> = t.groups.iter().map(Vec::len).collect();
    d.insert("gpc_sizes".into(), json!(sizes));
    d.insert("leftover_group".into(), json!(t.leftover_group));
    d.insert("gpcs_known".into(), json!(t.gpcs_known()));
    d.insert("method".into(), json!(method(t.gpcs_known())));
    if !t.gpcs_known() {
        d.insert(
            "gpc_note".into(),
            json!("GPC membership unknown (no thread-block cluster launched: they need compute capability 9.0): each SM is recorded as its own group"),
        );
    }
    d
}

/// One line of the text summary from the measurement's value and details.
pub fn summary_line(gpcs: f64, details: &BTreeMap<String, Value>) -> String {
    let sizes = details
        .get("gpc_sizes")
        .map_or("-".into(), Value::to_string);
    let share = details
        .get("gpc_stable_share")
        .and_then(Value::as_f64)
        .map_or("-".into(), |s| format!("{:.1} %", 100.0 * s));
    let clusters = details
        .get("cluster_sizes")
        .map_or("-".into(), Value::to_string);
    let known = details.get("gpcs_known").and_then(Value::as_bool) == Some(true);
    let what = if known {
        "GPC groups"
    } else {
        "groups (GPCs unknown: one per SM)"
    };
    format!(
        "{SM_TOPOLOGY}: {gpcs:.0} {what}, SMs per group {sizes}; a repeat launch keeps {share} of blocks in their group; cluster sizes launched {clusters}"
    )
}

/// How the scheduler dealt out the full launch (`SmTopology::runs` of the largest launch
/// recorded) as one line: "a launch of 132 blocks, by block id: 0-7 group 0, 8-23 group 1,
/// ..."; `None` without a launch.
pub fn full_launch_line(t: &SmTopology) -> Option<String> {
    let runs = t.runs(t.max_blocks());
    let last = runs.last()?.1 + 1;
    let parts: Vec<String> = runs
        .iter()
        .map(|&(a, b, g)| {
            if a == b {
                format!("{a} group {g}")
            } else {
                format!("{a}-{b} group {g}")
            }
        })
        .collect();
    Some(format!(
        "a launch of {last} blocks, by block id: {}",
        parts.join(", ")
    ))
}

/// The launch setup shared by every launch of the benchmark.
struct Setup {
    smem_bytes: u32,
    /// One slot per SM: block -> %smid of the last launch.
    out: DeviceBuffer<u32>,
    sms: u32,
}

impl Runner<'_> {
    /// csrc/sm_topology.cu: block placement of one-block-per-SM launches of every size and
    /// GPC membership from thread-block clusters, as one measurement [`SM_TOPOLOGY`].
    pub fn topology(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let props = self.gpu.props().clone();
        let smem_bytes = u32::try_from(props.smem_per_block_optin_bytes)
            .ok()
            .filter(|&b| b > 0)
            .ok_or_else(|| {
                CalibError::Measurement(format!(
                    "sm_topology: the device reports {} bytes of opt-in shared memory per block",
                    props.smem_per_block_optin_bytes
                ))
            })?;
        let mut setup = Setup {
            smem_bytes,
            out: self
                .gpu
                .alloc_zeros::<u32>(props.sm_count.max(1) as usize)?,
            sms: props.sm_count,
        };
        let where_k = self.kernel(STEM, "topo_where")?;
        let blocks_per_sm = self.one_block_per_sm(&where_k, smem_bytes)?;
        let mut readings = Readings::default();
        for p in 1..=props.sm_count {
            readings
                .block_sm
                .push(self.placement(&where_k, p, &mut setup)?);
            readings
                .repeat_sm
                .push(self.placement(&where_k, p, &mut setup)?);
        }
        readings.clusters = self.cluster_placements(&mut setup, res);
        let topo = topology(&readings);
        let gpcs = topo.groups.len() as f64;
        // a deterministic reading, recorded as the power limit is: no warm-up, the same
        // value every sample (CoV 0)
        let policy = Policy {
            warmup: 0,
            ..self.cfg.policy
        };
        let mut m = self.sampled(SM_TOPOLOGY, "GPCs", policy, |_| Ok(gpcs))?;
        m.details.extend(details(&topo, &readings));
        res.metrics.push(
            m.with("threads", THREADS)
                .with("dyn_smem_bytes", smem_bytes)
                .with("blocks_per_sm", blocks_per_sm)
                .with("spin_cycles", SPIN_CYCLES)
                .with("cluster_launches", CLUSTER_LAUNCHES),
        );
        Ok(())
    }

    /// Raise `k`'s dynamic shared memory to `bytes` and return the blocks that fit on an SM
    /// (1 is the point; more is recorded, not refused).
    fn one_block_per_sm(&self, k: &Kernel, bytes: u32) -> Result<u32, CalibError> {
        k.set_max_dynamic_smem(bytes)?;
        let fit = k.max_active_blocks_per_sm(THREADS, bytes as usize)?;
        if fit == 0 {
            return Err(CalibError::Measurement(format!(
                "sm_topology: no block of {THREADS} threads and {bytes} bytes of shared memory fits on an SM"
            )));
        }
        Ok(fit)
    }

    /// One launch of `blocks` blocks of `k`: block -> %smid.
    fn placement(&self, k: &Kernel, blocks: u32, s: &mut Setup) -> Result<Vec<u32>, CalibError> {
        let gpu = self.gpu;
        let unreported = vec![UNREPORTED; s.out.len()];
        gpu.write(&mut s.out, &unreported)?;
        gpu.launch(
            k,
            LaunchDims::linear(blocks, THREADS).with_smem(s.smem_bytes),
            KernelArgs::new().buf(&s.out).u64(SPIN_CYCLES),
        )?;
        let mut smids = gpu.download(&s.out)?;
        smids.truncate(blocks as usize);
        let launch = format!("{} of {blocks} blocks", k.name());
        check_readback(&smids, &launch).map_err(CalibError::Measurement)?;
        Ok(smids)
    }

    /// The cluster launches of every size of [`CLUSTER_SIZES`] that runs here; a size that
    /// cannot launch is listed under `skipped` with the reason, never an error.
    fn cluster_placements(
        &mut self,
        s: &mut Setup,
        res: &mut Results,
    ) -> Vec<(u32, Vec<Vec<u32>>)> {
        let cc = self.gpu.props().compute_capability;
        if cc < CLUSTER_CC {
            res.skipped.push(Skip {
                what: format!("{SM_TOPOLOGY} clusters (GPC membership)"),
                why: format!(
                    "thread-block clusters need compute capability 9.0; this GPU is {}.{}: each SM is recorded as its own group",
                    cc[0], cc[1]
                ),
            });
            return Vec::new();
        }
        let mut launched = Vec::new();
        for size in CLUSTER_SIZES {
            match self.cluster_launches(size, s) {
                Ok(launches) => launched.push((size, launches)),
                Err(why) => res.skipped.push(Skip {
                    what: format!("{SM_TOPOLOGY} cluster size {size}"),
                    why,
                }),
            }
        }
        launched
    }

    /// [`CLUSTER_LAUNCHES`] launches of `topo_where_cluster<size>` over as many whole
    /// clusters as the SMs hold; the reason as text when the size cannot launch.
    fn cluster_launches(&mut self, size: u32, s: &mut Setup) -> Result<Vec<Vec<u32>>, String> {
        let blocks = (s.sms / size) * size;
        if blocks == 0 {
            return Err(format!("{} SMs hold no cluster of {size}", s.sms));
        }
        let name = format!("topo_where_cluster{size}");
        let k = self.kernel(STEM, &name).map_err(|e| e.to_string())?;
        k.set_max_dynamic_smem(s.smem_bytes)
            .map_err(|e| e.to_string())?;
        if size > PORTABLE_CLUSTER_MAX {
            k.allow_non_portable_cluster_size()
                .map_err(|e| e.to_string())?;
        }
        (0..CLUSTER_LAUNCHES)
            .map(|_| self.placement(&k, blocks, s).map_err(|e| e.to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy GPU of 10 SMs: GPC A = {0, 1, 4, 5}, GPC B = {2, 3, 6, 7}, and SMs 8, 9 that
    /// no cluster of 4 reaches.
    fn toy_readings() -> Readings {
        Readings {
            block_sm: vec![vec![8], vec![8, 9], vec![8, 9, 0]],
            repeat_sm: vec![vec![9], vec![9, 8], vec![9, 8, 1]],
            clusters: vec![
                (
                    4,
                    vec![vec![0, 1, 4, 5, 2, 3, 6, 7], vec![4, 0, 5, 1, 6, 2, 7, 3]],
                ),
                (2, vec![vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]),
            ],
        }
    }

    #[test]
    fn clusters_join_their_sms_and_leftovers_form_one_group() {
        let t = topology(&toy_readings());
        assert_eq!(
            t.groups,
            vec![vec![0, 1, 4, 5], vec![2, 3, 6, 7], vec![8, 9]]
        );
        assert_eq!(t.leftover_group, Some(2));
        assert_eq!(t.gpc_of_sm, vec![0, 0, 1, 1, 0, 0, 1, 1, 2, 2]);
        assert_eq!(t.cluster_sizes, vec![4, 2]);
        assert_eq!(t.gpc_stable_share, Some(1.0));
        assert!(t.gpcs_known());
    }

    #[test]
    fn groups_are_numbered_by_their_smallest_smid_and_unseen_ids_get_minus_one() {
        // the leftover (SMs 1 and 9) sorts between the two full sets; SM 4 never ran
        let mut sets = SmSets::default();
        join_clusters(&mut sets, &[5, 6, 7, 8, 2, 3, 0, 10], 4);
        let seen: BTreeSet<u32> = [0, 1, 2, 3, 5, 6, 7, 8, 9, 10].into_iter().collect();
        let (groups, leftover) = gpc_groups(&mut sets, &seen, 4);
        assert_eq!(
            groups,
            vec![vec![0, 2, 3, 10], vec![1, 9], vec![5, 6, 7, 8]]
        );
        assert_eq!(leftover, Some(1));
        let gpc = gpc_of_sm(&groups);
        assert_eq!(gpc.len(), 11);
        assert_eq!(gpc[4], UNSEEN);
        assert_eq!(gpc[10], 0);
        // every set full: no leftover group
        let seen: BTreeSet<u32> = [0, 2, 3, 10].into_iter().collect();
        assert_eq!(gpc_groups(&mut sets, &seen, 4).1, None);
    }

    #[test]
    fn without_clusters_each_sm_is_its_own_group() {
        let mut r = toy_readings();
        r.clusters.clear();
        let t = topology(&r);
        assert!(!t.gpcs_known());
        assert_eq!(t.groups.len(), 4); // SMs 0, 1, 8, 9 ran
        assert_eq!(t.gpc_of_sm[..2], [0, 1]);
        assert_eq!(t.gpc_of_sm[2..8], [UNSEEN; 6]);
        assert_eq!(t.gpc_of_sm[8..], [2, 3]);
        // every block ran on another SM in the repeat: with one group per SM, none stayed
        assert_eq!(t.gpc_stable_share, Some(0.0));
        let d = details(&t, &r);
        assert!(d["gpc_note"].as_str().unwrap().contains("own group"));
        assert_eq!(d["gpcs_known"], json!(false));
    }

    #[test]
    fn the_stable_share_counts_blocks_that_change_gpc() {
        let gpc = vec![0, 0, 1, 1];
        let first = vec![vec![0], vec![0, 2]];
        let repeat = vec![vec![1], vec![3, 0]];
        // block 0 of P=1 stays in GPC 0; of P=2 block 0 moves, block 1 moves
        assert_eq!(gpc_stable_share(&first, &repeat, &gpc), Some(1.0 / 3.0));
        assert_eq!(gpc_stable_share(&[], &[], &gpc), None);
        // an SM outside the table is never "the same"
        assert_eq!(gpc_stable_share(&[vec![7]], &[vec![7]], &gpc), Some(0.0));
    }

    #[test]
    fn readbacks_with_a_silent_block_or_a_wild_smid_are_refused() {
        assert!(check_readback(&[0, 5, 131], "l").is_ok());
        let e = check_readback(&[0, UNREPORTED], "topo_where of 2 blocks").unwrap_err();
        assert!(e.contains("block 1 did not report"), "{e}");
        assert!(check_readback(&[SMID_LIMIT], "l").is_err());
    }

    #[test]
    fn partial_clusters_and_size_zero_join_nothing() {
        let mut sets = SmSets::default();
        join_clusters(&mut sets, &[0, 1, 2], 2); // the trailing 2 is alone
        join_clusters(&mut sets, &[3, 4], 0);
        assert_eq!(sets.find(1), sets.find(0));
        assert_ne!(sets.find(2), sets.find(0));
        assert_ne!(sets.find(3), sets.find(4));
    }

    /// The H100 SXM (132 SMs) as a first standalone probe of the same method read it:
    /// clusters of 16 cover 7 GPCs; SMs 0, 1, 16, 17, 32, 33, 48, 49 and 122-131 are only
    /// ever in smaller clusters.
    fn h100_gpcs() -> Vec<Vec<u32>> {
        let pairs = |firsts: &[u32]| -> Vec<u32> {
            let mut v: Vec<u32> = firsts.iter().flat_map(|&f| [f, f + 1]).collect();
            v.sort_unstable();
            v
        };
        vec![
            pairs(&[2, 18, 34, 50, 64, 78, 92, 106]),
            pairs(&[4, 20, 36, 52, 66, 80, 94, 108]),
            pairs(&[6, 22, 38, 54, 68, 82, 96, 110]),
            pairs(&[8, 24, 40, 56, 70, 84, 98, 112]),
            pairs(&[10, 26, 42, 58, 72, 86, 100, 114]),
            pairs(&[12, 28, 44, 60, 74, 88, 102, 116, 120]),
            pairs(&[14, 30, 46, 62, 76, 90, 104, 118]),
        ]
    }

    #[test]
    fn the_h100_prototype_readings_give_8_gpcs_of_16_and_18() {
        // clusters of 16 over the 7 full GPCs (a GPC of 18 takes a cluster of 16 of its
        // SMs; 120 and 121 join GPC 12's through clusters of 2), pairs over every SM
        let gpcs = h100_gpcs();
        let mut cluster16 = Vec::new();
        for g in &gpcs {
            cluster16.extend(&g[..16]);
        }
        let cluster2: Vec<u32> = (0..132).collect();
        let mut joined_18 = gpcs[5][14..].to_vec(); // 116, 117, 120, 121
                                                    // pairs (116, 120), (117, 121)
        joined_18.swap(1, 2);
        // the first 12 blocks of two launches of 132 blocks in a row: the scheduler
        // alternates between starting at SM 128 and at SM 124
        let first = [128, 129, 130, 131, 124, 125, 126, 127, 0, 1, 16, 17];
        let repeat = [124, 125, 126, 127, 128, 129, 130, 131, 0, 1, 16, 17];
        let prefixes = |launch: &[u32]| (1..=launch.len()).map(|p| launch[..p].to_vec()).collect();
        let r = Readings {
            block_sm: prefixes(&first),
            repeat_sm: prefixes(&repeat),
            clusters: vec![(16, vec![cluster16]), (2, vec![cluster2, joined_18])],
        };
        let t = topology(&r);
        let sizes: Vec<usize> = t.groups.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![18, 16, 16, 16, 16, 16, 18, 16]);
        // the leftover group holds the SMs no cluster of 16 reached, and is numbered
        // first (its smallest %smid is 0)
        assert_eq!(t.leftover_group, Some(0));
        assert_eq!(
            t.groups[0],
            vec![0, 1, 16, 17, 32, 33, 48, 49, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131]
        );
        assert_eq!(t.gpc_of_sm.len(), 132);
        assert!(t.gpc_of_sm.iter().all(|&g| (0..8).contains(&g)));
        // blocks 0-7 of a full launch (SMs 124-131, in either order) share one GPC with
        // blocks 8-11: every block keeps its GPC in the repeat
        assert_eq!(t.gpc_stable_share, Some(1.0));
        assert_eq!(t.gpc_of_sm[124], t.gpc_of_sm[16]);
        let d = details(&t, &r);
        assert_eq!(d["gpc_sizes"], json!([18, 16, 16, 16, 16, 16, 18, 16]));
        assert_eq!(d["cluster_sizes"], json!([16, 2]));
        assert_eq!(d["leftover_group"], json!(0));
        let line = summary_line(8.0, &d);
        assert!(line.contains("8 GPC groups"), "{line}");
        assert!(line.contains("100.0 %"), "{line}");
    }

    #[test]
    fn the_measurement_passes_check_and_reaches_the_text_summary() {
        use crate::calibrate::assemble::assemble;
        use crate::calibrate::assemble::tests::{full_results, info, metric};
        use crate::calibrate::check::{check_doc, CheckOptions};
        let r = toy_readings();
        let t = topology(&r);
        let mut m = metric(SM_TOPOLOGY, "GPCs", &[3.0; 5]);
        m.details.extend(details(&t, &r));
        let mut res = full_results();
        res.metrics.push(m);
        let doc = assemble(&res, &info()).unwrap();
        let opts = CheckOptions {
            max_cov: 0.01,
            require_measured: true,
        };
        let rep = check_doc(&doc, std::path::Path::new("t.json"), &opts).unwrap();
        assert_eq!(rep.measurements, 7);
        let m = doc
            .measurements
            .iter()
            .find(|m| m.name == SM_TOPOLOGY)
            .unwrap();
        assert_eq!(m.summary.cov, 0.0);
        assert_eq!(
            m.details["gpc_of_sm"],
            json!([0, 0, 1, 1, 0, 0, 1, 1, 2, 2])
        );
        assert_eq!(m.details["block_sm"], json!([[8], [8, 9], [8, 9, 0]]));
        let text = crate::calibrate::text::summary(&doc);
        assert!(
            text.contains("sm_topology: 3 GPC groups, SMs per group [4,4,2]"),
            "{text}"
        );
    }

    #[test]
    fn the_summary_line_survives_missing_details() {
        let line = summary_line(3.0, &BTreeMap::new());
        assert!(line.contains("GPCs unknown"), "{line}");
    }

    #[test]
    fn the_full_launch_is_told_as_runs_of_blocks_per_group() {
        // SMs 0-3 in groups 0, 0, 1, 1
        let gpc = [Some(0), Some(0), Some(1), Some(1)];
        let launches = vec![vec![2], vec![2, 3], vec![2, 3, 0], vec![2, 3, 0, 1]];
        let t = SmTopology::from_parts(&gpc, &launches).unwrap();
        assert_eq!(
            full_launch_line(&t).unwrap(),
            "a launch of 4 blocks, by block id: 0-1 group 1, 2-3 group 0"
        );
        let one = SmTopology::from_parts(&gpc, &[vec![3]]).unwrap();
        assert_eq!(
            full_launch_line(&one).unwrap(),
            "a launch of 1 blocks, by block id: 0 group 1"
        );
    }
}
