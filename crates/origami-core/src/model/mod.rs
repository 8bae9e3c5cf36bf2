//! The Origami analytical GEMM model (the NVIDIA port report, Algorithms 3-9; the
//! tritonBLAS paper, section IV; the Origami C++ source): problem and config types, kernel
//! families and their feasibility, the empirical constants, the latency model in its `seed`
//! (the NVIDIA port report's model as published) and `origami` variants, the SM-throughput
//! model of one launch (occupancy, pipeline, warps), and the two-phase selection.

pub mod correction;
pub mod energy;
pub mod family;
pub mod family_set;
pub mod gpc_share;
pub mod group;
pub mod inputs;
pub mod l2;
pub mod latency;
pub mod objective;
pub mod occupancy;
pub mod problem;
pub mod select;
pub mod shapes;
pub mod throughput;

pub use crate::constants::ModelConstants;
pub use crate::constants::{Phase2Tie, Scoring};
pub use family::{family, KernelFamily, FAMILY_NAMES};
pub use family_set::FamilySet;
pub use inputs::{ModelInputs, Variant};
pub use latency::{predict, Breakdown};
pub use problem::{Config, Problem, Switches};
pub use select::{NoFiniteScore, Scope, Selection, Selector};
