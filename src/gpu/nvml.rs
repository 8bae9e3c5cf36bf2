//! NVML readers (read-only): current and maximum clocks, clock-event ("throttle") reasons,
//! temperature, power, driver version. NVML is optional: without it the callers record "no
//! reading". Devices are matched to CUDA ordinals by UUID, since NVML's index order can
//! differ from CUDA's. Never changes clocks, power limits or modes (this project reads
//! clocks and reports them; it never locks them).

use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::Nvml;
use serde::{Deserialize, Serialize};

use super::error::GpuError;

/// One NVML reading of a device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockSample {
    pub sm_mhz: Option<u32>,
    pub mem_mhz: Option<u32>,
    pub max_sm_mhz: Option<u32>,
    pub max_mem_mhz: Option<u32>,
    /// Active clock-event reasons, by name (empty when none).
    pub throttle_reasons: Vec<String>,
    pub temperature_c: Option<u32>,
    pub power_w: Option<f64>,
}

/// An initialised NVML library.
pub struct NvmlHandle {
    nvml: Nvml,
}

impl NvmlHandle {
    /// Load and initialise NVML (`libnvidia-ml.so.1`, then `libnvidia-ml.so`).
    pub fn init() -> Result<Self, GpuError> {
        let first = match Nvml::init() {
            Ok(nvml) => return Ok(Self { nvml }),
            Err(e) => e.to_string(),
        };
        Nvml::builder()
            .lib_path(std::ffi::OsStr::new("libnvidia-ml.so"))
            .init()
            .map(|nvml| Self { nvml })
            .map_err(|_| GpuError::Nvml(format!("cannot initialise NVML: {first}")))
    }

    /// The device's total-energy counter, millijoules since the driver loaded (Volta and
    /// later); same device matching as [`NvmlHandle::sample`].
    pub fn energy_mj(&self, uuid: &str, fallback_index: usize) -> Result<u64, GpuError> {
        self.device(uuid, fallback_index)?
            .total_energy_consumption()
            .map_err(|e| GpuError::Nvml(e.to_string()))
    }

    /// The power limit the driver enforces now, watts (NVML's `enforced_power_limit`, in
    /// milliwatts: the lowest of the limits set by the user, the board and the system).
    /// Read only: this project never sets it.
    pub fn enforced_power_limit_w(
        &self,
        uuid: &str,
        fallback_index: usize,
    ) -> Result<f64, GpuError> {
        self.device(uuid, fallback_index)?
            .enforced_power_limit()
            .map(milliwatts_to_watts)
            .map_err(|e| GpuError::Nvml(e.to_string()))
    }

    /// The current SM clock alone, MHz (cheaper than a whole [`NvmlHandle::sample`], for
    /// readings while a kernel runs).
    pub fn sm_clock_mhz(&self, uuid: &str, fallback_index: usize) -> Result<u32, GpuError> {
        self.device(uuid, fallback_index)?
            .clock_info(Clock::SM)
            .map_err(|e| GpuError::Nvml(e.to_string()))
    }

    /// The device with this UUID, else NVML's device `fallback_index`.
    fn device(
        &self,
        uuid: &str,
        fallback_index: usize,
    ) -> Result<nvml_wrapper::Device<'_>, GpuError> {
        self.nvml
            .device_by_uuid(uuid)
            .or_else(|_| self.nvml.device_by_index(fallback_index as u32))
            .map_err(|e| GpuError::Nvml(e.to_string()))
    }

    /// The driver version string, e.g. "580.95.05".
    pub fn driver_version(&self) -> Result<String, GpuError> {
        self.nvml
            .sys_driver_version()
            .map_err(|e| GpuError::Nvml(e.to_string()))
    }

    /// Read a device's clocks and reasons; `uuid` as from `probe::device_uuid`, with the
    /// NVML index `fallback_index` used when no device has that UUID.
    pub fn sample(&self, uuid: &str, fallback_index: usize) -> Result<ClockSample, GpuError> {
        let dev = self.device(uuid, fallback_index)?;
        Ok(ClockSample {
            sm_mhz: dev.clock_info(Clock::SM).ok(),
            mem_mhz: dev.clock_info(Clock::Memory).ok(),
            max_sm_mhz: dev.max_clock_info(Clock::SM).ok(),
            max_mem_mhz: dev.max_clock_info(Clock::Memory).ok(),
            throttle_reasons: dev
                .current_throttle_reasons()
                .map(|r| throttle_names(r.bits()))
                .unwrap_or_default(),
            temperature_c: dev.temperature(TemperatureSensor::Gpu).ok(),
            power_w: dev.power_usage().ok().map(milliwatts_to_watts),
        })
    }
}

/// NVML's milliwatts as watts.
pub fn milliwatts_to_watts(mw: u32) -> f64 {
    f64::from(mw) / 1000.0
}

/// Names of the set bits of an NVML clocks-event-reasons mask (nvml.h values).
pub fn throttle_names(bits: u64) -> Vec<String> {
    const NAMES: [(u64, &str); 9] = [
        (0x1, "gpu_idle"),
        (0x2, "applications_clocks_setting"),
        (0x4, "sw_power_cap"),
        (0x8, "hw_slowdown"),
        (0x10, "sync_boost"),
        (0x20, "sw_thermal_slowdown"),
        (0x40, "hw_thermal_slowdown"),
        (0x80, "hw_power_brake_slowdown"),
        (0x100, "display_clock_setting"),
    ];
    let mut v: Vec<String> = NAMES
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| (*n).to_string())
        .collect();
    let known: u64 = NAMES.iter().map(|(b, _)| b).sum();
    if bits & !known != 0 {
        v.push(format!("other(0x{:x})", bits & !known));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_names() {
        assert!(throttle_names(0).is_empty());
        assert_eq!(throttle_names(0x1 | 0x4), vec!["gpu_idle", "sw_power_cap"]);
        assert_eq!(throttle_names(0x1000), vec!["other(0x1000)"]);
    }

    #[test]
    fn power_in_watts() {
        assert_eq!(milliwatts_to_watts(700_000), 700.0);
        assert_eq!(milliwatts_to_watts(1), 0.001);
    }

    #[test]
    fn nvml_absence_is_an_error_not_a_panic() {
        // Without a driver this is Err; with one, Ok. Never a panic.
        let _ = NvmlHandle::init().map(|h| h.driver_version());
    }
}
