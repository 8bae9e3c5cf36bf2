//! Tier 1 of the parameter resolution (the NVIDIA port report, section 4.1, "dynamic
//! derivation"): the five parameters approximated from the device's properties alone. DRAM
//! bandwidth is the theoretical 2 x memory clock x bus width; the other rules are stated
//! assumptions, to be replaced by calibration (tier 2) or an override file (tier 3).

use serde::{Deserialize, Serialize};

use super::schema::{GpuDesc, ModelParams};

/// What the driver reports about a device (filled by `gpu::probe` on a real GPU, or by
/// hand in tests).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceProps {
    pub name: String,
    pub compute_capability: [u32; 2],
    pub sm_count: u32,
    pub l2_bytes: u64,
    pub smem_per_block_optin_bytes: u64,
    pub registers_per_sm: u32,
    pub sm_clock_mhz: f64,
    pub mem_clock_mhz: f64,
    pub mem_bus_width_bits: u32,
}

/// Assumptions of the derived tier, in one place with their reasons.
pub struct DeriveRules;

impl DeriveRules {
    /// L2 bytes per SM clock per SM (one 32-byte sector per clock per SM; assumed).
    pub const L2_BYTES_PER_CLK_PER_SM: f64 = 32.0;
    /// DRAM saturates at this fraction of the SMs (the RTX 4090 of the NVIDIA port report:
    /// 0.0222 x 45 SMs = 1).
    pub const DRAM_SATURATION_SM_FRACTION: f64 = 0.35;
    /// DRAM latency beyond an L2 hit, cycles (assumed).
    pub const HBM_LATENCY_PENALTY_CYCLES: f64 = 500.0;
    /// mma.sync m16n8k16 latency, cycles (the NVIDIA port report's RTX 4090 value, assumed
    /// for sm_80+).
    pub const MMA_LATENCY_CYCLES: f64 = 33.0;
}

/// Theoretical DRAM bandwidth in GB/s: double data rate x memory clock x bus width.
pub fn theoretical_dram_gbps(mem_clock_mhz: f64, bus_width_bits: u32) -> f64 {
    2.0 * mem_clock_mhz * 1e6 * f64::from(bus_width_bits) / 8.0 / 1e9
}

/// The five parameters derived from device properties.
pub fn derive_params(p: &DeviceProps) -> ModelParams {
    let sms = f64::from(p.sm_count.max(1));
    let dram_bytes_per_s = theoretical_dram_gbps(p.mem_clock_mhz, p.mem_bus_width_bits) * 1e9;
    ModelParams {
        l2_perf_ratio: DeriveRules::L2_BYTES_PER_CLK_PER_SM * sms,
        dram_perf_ratio: dram_bytes_per_s / (p.sm_clock_mhz * 1e6),
        dram_bw_coeff: 1.0 / (DeriveRules::DRAM_SATURATION_SM_FRACTION * sms),
        hbm_latency_penalty: DeriveRules::HBM_LATENCY_PENALTY_CYCLES,
        mma_latency: DeriveRules::MMA_LATENCY_CYCLES,
    }
}

/// The GPU description of a device (MMA shape and tensor cores per SM are the ISA
/// constants of the NVIDIA port report, appendix C.3, for sm_80 and later).
pub fn describe(p: &DeviceProps) -> GpuDesc {
    GpuDesc {
        name: p.name.clone(),
        compute_capability: p.compute_capability,
        sm_count: p.sm_count,
        l2_bytes: p.l2_bytes,
        smem_per_block_optin_bytes: p.smem_per_block_optin_bytes,
        registers_per_sm: p.registers_per_sm,
        max_registers_per_thread: 255,
        sm_clock_mhz: p.sm_clock_mhz,
        mem_clock_mhz: p.mem_clock_mhz,
        mem_bus_width_bits: p.mem_bus_width_bits,
        mma_shape: [16, 8, 16],
        tensor_cores_per_sm: 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_h100() -> DeviceProps {
        DeviceProps {
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: [9, 0],
            sm_count: 132,
            l2_bytes: 52_428_800,
            smem_per_block_optin_bytes: 232_448,
            registers_per_sm: 65_536,
            sm_clock_mhz: 1980.0,
            mem_clock_mhz: 2619.0,
            mem_bus_width_bits: 5120,
        }
    }

    #[test]
    fn h100_dram_bandwidth_is_its_spec() {
        // 2 x 2619 MHz x 640 bytes = 3352 GB/s, the H100 SXM's 3.35 TB/s.
        let gbps = theoretical_dram_gbps(2619.0, 5120);
        assert!((gbps - 3352.32).abs() < 0.01, "{gbps}");
        let p = derive_params(&fake_h100());
        assert!((p.dram_perf_ratio - 3352.32e9 / 1980e6).abs() < 1e-6);
        assert_eq!(p.l2_perf_ratio, 32.0 * 132.0);
        assert!((p.dram_bw_coeff * 0.35 * 132.0 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn description_copies_properties() {
        let d = describe(&fake_h100());
        assert_eq!(d.sm_count, 132);
        assert_eq!(d.mma_shape, [16, 8, 16]);
        assert_eq!(d.l2_bytes, 52_428_800);
    }
}
