//! Writers for people and programs: text tables, JSON, CSV (and plots, where a picture
//! says more).

pub mod bench;
pub mod describe;
pub mod font;
pub mod plots;
pub mod progress;
pub mod refit;
pub mod run;
pub mod selection;
