//! The `meta` of a sweep's `summary.json`, typed, and the shard of a sweep.
//!
//! The meta has two halves. The *plan* ([`SweepPlan`]) says what the outputs are of: the
//! device and the model set up on it, the timing policy, the shape lists (names, counts
//! and a digest of their contents), and the plan options; every shard of one sweep has
//! the same plan, and `origami-bench merge` refuses shards whose plans differ. The *run*
//! ([`RunRecord`]) is per run by nature: the input seed, clock readings, the driver, the
//! command line, the shapes the time budget left out. A shard folder adds its
//! [`Shard`]; a merged folder lists every shard's run under `shard_runs`, a folder of
//! joined passes every pass's under `pass_runs`. The keys that are
//! per run are [`PER_RUN_META_KEYS`]: outside them, a merged folder's `summary.json` equals
//! that of one unsharded run of the same plan.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::gpu::ClockSample;
use crate::hw::ModelParams;

use super::measure::TimingPolicy;

/// Shard `index` of `count`: the shapes whose position in the union of the lists (in
/// order, from 0) is `index` modulo `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// `I/N` with 0 <= I < N, as `--shard` takes it; the message names the flag.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = |why: &str| format!("--shard '{text}': {why}");
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| bad("expected I/N (shard I of N, numbered from 0), e.g. 0/8"))?;
        let num = |s: &str, what: &str| {
            s.trim().parse::<usize>().map_err(|_| {
                bad(&format!(
                    "{what} is not a whole number (is the scheduler's variable set?)"
                ))
            })
        };
        let shard = Shard {
            index: num(i, "I")?,
            count: num(n, "N")?,
        };
        if shard.count == 0 {
            return Err(bad("N must be at least 1"));
        }
        if shard.index >= shard.count {
            return Err(bad("I must be below N (shards are numbered 0 to N-1)"));
        }
        Ok(shard)
    }

    /// Whether the shape at `position` of the union of the lists is this shard's.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index
    }

    /// How many of `total` shapes are this shard's.
    pub fn share_of(&self, total: usize) -> usize {
        if total > self.index {
            (total - self.index - 1) / self.count + 1
        } else {
            0
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The timing policy as the meta records it (`screen_cut` 0: the screen was off).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PolicyMeta {
    pub samples: usize,
    pub screen_samples: usize,
    pub screen_cut: f64,
    pub target_sample_ms: f64,
    pub max_reps: u32,
}

impl From<&TimingPolicy> for PolicyMeta {
    fn from(p: &TimingPolicy) -> Self {
        PolicyMeta {
            samples: p.samples,
            screen_samples: p.screen_samples,
            screen_cut: if p.screen_cut.is_finite() {
                p.screen_cut
            } else {
                0.0
            },
            target_sample_ms: p.target_sample_ms,
            max_reps: p.max_reps,
        }
    }
}

/// One shape list of the sweep: its set name, its number of shapes and a digest of its
/// rows (FNV-1a 64 over `M,N,K,dtype,label` lines).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListMeta {
    pub set: String,
    pub shapes: usize,
    pub digest: String,
}

/// FNV-1a, 64 bits.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The digest of a list's rows, each `M,N,K,dtype,label`.
pub fn list_digest<'a>(
    rows: impl IntoIterator<Item = (u64, u64, u64, &'a str, &'a str)>,
) -> String {
    let mut text = String::new();
    for (m, n, k, dtype, label) in rows {
        text.push_str(&format!("{m},{n},{k},{dtype},{label}\n"));
    }
    format!("{:016x}", fnv1a64(text.as_bytes()))
}

/// What a sweep's outputs are of (the same in every shard of one sweep).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    /// The device's name.
    pub gpu: String,
    pub gpu_source: String,
    pub dtype: String,
    pub family: String,
    pub model: String,
    pub params: ModelParams,
    pub constants_overridden: BTreeMap<String, f64>,
    pub policy: PolicyMeta,
    pub error_bound: f64,
    #[serde(default)]
    pub shape_lists: Vec<ListMeta>,
    #[serde(default)]
    pub max_configs: Option<usize>,
    #[serde(default)]
    pub only_pick: bool,
    /// `--spread N`: N configs spread over the model's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<usize>,
    /// `--energy-s`: every fully timed config's energy under sustained load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_s: Option<f64>,
}

impl SweepPlan {
    /// Shapes in the union of the lists.
    pub fn total_shapes(&self) -> usize {
        self.shape_lists.iter().map(|l| l.shapes).sum()
    }

    /// The first key on which two plans differ, if any.
    pub fn first_difference(&self, other: &SweepPlan) -> Option<&'static str> {
        let same = [
            ("gpu", self.gpu == other.gpu),
            ("gpu_source", self.gpu_source == other.gpu_source),
            ("dtype", self.dtype == other.dtype),
            ("family", self.family == other.family),
            ("model", self.model == other.model),
            ("params", self.params == other.params),
            (
                "constants_overridden",
                self.constants_overridden == other.constants_overridden,
            ),
            ("policy", self.policy == other.policy),
            ("error_bound", self.error_bound == other.error_bound),
            ("shape_lists", self.shape_lists == other.shape_lists),
            ("max_configs", self.max_configs == other.max_configs),
            ("only_pick", self.only_pick == other.only_pick),
            ("spread", self.spread == other.spread),
            ("energy_s", self.energy_s == other.energy_s),
        ];
        same.iter().find(|(_, eq)| !eq).map(|(k, _)| *k)
    }
}

/// What is per run by nature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The inputs' base seed (`--seed`, or the clock); `null` in a merged folder whose
    /// shards used different seeds.
    pub base_seed: Option<u64>,
    pub clocks_start: Option<ClockSample>,
    pub clocks_end: Option<ClockSample>,
    pub driver: Option<String>,
    /// Shapes not run (the time budget; in a merged folder, the shapes of missing or
    /// unfinished shards).
    pub shapes_left: usize,
    pub command: String,
}

/// One shard's run, as a merged folder lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardRun {
    pub shard: Shard,
    #[serde(flatten)]
    pub run: RunRecord,
}

/// The `meta` of `summary.json` (flat: the plan's and the run's keys side by side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepMeta {
    #[serde(flatten)]
    pub plan: SweepPlan,
    #[serde(flatten)]
    pub run: RunRecord,
    /// Set in a shard's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Set in a merged folder: every shard's run, by shard index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shard_runs: Vec<ShardRun>,
    /// Set in a folder of joined passes (`origami-bench passes`): every pass's run, in
    /// the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_runs: Vec<RunRecord>,
}

/// The meta keys that are per run by nature; outside them a merged folder's
/// `summary.json` equals one unsharded run's.
pub const PER_RUN_META_KEYS: [&str; 9] = [
    "base_seed",
    "clocks_start",
    "clocks_end",
    "driver",
    "shapes_left",
    "command",
    "shard",
    "shard_runs",
    "pass_runs",
];

impl SweepMeta {
    /// As the JSON value that `summary.json` holds under `meta`.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("the meta serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_split() {
        assert_eq!(Shard::parse("3/8"), Ok(Shard { index: 3, count: 8 }));
        for (bad, needle) in [
            ("8/8", "I must be below N"),
            ("0/0", "N must be at least 1"),
            ("/8", "I is not a whole number"),
            ("3", "expected I/N"),
            ("-1/4", "I is not a whole number"),
        ] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.starts_with("--shard '") && e.contains(needle), "{e}");
        }
        let shards: Vec<Shard> = (0..3).map(|i| Shard { index: i, count: 3 }).collect();
        for total in 0..10 {
            let counted: usize = shards.iter().map(|s| s.share_of(total)).sum();
            assert_eq!(counted, total);
            for s in &shards {
                assert_eq!(
                    s.share_of(total),
                    (0..total).filter(|g| s.takes(*g)).count()
                );
            }
        }
    }

    #[test]
    fn the_digest_sees_every_field() {
        let a = list_digest([(64, 64, 64, "fp16", "")]);
        assert_eq!(a.len(), 16);
        assert_ne!(a, list_digest([(64, 64, 64, "fp16", "x")]));
        assert_ne!(a, list_digest([(64, 64, 72, "fp16", "")]));
    }
}
