//! The reports of a selection: one writer per output format of a pick (`selection`) and
//! the description of a selector's hardware, constants and family (`describe`).

pub mod describe;
pub mod selection;
