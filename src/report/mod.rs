//! Writers for people and programs: text tables, JSON, CSV (and plots, where a picture
//! says more).

pub mod selection;
