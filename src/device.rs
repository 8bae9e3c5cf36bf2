//! The GPU in hand, for the tools that pick for it: its properties through the CUDA driver
//! (loaded at run time), which the selection core takes as plain data
//! (`origami_core::setup::SetupRequest::device`) so that it never links CUDA itself.

use crate::hw::DeviceProps;

/// Properties of GPU 0 when a driver and a GPU are present; `None` otherwise, or when
/// `ORIGAMI_NO_GPU` is set (tests, and users who want the preset on a GPU machine).
pub fn detect_device() -> Option<DeviceProps> {
    if std::env::var_os("ORIGAMI_NO_GPU").is_some() {
        return None;
    }
    use crate::gpu::probe;
    if !probe::is_present(probe::Library::Driver) {
        return None;
    }
    match probe::device_count() {
        Ok(n) if n > 0 => probe::device_props(0).ok(),
        _ => None,
    }
}
