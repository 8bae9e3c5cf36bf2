//! TMA load latency and throughput (`--only tma`, compute capability 9.0; issue 14,
//! "Calibration drives the model": the load term of the throughput model in physical
//! units, from L2 and from DRAM).
//!
//! What it models: the Hopper GEMM's operand loads (csrc/hopper_gemm.cu), one
//! `cp.async.bulk.tensor.2d` of a 64-row x 128-byte box (64 x 64 fp16, 8 KiB, 128-byte
//! swizzle) into shared memory completing on an mbarrier. Latency: one thread issues one
//! box at a time and clock64 spans issue to the barrier's completion (L2-resident tensor,
//! warmed by the same SM; and a tensor many times L2 with the L2 flushed, every box new).
//! Throughput: every SM keeps `STAGES` boxes in flight in a ring (bytes per SM cycle from
//! each CTA's clock64, GB/s of the whole GPU from CUDA events), L2-resident and from DRAM.
//! Sources: the CUDA C++ Programming Guide, "Tensor Memory Accelerator" and "Asynchronous
//! Barrier"; the PTX ISA, `cp.async.bulk.tensor` and `mbarrier`; the CUDA Driver API,
//! `cuTensorMapEncodeTiled` (docs/calibrate.md, "TMA load latency and throughput").

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

use super::tc::sm90a_skip_reason;
use super::{fmt_bytes, pow2_floor, r, CalibError, KernelArgs, LaunchDims, Results, Runner, Skip};
use super::{GIB, MIB};
use crate::gpu::tma::{encode_2d, MapShape};

/// Rows of a box.
pub const BOX_ROWS: u32 = 64;
/// fp16 elements of a box row (128 bytes: the 128-byte swizzle).
pub const BOX_COLS: u32 = 64;
/// Bytes of one box.
pub const BOX_BYTES: u64 = (BOX_ROWS * BOX_COLS * 2) as u64;
/// Boxes in flight per SM in the throughput kernel.
pub const STAGES: u32 = 8;
/// Boxes across a row of the tensors (8 KiB rows) when the tensor is large enough.
const MAX_BOXES_X: u64 = 64;

/// A 2-D fp16 tensor cut into whole boxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub bytes: u64,
    pub boxes_x: u32,
    pub boxes_total: u32,
    pub shape: MapShape,
}

/// The tensor of `bytes` (rounded down to whole boxes, at least one): rows of up to 64
/// boxes, as many box rows as needed. None beyond 2^32 boxes.
pub fn plan(bytes: u64) -> Option<Plan> {
    let boxes = (bytes / BOX_BYTES).max(1);
    let boxes_x = MAX_BOXES_X.min(pow2_floor(boxes));
    let boxes_y = boxes / boxes_x;
    let total = boxes_x * boxes_y;
    let shape = MapShape {
        rows: boxes_y * u64::from(BOX_ROWS),
        cols: boxes_x * u64::from(BOX_COLS),
        box_rows: BOX_ROWS,
        box_cols: BOX_COLS,
    };
    Some(Plan {
        bytes: total * BOX_BYTES,
        boxes_x: u32::try_from(boxes_x).ok()?,
        boxes_total: u32::try_from(total).ok()?,
        shape,
    })
}

/// The smallest stride >= `hint` (taken mod `total`, at least 1) coprime with `total`:
/// start + i x stride then visits every box once per `total` steps.
pub fn coprime_stride(total: u64, hint: u64) -> u64 {
    fn gcd(mut a: u64, mut b: u64) -> u64 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    if total <= 1 {
        return 1;
    }
    let mut s = (hint % total).max(1);
    while gcd(s, total) != 1 {
        s += 1;
    }
    s
}

/// Bytes per cycle from a byte count and cycles (None when the cycles are not positive).
pub fn bytes_per_cycle(bytes: f64, cycles: f64) -> Option<f64> {
    (cycles > 0.0).then(|| bytes / cycles)
}

/// GB/s from bytes and milliseconds.
pub fn gbps(bytes: f64, ms: f64) -> f64 {
    bytes / (ms * 1e-3) / 1e9
}

/// The footprints: the L2-resident tensor (a quarter of L2, a power of two, 1 to 16 MiB)
/// and the DRAM tensor (8 x L2 and at least 2 GiB, a power of two; 1 GiB when less than
/// 4 GiB of memory is free; None when not even that fits).
pub fn footprints(l2_bytes: u64, free_bytes: u64) -> Option<(u64, u64)> {
    let small = pow2_floor(l2_bytes / 4).clamp(MIB, 16 * MIB);
    let mut large = (8 * l2_bytes).max(2 * GIB).next_power_of_two();
    let flush = (2 * l2_bytes).next_multiple_of(MIB);
    let fits = |l: u64| (small + l + flush) as f64 <= 0.7 * free_bytes as f64;
    if !fits(large) {
        large = GIB.max(4 * l2_bytes.next_power_of_two());
    }
    fits(large).then_some((small, large))
}

impl Runner<'_> {
    /// csrc/tma_load.cu: latency and throughput of TMA box loads, L2-resident and DRAM.
    pub fn tma(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let p = self.gpu.props().clone();
        if let Some(why) = sm90a_skip_reason(p.compute_capability) {
            res.skipped.push(Skip {
                what: "tma (TMA load latency and throughput)".into(),
                why,
            });
            return Ok(());
        }
        let gpu = self.gpu;
        let sms = p.sm_count;
        let quick = self.cfg.quick;
        let (free, _) = gpu.mem_info()?;
        let (small_b, large_b) = footprints(p.l2_bytes, free as u64).ok_or_else(|| {
            CalibError::Measurement(format!(
                "not enough free GPU memory for the TMA benchmark ({} free)",
                fmt_bytes(free as u64)
            ))
        })?;
        let small = plan(small_b).expect("small tensor");
        let large = plan(large_b).ok_or_else(|| {
            CalibError::Measurement(format!("TMA tensor of {large_b} bytes: too many boxes"))
        })?;
        let lat = self.kernel_sm90a("tma_load", "tma_latency")?;
        let stream = self.kernel_sm90a("tma_load", "tma_stream")?;
        let small_buf = self.alloc_u32(small.bytes)?;
        let large_buf = self.alloc_u32(large.bytes)?;
        let flush_bytes = (2 * p.l2_bytes).next_multiple_of(MIB);
        let flush = self.alloc_u32(flush_bytes)?;
        for b in [&small_buf, &large_buf, &flush] {
            self.fill("dram_bw", b)?;
        }
        let small_map = encode_2d(small_buf.device_addr(), &small.shape, false)?;
        let large_map = encode_2d(large_buf.device_addr(), &large.shape, false)?;
        // the L2 flush: every SM reads 2 x L2 of another buffer (csrc/dram_bw.cu)
        let read = self.kernel("dram_bw", "dram_read")?;
        let read_dims = LaunchDims::linear(self.blocks_for(&read, 512)?, 512);
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let clk_sink = gpu.alloc_zeros::<u64>(4)?;
        let flush_l2 = || {
            gpu.launch(
                &read,
                read_dims,
                KernelArgs::new()
                    .buf(&flush)
                    .u64(flush_bytes / 16)
                    .buf(&sink)
                    .buf(&clk_sink),
            )
        };
        let policy = self.cfg.policy;

        // Latency: one thread on the lowest %smid, one box at a time.
        let target_smid = self.lowest_smid()?;
        let lat_smem = 1024 + BOX_BYTES as u32 + 64;
        lat.set_max_dynamic_smem(lat_smem)?;
        let lat_dims = LaunchDims::linear(sms * 2, 32).with_smem(lat_smem);
        let mut out = gpu.alloc_zeros::<u64>(5)?;
        let mut claim = gpu.alloc_zeros::<u32>(1)?;
        let mut rng = StdRng::seed_from_u64(self.rng.random());
        for (name, plan, map, from_dram) in [
            (r::TMA_LATENCY_L2, small, &small_map, false),
            (r::TMA_LATENCY_DRAM, large, &large_map, true),
        ] {
            let total = u64::from(plan.boxes_total);
            // L2: one warming pass over every box from the same SM, then up to 1024 boxes;
            // DRAM: two uncounted boxes (the tensor map's first use), then fresh boxes
            let (warm, count) = match (from_dram, quick) {
                (false, q) => (
                    plan.boxes_total,
                    plan.boxes_total.min(if q { 256 } else { 1024 }),
                ),
                (true, q) => (2, if q { 64 } else { 512 }),
            };
            let stride = coprime_stride(total, if from_dram { 40_503 } else { 17 }) as u32;
            let mut smids = Vec::new();
            let mut extremes = (f64::MAX, 0f64);
            let m = {
                let (out, claim, smids, extremes) =
                    (&mut out, &mut claim, &mut smids, &mut extremes);
                self.sampled(name, "cycles", policy, |_| {
                    if from_dram {
                        flush_l2()?;
                    }
                    let start = rng.random_range(0..total) as u32;
                    gpu.zero(out)?;
                    gpu.zero(claim)?;
                    gpu.launch(
                        &lat,
                        lat_dims,
                        KernelArgs::new()
                            .tensor_map(map)
                            .u32(plan.boxes_x)
                            .u32(plan.boxes_total)
                            .u32(start)
                            .u32(stride)
                            .u32(warm)
                            .u32(count)
                            .u32(target_smid)
                            .buf(&*claim)
                            .buf(&*out),
                    )?;
                    let o = gpu.download(&*out)?;
                    if o[3] == 0 {
                        return Err(CalibError::Measurement(format!(
                            "tma_latency: no block landed on SM {target_smid}"
                        )));
                    }
                    smids.push(o[4]);
                    let n = o[3] as f64;
                    extremes.0 = extremes.0.min(o[1] as f64);
                    extremes.1 = extremes.1.max(o[2] as f64);
                    Ok(o[0] as f64 / n)
                })?
            };
            res.metrics.push(
                m.with("footprint_bytes", plan.bytes)
                    .with("box", json!([BOX_ROWS, BOX_COLS * 2]))
                    .with("box_bytes", BOX_BYTES)
                    .with("swizzle", "128B")
                    .with("loads_per_sample", count)
                    .with("uncounted_loads", warm)
                    .with("stride_boxes", stride)
                    .with("min_cycles_seen", extremes.0)
                    .with("max_cycles_seen", extremes.1)
                    .with("smid", target_smid)
                    .with(
                        "order",
                        if from_dram {
                            "L2 flushed (2 x L2 read) before every sample; boxes start + i x stride over the whole tensor, none read twice"
                        } else {
                            "every box loaded once by the same SM (uncounted), then loaded again"
                        },
                    )
                    .with(
                        "method",
                        "one thread, one load in flight: clock64 before mbarrier.arrive.expect_tx + cp.async.bulk.tensor.2d to after the barrier's wait; mean over the sample's loads",
                    ),
            );
        }

        // Throughput: every SM, STAGES boxes in flight.
        let ring = 1024 + STAGES * (BOX_BYTES as u32 + 8);
        let (stream_smem, fit) = self.exclusive_smem(&stream, 32, ring)?;
        let stream_dims = LaunchDims::linear(sms, 32).with_smem(stream_smem);
        let mut cycles = gpu.alloc_zeros::<u64>(sms as usize)?;
        let rec = gpu.alloc_zeros::<u64>(4)?;
        for (bpc_name, gbps_name, plan, map, from_dram) in [
            (
                r::TMA_L2_BYTES_PER_CYCLE,
                r::TMA_L2_GBPS,
                small,
                &small_map,
                false,
            ),
            (
                r::TMA_DRAM_BYTES_PER_CYCLE,
                r::TMA_DRAM_GBPS,
                large,
                &large_map,
                true,
            ),
        ] {
            // L2: 8192 boxes per CTA (64 MiB, ~1 ms for the GPU), wrapping over the small
            // tensor; DRAM: the whole large tensor once, each box by one CTA
            let per_cta = if from_dram {
                (plan.boxes_total / sms).max(STAGES)
            } else if quick {
                2048
            } else {
                8192
            };
            let cta_stride = if from_dram {
                per_cta
            } else {
                (plan.boxes_total / sms).max(1)
            };
            let bytes_per_cta = f64::from(per_cta) * BOX_BYTES as f64;
            let launch = |cycles: &crate::gpu::DeviceBuffer<u64>| {
                gpu.launch(
                    &stream,
                    stream_dims,
                    KernelArgs::new()
                        .tensor_map(map)
                        .u32(plan.boxes_x)
                        .u32(plan.boxes_total)
                        .u32(per_cta)
                        .u32(cta_stride)
                        .u32(STAGES)
                        .buf(cycles)
                        .buf(&rec),
                )
            };
            let m = {
                let cycles = &mut cycles;
                self.sampled(bpc_name, "B/cycle/SM", policy, |_| {
                    if from_dram {
                        flush_l2()?;
                    }
                    gpu.zero(cycles)?;
                    launch(cycles)?;
                    let c = gpu.download(&*cycles)?;
                    let per: Vec<f64> = c
                        .iter()
                        .filter(|&&x| x > 0)
                        .filter_map(|&x| bytes_per_cycle(bytes_per_cta, x as f64))
                        .collect();
                    if per.len() != sms as usize {
                        return Err(CalibError::Measurement(format!(
                            "tma_stream: {} of {sms} CTAs reported cycles",
                            per.len()
                        )));
                    }
                    Ok(crate::stats::median(&per))
                })?
            };
            let mhz = Self::rec_mhz(&gpu.download(&rec)?);
            let common = |m: super::Metric| {
                m.with("footprint_bytes", plan.bytes)
                    .with("box_bytes", BOX_BYTES)
                    .with("boxes_in_flight_per_sm", STAGES)
                    .with("boxes_per_cta", per_cta)
                    .with("cta_stride_boxes", cta_stride)
                    .with("grid", json!([sms, 32]))
                    .with("dynamic_smem_bytes", stream_smem)
                    .with("blocks_that_fit_per_sm", fit)
                    .with("sm_clock_during_mhz", json!(mhz))
                    .with(
                        "source",
                        if from_dram {
                            "DRAM: L2 flushed before every sample, each box read once"
                        } else {
                            "L2: a tensor of a quarter of L2, read over and over"
                        },
                    )
            };
            res.metrics.push(common(m).with(
                "method",
                "one CTA per SM, one thread keeps the ring full; per CTA bytes / clock64 cycles from the first issue to the last completion; median over CTAs",
            ));
            let total_bytes = f64::from(sms) * bytes_per_cta;
            let m = {
                let cycles = &mut cycles;
                self.sampled(gbps_name, "GB/s", policy, |_| {
                    if from_dram {
                        flush_l2()?;
                    }
                    let ms = gpu.time_ms(|| launch(&*cycles))?;
                    Ok(gbps(total_bytes, ms))
                })?
            };
            res.metrics.push(common(m).with(
                "method",
                "all CTAs' bytes over the CUDA-event time of one launch",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_whole_boxes_in_rows_of_64() {
        let p = plan(8 * MIB).unwrap();
        assert_eq!(p.boxes_total, 1024);
        assert_eq!(p.boxes_x, 64);
        assert_eq!(p.bytes, 8 * MIB);
        assert_eq!(p.shape.cols, 64 * 64);
        assert_eq!(p.shape.rows, 16 * 64);
        assert_eq!(p.shape.violation(), None);
        // 2 GiB: 262144 boxes of 8 KiB
        let p = plan(2 * GIB).unwrap();
        assert_eq!(p.boxes_total, 262_144);
        assert_eq!(p.shape.rows * p.shape.cols * 2, 2 * GIB);
        // tiny: one box wide
        let p = plan(3 * BOX_BYTES).unwrap();
        assert_eq!((p.boxes_x, p.boxes_total), (2, 2));
        assert_eq!(p.shape.violation(), None);
        let p = plan(1).unwrap();
        assert_eq!((p.boxes_x, p.boxes_total, p.bytes), (1, 1, BOX_BYTES));
        // beyond 2^32 boxes
        assert!(plan(BOX_BYTES << 33).is_none());
    }

    #[test]
    fn strides_visit_every_box() {
        for (total, hint) in [
            (1024u64, 17u64),
            (262_144, 40_503),
            (1000, 40_503),
            (12, 4),
            (1, 9),
        ] {
            let s = coprime_stride(total, hint);
            let mut seen = vec![false; total as usize];
            for i in 0..total {
                seen[((7 + i * s) % total) as usize] = true;
            }
            assert!(seen.iter().all(|&x| x), "total {total} stride {s}");
        }
        assert_eq!(coprime_stride(1024, 17), 17);
        assert_eq!(coprime_stride(1000, 40_503), 503);
        assert_eq!(coprime_stride(12, 4), 5);
        assert_eq!(coprime_stride(12, 24), 1);
    }

    #[test]
    fn units() {
        assert_eq!(bytes_per_cycle(8192.0, 256.0), Some(32.0));
        assert_eq!(bytes_per_cycle(8192.0, 0.0), None);
        // 132 SMs x 8192 boxes x 8 KiB in 1 ms = 8.86 TB/s
        let g = gbps(132.0 * 8192.0 * 8192.0, 1.0);
        assert!((g - 8858.37).abs() < 0.01, "{g}");
    }

    #[test]
    fn footprints_follow_l2_and_memory() {
        // H100 SXM: 50 MiB L2, 80 GB
        let (s, l) = footprints(50 * MIB, 79 * GIB).unwrap();
        assert_eq!((s, l), (8 * MIB, 2 * GIB));
        // a small L2 still gets 1 MiB; a huge one at most 16 MiB
        assert_eq!(footprints(2 * MIB, 8 * GIB).unwrap().0, MIB);
        assert_eq!(
            footprints(256 * MIB, 64 * GIB).unwrap(),
            (16 * MIB, 2 * GIB)
        );
        // little free memory: 1 GiB, then nothing
        assert_eq!(footprints(50 * MIB, 2 * GIB).unwrap().1, GIB);
        assert_eq!(footprints(50 * MIB, GIB), None);
    }
}
