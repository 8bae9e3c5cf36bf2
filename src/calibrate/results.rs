//! What a calibration run produces before it becomes a hardware document: named metrics
//! with their samples and statistics, curves, skipped variants and observations. The
//! metric names are the ones written to the JSON `measurements`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::stability::Sampled;
use crate::hw::schema::Curve;
use crate::hw::DeviceProps;

/// Sustained SM clock under load, clock64 over %globaltimer (MHz).
pub const SM_CLOCK: &str = "sm_clock_mhz";
/// Details key of the clock measurement: the highest SM clock the GPU allows (MHz), NVML's
/// maximum when NVML answered, else the driver's (`cudaDevAttrClockRate`).
pub const SM_CLOCK_MAX: &str = "max_sm_mhz";

/// The SM clock a calibration uses (and divides every cycle ratio by): the measured median,
/// but never above the GPU's maximum. clock64 over %globaltimer read 1995 MHz once on an
/// H100 whose maximum is 1980 MHz (NVML): a reading above the maximum is the two timers
/// disagreeing, not a faster clock, and it moved the L2 ratio by 0.8 %. `None`: no maximum
/// recorded (files from before it was), the median as measured.
pub fn sm_clock_used(measured_mhz: f64, max_mhz: Option<f64>) -> f64 {
    match max_mhz {
        Some(max) if max > 0.0 && measured_mhz > max => max,
        _ => measured_mhz,
    }
}

/// L2 read bandwidth at the best footprint of the sweep (GB/s).
pub const L2_READ: &str = "l2_read_gbps";
/// DRAM read bandwidth, all SMs (GB/s).
pub const DRAM_READ: &str = "dram_read_gbps";
/// DRAM copy bandwidth, bytes read + written (GB/s).
pub const DRAM_COPY: &str = "dram_copy_gbps";
/// DRAM triad bandwidth, 2 reads + 1 write (GB/s).
pub const DRAM_TRIAD: &str = "dram_triad_gbps";
/// Pointer-chase latency of an L2 hit (SM cycles).
pub const L2_HIT_LATENCY: &str = "l2_hit_latency_cycles";
/// Pointer-chase DRAM latency, random lines inside 2 MiB pages (SM cycles).
pub const DRAM_LATENCY_PAGE: &str = "dram_latency_page_local_cycles";
/// Pointer-chase DRAM latency, random lines over the whole footprint (SM cycles).
pub const DRAM_LATENCY_RANDOM: &str = "dram_latency_random_cycles";
/// Dependent mma.sync m16n8k16 f16 -> f32 latency (SM cycles).
pub const MMA_F16_LATENCY: &str = "mma_f16_latency_cycles";
/// The DRAM bandwidth-vs-active-SMs curve.
pub const DRAM_SMS_CURVE: &str = "dram_read_gbps_vs_sms";
/// The L2 footprint sweep.
pub const L2_FOOTPRINT_CURVE: &str = "l2_read_gbps_vs_footprint";

/// Shared-memory read bandwidth, `ld.shared.v4.u32`, all resident warps (bytes per SM cycle).
pub const SMEM_READ_V4: &str = "smem_read_v4_bytes_per_cycle_sm";
/// Shared-memory read bandwidth, `ldmatrix.sync.aligned.m8n8.x4` (bytes per SM cycle).
pub const SMEM_LDMATRIX_X4: &str = "smem_ldmatrix_x4_bytes_per_cycle_sm";
/// Time per empty-kernel launch, back to back on one stream (microseconds).
pub const LAUNCH_STREAM: &str = "launch_stream_us";
/// Time per empty-kernel node of a replayed CUDA graph (microseconds).
pub const LAUNCH_GRAPH: &str = "launch_graph_us";
/// What a small dependent reduction kernel adds after a kernel that fills every SM, in a
/// replayed CUDA graph (microseconds; the calibration-only tier reads it: one owner,
/// `hw::calibrated`).
pub use crate::hw::calibrated::DEPENDENT_REDUCE;

/// Name of the metric of one `bar.sync` round of a block of `threads` threads (cycles).
pub fn bar_sync_metric(threads: u32) -> String {
    format!("bar_sync_cycles_t{threads}")
}

/// Name of the metric of one synthetic K-loop iteration with `warps` warps and `stages`
/// pipeline stages (cycles).
pub fn kloop_metric(warps: u32, stages: u32) -> String {
    format!("kloop_cycles_per_iter_w{warps}_s{stages}")
}

/// Name of the curve of K-loop cycles per iteration against stages, `warps` warps.
pub fn kloop_curve(warps: u32) -> String {
    format!("kloop_cycles_vs_stages_w{warps}")
}

/// mma.sync m16n8k16 f16 throughput per SM against resident warps (`--only tc-rate`).
pub const MMA_RATE_CURVE: &str = "mma_sync_f16_per_cycle_per_sm_vs_warps";
/// TMA box load latency, L2-resident tensor (SM cycles; `--only tma`).
pub const TMA_LATENCY_L2: &str = "tma_latency_l2_cycles";
/// TMA box load latency, every box from DRAM (SM cycles).
pub const TMA_LATENCY_DRAM: &str = "tma_latency_dram_cycles";
/// TMA load throughput per SM, L2-resident tensor (bytes per SM cycle).
pub const TMA_L2_BYTES_PER_CYCLE: &str = "tma_l2_bytes_per_cycle_per_sm";
/// TMA load throughput per SM, from DRAM (bytes per SM cycle).
pub const TMA_DRAM_BYTES_PER_CYCLE: &str = "tma_dram_bytes_per_cycle_per_sm";
/// TMA load throughput of all SMs, L2-resident tensor (GB/s).
pub const TMA_L2_GBPS: &str = "tma_l2_gbps";
/// TMA load throughput of all SMs, from DRAM (GB/s).
pub const TMA_DRAM_GBPS: &str = "tma_dram_gbps";

/// Average power with no kernel running, NVML's energy counter over a window (W;
/// `--only energy`, a reference only).
pub const ENERGY_IDLE_W: &str = "energy_idle_w";
/// Average power of one warp per SM spinning on clock64 (W): the static power the dynamic
/// costs are measured above.
pub const ENERGY_STATIC_W: &str = "energy_static_w";
/// Average power of every SM full of warps spinning on clock64 (W): SMs awake and
/// issuing, nothing moved.
pub const ENERGY_ACTIVE_W: &str = "energy_active_w";
/// Dynamic energy per dense tensor-core FLOP, mma.sync m16n8k16 f16 -> f32 (pJ/FLOP).
pub const ENERGY_MMA_PJ_PER_FLOP: &str = "energy_mma_pj_per_flop";
/// Dynamic energy per dense tensor-core FLOP of the same mma.sync with zero A fragments
/// (pJ/FLOP): the rows of a tile past M, zero-filled.
pub const ENERGY_MMA_ZERO_A_PJ_PER_FLOP: &str = "energy_mma_zero_a_pj_per_flop";
/// Dynamic energy per dense tensor-core FLOP, mma.sync m16n8k8 tf32 -> f32 (pJ/FLOP;
/// compute capability 8.0 and later): the origami kernel's tf32 path.
pub const ENERGY_MMA_TF32_PJ_PER_FLOP: &str = "energy_mma_tf32_pj_per_flop";
/// Dynamic energy per byte read from shared memory, ld.shared.v4 (pJ/B).
pub const ENERGY_SMEM_PJ_PER_BYTE: &str = "energy_smem_pj_per_byte";
/// Dynamic energy per byte read from L2 into an SM, hits (pJ/B).
pub const ENERGY_L2_PJ_PER_BYTE: &str = "energy_l2_pj_per_byte";
/// Dynamic energy per byte read from DRAM beyond an L2 hit's (pJ/B): a byte from DRAM
/// costs this plus `energy_l2_pj_per_byte`.
pub const ENERGY_DRAM_PJ_PER_BYTE: &str = "energy_dram_pj_per_byte";
/// Dynamic energy per dense tensor-core FLOP of `wgmma.mma_async` m64n256k16 f16 -> f32
/// with both operands in shared memory, the tensor cores' shared-memory reads included
/// (pJ/FLOP; compute capability 9.0 only): the Hopper GEMM's MMA.
pub const ENERGY_WGMMA_PJ_PER_FLOP: &str = "energy_wgmma_pj_per_flop";
/// The same wgmma with the A tiles zero (pJ/FLOP; compute capability 9.0): rows of a tile
/// past M, which TMA fills with zeros.
pub const ENERGY_WGMMA_ZERO_A_PJ_PER_FLOP: &str = "energy_wgmma_zero_a_pj_per_flop";
/// Dynamic energy per byte a TMA box load (`cp.async.bulk.tensor.2d`) brings from L2 into
/// shared memory, hits, the shared-memory writes included (pJ/B; compute capability 9.0).
pub const ENERGY_TMA_L2_PJ_PER_BYTE: &str = "energy_tma_l2_pj_per_byte";
/// Dynamic energy per byte a TMA box load brings from DRAM beyond a TMA L2 hit's (pJ/B;
/// compute capability 9.0): a byte from DRAM by TMA costs this plus
/// `energy_tma_l2_pj_per_byte`.
pub const ENERGY_TMA_DRAM_PJ_PER_BYTE: &str = "energy_tma_dram_pj_per_byte";
/// Dynamic energy per byte of a TMA box copy that lies wholly outside its tensor (pJ/B;
/// compute capability 9.0): the copy engine fills the box with zeros and reads nothing, as
/// it does for a GEMM tile's rows past M or N.
pub const ENERGY_TMA_ZERO_PJ_PER_BYTE: &str = "energy_tma_zero_pj_per_byte";
/// NVML's enforced power limit (W), read, never set.
pub const POWER_LIMIT_W: &str = "power_limit_w";
/// The metrics of `--only energy` measured over NVML energy-counter windows (the last
/// five on compute capability 9.0 only).
pub const ENERGY_METRICS: [&str; 14] = [
    ENERGY_IDLE_W,
    ENERGY_STATIC_W,
    ENERGY_ACTIVE_W,
    ENERGY_MMA_PJ_PER_FLOP,
    ENERGY_MMA_ZERO_A_PJ_PER_FLOP,
    ENERGY_MMA_TF32_PJ_PER_FLOP,
    ENERGY_SMEM_PJ_PER_BYTE,
    ENERGY_L2_PJ_PER_BYTE,
    ENERGY_DRAM_PJ_PER_BYTE,
    ENERGY_WGMMA_PJ_PER_FLOP,
    ENERGY_WGMMA_ZERO_A_PJ_PER_FLOP,
    ENERGY_TMA_L2_PJ_PER_BYTE,
    ENERGY_TMA_DRAM_PJ_PER_BYTE,
    ENERGY_TMA_ZERO_PJ_PER_BYTE,
];
/// The CoV limit of the energy metrics (a fraction) when the run's own is tighter: a sample
/// is one counter window of ~0.5 s (a few of NVML's ticks), the GPU's temperature drifts
/// from window to window, and the dynamic costs are differences of two powers (the DRAM
/// ones of three figures), so 1 % is out of reach where a kernel-timed bandwidth reaches it
/// (docs/calibrate.md, "Energy costs").
pub const ENERGY_MAX_COV: f64 = 0.05;

/// The CoV limit a measurement is held to, for the run's `max_cov` (a fraction): the
/// energy metrics [`ENERGY_METRICS`] at least [`ENERGY_MAX_COV`], every other the limit
/// as given. The calibration's stability loop and `--check` both ask here.
pub fn cov_limit(name: &str, max_cov: f64) -> f64 {
    if ENERGY_METRICS.contains(&name) {
        max_cov.max(ENERGY_MAX_COV)
    } else {
        max_cov
    }
}

/// Name of the per-warp-count metric of the mma.sync throughput curve.
pub fn mma_rate_metric(warps: u32) -> String {
    format!("mma_sync_f16_per_cycle_per_sm_w{warps:02}")
}

/// Name of a wgmma throughput metric: m64nNk16 fp16, `warpgroups` per CTA, one CTA per SM.
pub fn wgmma_rate_metric(n: u32, warpgroups: u32) -> String {
    format!("wgmma_f16_n{n:03}_wg{warpgroups}_flop_per_cycle_per_sm")
}

/// Name of the wgmma throughput-vs-N curve for `warpgroups` per CTA.
pub fn wgmma_rate_curve(warpgroups: u32) -> String {
    format!("wgmma_f16_flop_per_cycle_per_sm_vs_n_wg{warpgroups}")
}

/// Name of the per-k metric of the SM-limited DRAM curve.
pub fn dram_sms_metric(k: u32) -> String {
    format!("dram_read_gbps_sms_{k:03}")
}

/// Name of the per-footprint metric of the L2 sweep.
pub fn l2_footprint_metric(bytes: u64) -> String {
    format!("l2_read_gbps_fp_{}kib", bytes / 1024)
}

/// One measured metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub sampled: Sampled,
    pub details: BTreeMap<String, Value>,
}

impl Metric {
    pub fn new(name: impl Into<String>, unit: &str, sampled: Sampled) -> Self {
        Self {
            name: name.into(),
            unit: unit.into(),
            sampled,
            details: BTreeMap::new(),
        }
    }

    /// Add a detail.
    pub fn with(mut self, key: &str, v: impl Into<Value>) -> Self {
        self.details.insert(key.into(), v.into());
        self
    }

    /// The median.
    pub fn median(&self) -> f64 {
        self.sampled.summary.median
    }
}

/// A benchmark variant that was not run, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Skip {
    pub what: String,
    pub why: String,
}

/// Everything one device's calibration produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    pub props: DeviceProps,
    pub metrics: Vec<Metric>,
    pub curves: BTreeMap<String, Curve>,
    pub skipped: Vec<Skip>,
    pub observed: BTreeMap<String, Value>,
}

impl Results {
    pub fn new(props: DeviceProps) -> Self {
        Self {
            props,
            metrics: Vec::new(),
            curves: BTreeMap::new(),
            skipped: Vec::new(),
            observed: BTreeMap::new(),
        }
    }

    /// A metric by name.
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    /// The median of a metric by name.
    pub fn median(&self, name: &str) -> Option<f64> {
        self.metric(name).map(Metric::median)
    }

    /// A metric's median as the calibration uses it: the SM clock capped at the GPU's
    /// maximum ([`sm_clock_used`]), any other as measured.
    pub fn used(&self, name: &str) -> Option<f64> {
        let m = self.metric(name)?;
        if name != SM_CLOCK {
            return Some(m.median());
        }
        let max = m.details.get(SM_CLOCK_MAX).and_then(Value::as_f64);
        Some(sm_clock_used(m.median(), max))
    }

    /// Names of the metrics whose CoV stayed above the threshold.
    pub fn unstable(&self) -> Vec<String> {
        self.metrics
            .iter()
            .filter(|m| !m.sampled.stable)
            .map(|m| {
                format!(
                    "{} (CoV {:.2}% after {} samples)",
                    m.name,
                    100.0 * m.sampled.summary.cov,
                    m.sampled.summary.n
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_core_metric_names_sort_by_their_number() {
        assert_eq!(mma_rate_metric(1), "mma_sync_f16_per_cycle_per_sm_w01");
        assert!(mma_rate_metric(2) < mma_rate_metric(16));
        assert_eq!(
            wgmma_rate_metric(64, 2),
            "wgmma_f16_n064_wg2_flop_per_cycle_per_sm"
        );
        assert!(wgmma_rate_metric(16, 1) < wgmma_rate_metric(256, 1));
        assert_eq!(
            wgmma_rate_curve(1),
            "wgmma_f16_flop_per_cycle_per_sm_vs_n_wg1"
        );
    }

    #[test]
    fn only_the_energy_metrics_get_the_looser_cov_limit() {
        for name in ENERGY_METRICS {
            assert!(name.starts_with("energy_"), "{name}");
            assert_eq!(cov_limit(name, 0.01), 0.05);
            // a run's limit looser than 5 % stays looser
            assert_eq!(cov_limit(name, 0.08), 0.08);
        }
        for name in [
            SM_CLOCK,
            L2_READ,
            DRAM_READ,
            POWER_LIMIT_W,
            "energy_unknown",
        ] {
            assert_eq!(cov_limit(name, 0.01), 0.01, "{name}");
        }
    }

    #[test]
    fn the_clock_used_is_capped_at_the_maximum_only() {
        assert_eq!(sm_clock_used(1995.0, Some(1980.0)), 1980.0);
        assert_eq!(sm_clock_used(1980.0, Some(1980.0)), 1980.0);
        assert_eq!(sm_clock_used(1350.0, Some(1980.0)), 1350.0);
        assert_eq!(sm_clock_used(1995.0, None), 1995.0);
        // a missing or nonsense maximum changes nothing
        assert_eq!(sm_clock_used(1995.0, Some(0.0)), 1995.0);
    }
}
