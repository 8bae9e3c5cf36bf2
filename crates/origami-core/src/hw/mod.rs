//! Hardware parameters and GPU description: the JSON schema, the embedded presets, the
//! derivation from device properties, the three-tier resolution of the NVIDIA port report
//! (section 4.1), and the fitted constants embedded per kernel family and architecture.

pub mod calibrated;
pub mod derive;
pub mod energy;
pub mod fitted;
pub mod load;
pub mod presets;
pub mod resolve;
pub mod schema;
pub mod time_map;
pub mod topology;

pub use derive::DeviceProps;
pub use resolve::{resolve, FileUse, ResolveInput, Resolved, Tier, HW_PARAMS_ENV};
pub use schema::{GpuDesc, HwDoc, ModelParams};
