//! The model's two mode switches as types: which model scores the configs of phase 1 (the
//! Origami latency model of the tritonBLAS paper, or this project's SM-throughput model)
//! and where phase 2 sends a tie in footprint cost. The hardware JSON stores them as the
//! numbers 0 and 1 (`throughput_model`, `phase2_prefer_larger_group`); `constants.rs`
//! converts at that boundary.

/// Which model scores the configs (`throughput_model`: 0 = latency, 1 = throughput).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scoring {
    /// The Origami latency model, per tile (per launch when the pipeline model or another
    /// tensor-core path tells launches apart).
    Latency,
    /// The SM-throughput model (`throughput.rs`), per launch.
    Throughput,
}

impl Scoring {
    /// The name printed in reports ("latency", "throughput").
    pub fn name(self) -> &'static str {
        match self {
            Scoring::Latency => "latency",
            Scoring::Throughput => "throughput",
        }
    }
}

/// Where phase 2 sends a tie in footprint cost (`phase2_prefer_larger_group`: 0 = the
/// smallest GROUP_SIZE_M, the NVIDIA port report's rule; 1 = the largest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase2Tie {
    SmallerGroup,
    LargerGroup,
}

impl Phase2Tie {
    /// Whether a tie goes to the larger GROUP_SIZE_M.
    pub fn prefers_larger(self) -> bool {
        self == Phase2Tie::LargerGroup
    }
}
