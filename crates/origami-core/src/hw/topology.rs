//! Where the blocks of a one-block-per-SM launch run, and which SMs share a GPC: the
//! `sm_topology` measurement of `origami-calibrate --only topology` (docs/calibrate.md).
//! The block scheduler deals a launch's blocks out GPC by GPC in runs of consecutive block
//! ids (on the H100: blocks 0-7 of a full launch on SMs 124-131, the next on 0, 1, 16, 17, ...),
//! so the programs of a persistent kernel that run side by side in one GPC are known per
//! launch size. The throughput model's GPC-merge term reads it (docs/throughput.md): loads of
//! the same tensor-descriptor box by programs of one GPC reach the L2 as fewer requests than
//! their boxes (Nsight Compute, docs/triton-tma.md).

use std::sync::OnceLock;

use super::schema::{GpuDesc, HwDoc};

/// The measurement's name in a calibration document.
pub const MEASUREMENT: &str = "sm_topology";

/// The GPC of every block of a launch of P blocks, for every P from 1 to the SM count.
#[derive(Debug, Clone, PartialEq)]
pub struct SmTopology {
    /// Entry P - 1: the GPC of blocks 0..P of a launch of P blocks.
    block_gpc: Vec<Vec<u16>>,
    gpcs: u16,
}

/// Why a document's topology cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TopologyError {
    #[error("{0}: measurement 'sm_topology' has no '{1}' array")]
    Missing(String, &'static str),
    #[error("{0}: 'sm_topology' is malformed: {1}")]
    Malformed(String, String),
}

impl SmTopology {
    /// From the GPC of each %smid (`None`: an SM no block ran on) and, per launch size P, the
    /// %smid of each of its P blocks (entry P - 1). Every launch size from 1 up must be
    /// there, each with P blocks on SMs whose GPC is known.
    pub fn from_parts(gpc_of_sm: &[Option<u16>], block_sm: &[Vec<u32>]) -> Result<Self, String> {
        if block_sm.is_empty() {
            return Err("no launch recorded".into());
        }
        let mut block_gpc = Vec::with_capacity(block_sm.len());
        for (i, sms) in block_sm.iter().enumerate() {
            if sms.len() != i + 1 {
                return Err(format!(
                    "the launch of {} blocks lists {} SMs",
                    i + 1,
                    sms.len()
                ));
            }
            let gpcs = sms
                .iter()
                .map(|&s| {
                    gpc_of_sm
                        .get(s as usize)
                        .copied()
                        .flatten()
                        .ok_or_else(|| format!("SM {s} has no GPC"))
                })
                .collect::<Result<Vec<u16>, String>>()?;
            block_gpc.push(gpcs);
        }
        let gpcs = block_gpc
            .iter()
            .flatten()
            .copied()
            .max()
            .map_or(0, |g| g.saturating_add(1));
        Ok(SmTopology { block_gpc, gpcs })
    }

    /// The `sm_topology` measurement of a calibration document (`None` without one).
    pub fn from_doc(doc: &HwDoc, source: &str) -> Result<Option<Self>, TopologyError> {
        let Some(m) = doc.measurements.iter().find(|m| m.name == MEASUREMENT) else {
            return Ok(None);
        };
        let array = |key: &'static str| {
            m.details
                .get(key)
                .and_then(|v| v.as_array())
                .ok_or_else(|| TopologyError::Missing(source.into(), key))
        };
        let gpc_of_sm: Vec<Option<u16>> = array("gpc_of_sm")?
            .iter()
            .map(|v| v.as_u64().and_then(|g| u16::try_from(g).ok()))
            .collect();
        let block_sm: Vec<Vec<u32>> = array("block_sm")?
            .iter()
            .map(|launch| {
                launch
                    .as_array()
                    .and_then(|a| {
                        a.iter()
                            .map(|s| s.as_u64().and_then(|s| u32::try_from(s).ok()))
                            .collect::<Option<Vec<u32>>>()
                    })
                    .ok_or_else(|| {
                        TopologyError::Malformed(
                            source.into(),
                            "a launch is not a list of SMs".into(),
                        )
                    })
            })
            .collect::<Result<_, _>>()?;
        Self::from_parts(&gpc_of_sm, &block_sm)
            .map(Some)
            .map_err(|e| TopologyError::Malformed(source.into(), e))
    }

    /// The GPC of each block of a launch of `blocks` blocks (`None` beyond the launches
    /// recorded, or for 0).
    pub fn block_gpcs(&self, blocks: u64) -> Option<&[u16]> {
        let i = usize::try_from(blocks).ok()?.checked_sub(1)?;
        self.block_gpc.get(i).map(Vec::as_slice)
    }

    /// How a launch of `blocks` blocks was dealt out: runs of consecutive block ids on one
    /// GPC, as (first block, last block, GPC); empty beyond the launches recorded.
    pub fn runs(&self, blocks: u64) -> Vec<(usize, usize, u16)> {
        let mut runs: Vec<(usize, usize, u16)> = Vec::new();
        for (b, &g) in self.block_gpcs(blocks).unwrap_or(&[]).iter().enumerate() {
            match runs.last_mut() {
                Some(r) if r.2 == g => r.1 = b,
                _ => runs.push((b, b, g)),
            }
        }
        runs
    }

    /// GPCs seen.
    pub fn gpcs(&self) -> u16 {
        self.gpcs
    }

    /// Largest launch recorded (the SM count).
    pub fn max_blocks(&self) -> u64 {
        self.block_gpc.len() as u64
    }

    /// The committed topology of this GPU, if one was measured on its model (by name and SM
    /// count: a part with other SMs fused off may place blocks differently).
    pub fn for_gpu(gpu: &GpuDesc) -> Option<&'static SmTopology> {
        embedded()
            .iter()
            .find(|(name, sms, _)| *name == gpu.name && *sms == gpu.sm_count)
            .map(|(_, _, t)| t)
    }
}

/// Committed topology documents (`origami-calibrate --only topology`), by GPU name.
const EMBEDDED: &[&str] = &[include_str!(
    "../../../../calibrations/topology/h100-sxm.json"
)];

fn embedded() -> &'static [(String, u32, SmTopology)] {
    static CELL: OnceLock<Vec<(String, u32, SmTopology)>> = OnceLock::new();
    CELL.get_or_init(|| {
        EMBEDDED
            .iter()
            .filter_map(|text| {
                let doc: HwDoc = serde_json::from_str(text).ok()?;
                let t = SmTopology::from_doc(&doc, "embedded topology").ok()??;
                Some((doc.gpu.name.clone(), doc.gpu.sm_count, t))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_give_each_blocks_gpc() {
        // four SMs in two GPCs; launches of 1..4 blocks
        let gpc = [Some(0), Some(0), Some(1), Some(1)];
        let launches = vec![vec![2], vec![2, 0], vec![2, 3, 0], vec![2, 3, 0, 1]];
        let t = SmTopology::from_parts(&gpc, &launches).unwrap();
        assert_eq!(t.gpcs(), 2);
        assert_eq!(t.max_blocks(), 4);
        assert_eq!(t.block_gpcs(3), Some(&[1, 1, 0][..]));
        assert_eq!(t.runs(4), vec![(0, 1, 1), (2, 3, 0)]);
        assert!(t.runs(5).is_empty());
        assert_eq!(t.block_gpcs(0), None);
        assert_eq!(t.block_gpcs(5), None);
    }

    #[test]
    fn malformed_parts_are_refused() {
        let gpc = [Some(0), None];
        assert!(SmTopology::from_parts(&gpc, &[]).is_err());
        assert!(SmTopology::from_parts(&gpc, &[vec![0, 0]]).is_err()); // 2 SMs for 1 block
        assert!(SmTopology::from_parts(&gpc, &[vec![1]]).is_err()); // SM without a GPC
        assert!(SmTopology::from_parts(&gpc, &[vec![7]]).is_err()); // SM out of range
    }

    #[test]
    fn a_document_without_the_arrays_is_refused_and_one_without_the_measurement_is_none() {
        let mut doc = crate::hw::presets::preset("h100-sxm").unwrap();
        assert_eq!(SmTopology::from_doc(&doc, "f"), Ok(None));
        let text = format!(
            r#"{{"name": "{MEASUREMENT}", "unit": "GPCs", "n": 1, "median": 1, "mean": 1,
                "stddev": 0, "cov": 0, "min": 1, "max": 1, "details": {{"gpc_of_sm": [0]}}}}"#
        );
        doc.measurements.push(serde_json::from_str(&text).unwrap());
        assert_eq!(
            SmTopology::from_doc(&doc, "f"),
            Err(TopologyError::Missing("f".into(), "block_sm"))
        );
        doc.measurements[0]
            .details
            .insert("block_sm".into(), serde_json::json!([[0]]));
        assert_eq!(SmTopology::from_doc(&doc, "f").unwrap().unwrap().gpcs(), 1);
    }

    #[test]
    fn the_h100_topology_is_embedded() {
        let t = embedded()
            .iter()
            .find(|(name, sms, _)| name == "NVIDIA H100 80GB HBM3" && *sms == 132)
            .map(|(_, _, t)| t)
            .expect("the H100's topology");
        assert_eq!(t.max_blocks(), 132);
        assert_eq!(t.gpcs(), 8);
        // every block of a full launch in one of the 8 GPCs, each GPC holding 16 or 18 SMs
        let full = t.block_gpcs(132).unwrap();
        let mut per = [0u32; 8];
        for &g in full {
            per[g as usize] += 1;
        }
        assert!(per.iter().all(|&n| n == 16 || n == 18), "{per:?}");
    }
}
