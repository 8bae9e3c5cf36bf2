//! DRAM read bandwidth against the length of the rows read (`origami-calibrate --only
//! dram-rows`, opt-in; issue 14): the `l2-rows` question for operands that stream from
//! DRAM, as a decode GEMM's weights do. A tile of BLOCK_K = 16 fp16 columns asks DRAM for
//! 32 bytes of each of its rows per K iteration and for the next 32 one iteration later.
//!
//! `csrc/dram_bw.cu`'s `dram_read_rows`: a footprint far larger than L2 (at least 8 x L2 and
//! 1 GiB) cut into bands of 64 rows of an 8 KiB pitch (a 4096-column fp16 row); one block
//! walks a band as a K loop walks its tile: step s reads the s-th segment of 32, 64, 128 or
//! 256 bytes of each of the band's rows, the steps in order, four loads in flight per
//! thread; the contiguous reference reads each band in order. Metrics
//! `dram_read_gbps_rows_<bytes>b` and `dram_read_gbps_rows_contiguous`; curve
//! `dram_read_gbps_vs_row_bytes` whose fit carries each segment's efficiency over the
//! contiguous rate (`efficiency_<bytes>b`, [`super::bench_l2_rows::row_efficiencies`]).

use serde_json::json;

use super::bench::Runner;
use super::bench_l2_rows::{log2, row_cases, rows_metric, with_row_case, RowRates, PITCH_BYTES};
use super::results::Results;
use super::CalibError;
use crate::gpu::{KernelArgs, LaunchDims};

/// The curve's name (the calibration-only tier reads it: one owner, `hw::calibrated`).
pub use crate::hw::calibrated::DRAM_ROWS_CURVE;
/// Threads per block.
const THREADS: u32 = 512;
/// Rows of a band (a tile's BLOCK_M or BLOCK_N).
pub const BAND_ROWS: u64 = 64;
/// Back-to-back launches timed per sample.
const LAUNCHES: usize = 4;

/// The metrics' prefix ([`rows_metric`]): `dram_read_gbps_rows_<bytes>b` and
/// `..._contiguous`.
pub const DRAM_ROWS_METRIC: &str = "dram_read_gbps_rows";

/// The footprint read: the power of two at or above 8 x L2, at least 1 GiB.
pub fn footprint_bytes(l2_bytes: u64) -> u64 {
    (8 * l2_bytes).max(1 << 30).next_power_of_two()
}

impl Runner<'_> {
    /// csrc/dram_bw.cu `dram_read_rows`: the DRAM read bandwidth of bands walked in
    /// segments of [`SEGMENT_BYTES`] along rows a [`PITCH_BYTES`] pitch apart, and in
    /// order; the efficiencies in the curve's fit.
    pub fn dram_rows(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let footprint = footprint_bytes(gpu.props().l2_bytes);
        let (free, _) = gpu.mem_info()?;
        if footprint as f64 > 0.8 * free as f64 {
            return Err(CalibError::Measurement(format!(
                "dram-rows needs {footprint} bytes of GPU memory, {free} free"
            )));
        }
        let k = self.kernel("dram_bw", "dram_read_rows")?;
        let blocks = self.blocks_for(&k, THREADS)?;
        let buf = self.alloc_u32(footprint)?;
        self.fill("dram_bw", &buf)?;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let dims = LaunchDims::linear(blocks, THREADS);
        let pitch_shift = log2(PITCH_BYTES / 16);
        let band_shift = log2(BAND_ROWS);
        let n_bands = (footprint / (BAND_ROWS * PITCH_BYTES)) as u32;
        let bytes = LAUNCHES as f64 * footprint as f64;
        let mut rates = RowRates::default();
        for seg in row_cases() {
            let seg_shift = seg.map_or(pitch_shift, |b| log2(b / 16));
            let launch = || {
                gpu.launch(
                    &k,
                    dims,
                    KernelArgs::new()
                        .buf(&buf)
                        .u32(n_bands)
                        .u32(band_shift)
                        .u32(seg_shift)
                        .u32(pitch_shift)
                        .buf(&sink),
                )
            };
            launch()?;
            let policy = self.cfg.policy;
            let name = rows_metric(DRAM_ROWS_METRIC, seg);
            let m = self.sampled(&name, "GB/s", policy, |_| {
                let ms = gpu.time_ms(|| {
                    for _ in 0..LAUNCHES {
                        launch()?;
                    }
                    Ok(())
                })?;
                Ok(bytes / (ms * 1e-3) / 1e9)
            })?;
            let m = with_row_case(m, seg)
                .with("band_rows", BAND_ROWS)
                .with("footprint_bytes", footprint)
                .with("launches_per_sample", LAUNCHES)
                .with("grid", json!([blocks, THREADS]))
                .with("loads_in_flight_per_thread", 4);
            rates.push(seg, m.median());
            res.metrics.push(m);
        }
        let curve = rates.curve(
            "DRAM",
            "dram_read_gbps",
            &[
                ("band_rows", BAND_ROWS as f64),
                ("footprint_bytes", footprint as f64),
            ],
        )?;
        res.curves.insert(DRAM_ROWS_CURVE.into(), curve);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footprint_is_far_larger_than_l2_and_whole_bands() {
        assert_eq!(footprint_bytes(50 << 20), 1 << 30);
        assert_eq!(footprint_bytes(200 << 20), 2 << 30);
        let f = footprint_bytes(60 << 20);
        assert_eq!(f % (BAND_ROWS * PITCH_BYTES), 0);
        // a band's vectors are a whole number of the kernel's block-wide unrolled steps
        assert_eq!((BAND_ROWS * PITCH_BYTES / 16) % (u64::from(THREADS) * 4), 0);
        assert_eq!(
            rows_metric(DRAM_ROWS_METRIC, Some(32)),
            "dram_read_gbps_rows_032b"
        );
        assert_eq!(
            rows_metric(DRAM_ROWS_METRIC, None),
            "dram_read_gbps_rows_contiguous"
        );
    }
}
