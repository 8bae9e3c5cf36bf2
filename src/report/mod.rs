//! Writers for people and programs: text tables, JSON, CSV (and plots, where a picture
//! says more).

pub mod bench;
pub mod energy;
pub mod font;
pub mod pareto_plot;
pub mod plots;
pub mod progress;
pub mod refit;
pub mod run;

// The selection's writers and the selector's description live in the GPU-free core.
pub use origami_core::report::{describe, selection};
