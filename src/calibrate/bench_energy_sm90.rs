//! The energy benchmark's Hopper path (`--only energy` on compute capability 9.0,
//! sm_90a): wgmma's cost per FLOP (`tc_wgmma_n256`, csrc/tc_wgmma.cu, its shared-memory
//! operand reads included) and TMA's per byte from L2 and from DRAM into shared memory, and
//! per byte of a box wholly outside its tensor, which the copy engine zero-fills
//! (`tma_stream`, csrc/tma_load.cu), over the same queued NVML windows as the rest of the
//! benchmark (`bench_energy.rs`, whose plumbing this module uses).

use super::*;

/// N of the wgmma load's m64nNk16 (`tc_wgmma_n256`): with 2 warpgroups per CTA the shape
/// `--only tc-rate` measures at Hopper's full 4096 dense FLOP per SM cycle.
pub const WGMMA_N: u32 = 256;
/// Warpgroups per CTA of the wgmma load (one CTA per SM).
pub const WGMMA_WARPGROUPS: u32 = 2;

/// Dense FLOP of one `tc_wgmma_n256` launch of `ctas` CTAs (2 warpgroups each), `iters`
/// rounds of 4 x m64n256k16 per warpgroup: counted as `--only tc-rate` counts them,
/// warpgroups x rounds x 4 x 2 x 64 x N x 16.
pub fn wgmma_flop_per_launch(ctas: u64, iters: u32) -> f64 {
    ctas as f64
        * f64::from(WGMMA_WARPGROUPS)
        * f64::from(iters)
        * f64::from(WGMMA_PER_ROUND)
        * wgmma_flop(WGMMA_N)
}

/// Shared memory the wgmma load needs per CTA (tc_wgmma.cu: the 1024-byte alignment, an
/// 8 KiB A tile per warpgroup, the N x 128-byte B tile).
pub fn wgmma_smem_bytes() -> u32 {
    1024 + WGMMA_WARPGROUPS * 8192 + WGMMA_N * 128
}

/// Bytes TMA brings into shared memory in one `tma_stream` launch: `ctas` x `per_cta`
/// boxes of 8 KiB.
pub fn tma_bytes_per_launch(ctas: u64, per_cta: u32) -> f64 {
    ctas as f64 * f64::from(per_cta) * BOX_BYTES as f64
}

/// Boxes per CTA of the DRAM TMA load: a whole number of `cta_stride`s (at least one).
/// CTA c reads boxes c x stride + j, so a box CTA c + 1 read at step j CTA c reads at step
/// j + stride, the whole tensor later; with launches of whole strides the same holds from
/// one launch to the next (a partial stride would re-read the last boxes of a launch
/// within a few steps, from L2).
pub fn tma_dram_per_cta(strides: u32, cta_stride: u32) -> u32 {
    strides.max(1).saturating_mul(cta_stride.max(1))
}

/// A lower bound on the bytes all CTAs read between two reads of one box of the DRAM
/// tensor (`boxes_total` boxes, `ctas` CTAs in step, `tma_dram_per_cta` boxes each,
/// launches back to back): (stride - boxes_total mod ctas) steps of `ctas` boxes, stride =
/// boxes_total / ctas, at least one step. ~1.9 GiB for the 2 GiB tensor on 132 SMs, far
/// above L2: every box comes from DRAM.
pub fn tma_dram_reread_bytes(boxes_total: u32, ctas: u32) -> u64 {
    let ctas = ctas.max(1);
    let stride = (boxes_total / ctas).max(1);
    let steps = stride.saturating_sub(boxes_total % ctas).max(1);
    u64::from(steps) * u64::from(ctas) * BOX_BYTES
}

impl Runner<'_> {
    /// `tc_wgmma_n256` of csrc/tc_wgmma.cu, 2 warpgroups, one CTA per SM (the tc-rate
    /// kernel at Hopper's full rate): both operands from shared memory through descriptors,
    /// so the figure holds the tensor cores' shared-memory reads.
    /// With `zero_a` the A tiles hold zeros (`energy_wgmma_zero_a_pj_per_flop`: a wgmma
    /// over rows of a tile past M, which TMA fills with zeros).
    pub(super) fn wgmma_cost(
        &mut self,
        res: &mut Results,
        static_w: f64,
        zero_a: bool,
    ) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let sms = gpu.props().sm_count;
        let kname = format!("tc_wgmma_n{WGMMA_N}");
        let k = self.kernel_sm90a("tc_wgmma", &kname)?;
        let threads = 128 * WGMMA_WARPGROUPS;
        let (smem, fit) = self.exclusive_smem(&k, threads, wgmma_smem_bytes())?;
        let dims = LaunchDims::linear(sms, threads).with_smem(smem);
        let seed: u32 = self.rng.random();
        let out = gpu.alloc_zeros::<f32>(threads as usize)?;
        let cycles = gpu.alloc_zeros::<u64>(sms as usize)?;
        let run = |iters: u32| {
            gpu.launch(
                &k,
                dims,
                KernelArgs::new()
                    .u32(iters)
                    .u32(seed)
                    .u32(u32::from(zero_a))
                    .buf(&out)
                    .buf(&cycles),
            )
        };
        let (iters, ms_one) = size_load(gpu, &run, 512, 1 << 24)?;
        let ran = gpu.download(&cycles)?.iter().filter(|&&c| c > 0).count();
        if ran != sms as usize {
            return Err(CalibError::Measurement(format!(
                "{kname}: {ran} of {sms} CTAs reported cycles"
            )));
        }
        let launch = || run(iters);
        let cost = Cost {
            name: if zero_a {
                r::ENERGY_WGMMA_ZERO_A_PJ_PER_FLOP
            } else {
                r::ENERGY_WGMMA_PJ_PER_FLOP
            },
            unit: "pJ/FLOP",
            op: "FLOP",
            ops_per_launch: wgmma_flop_per_launch(u64::from(sms), iters),
            static_w,
            beyond_l2: None,
            launch: &launch,
            ms_one,
        };
        let (m, _) = self.dynamic_cost(&cost)?;
        res.metrics.push(
            m.with("kernel", kname)
                .with(
                    "instruction",
                    format!("wgmma.mma_async.sync.aligned.m64n{WGMMA_N}k16.f32.f16.f16"),
                )
                .with("grid", json!([sms, threads]))
                .with("warpgroups_per_cta", WGMMA_WARPGROUPS)
                .with("wgmma_per_round", WGMMA_PER_ROUND)
                .with("flop_per_wgmma", wgmma_flop(WGMMA_N))
                .with("iters_per_launch", iters)
                .with("dynamic_smem_bytes", smem)
                .with("blocks_that_fit_per_sm", fit)
                .with(
                    "operands",
                    if zero_a {
                        "A 64x64 per warpgroup of zeros and B 256x64 random fp16 in shared memory, 128B swizzle, read by the wgmma through descriptors (as csrc/hopper_gemm.cu)"
                    } else {
                        "A 64x64 per warpgroup and B 256x64 random fp16 in shared memory, 128B swizzle, read by the wgmma through descriptors (as csrc/hopper_gemm.cu)"
                    },
                )
                .with(
                    "includes",
                    "the tensor cores' shared-memory reads of A and B, as the Hopper GEMM's consumers pay them",
                ),
        );
        Ok(())
    }

    /// `tma_stream` of csrc/tma_load.cu over the L2-resident tensor of `--only tma`, its
    /// DRAM tensor, or (`OutOfBounds`) the L2 tensor's boxes through a map of one box, so
    /// that every box but the first lies outside it and is zero-filled; one CTA per SM,
    /// `STAGES` boxes in flight each. Returns the metric's median.
    pub(super) fn tma_cost(
        &mut self,
        res: &mut Results,
        source: TmaSource,
        static_w: f64,
        l2_pj: f64,
    ) -> Result<f64, CalibError> {
        let dram = source == TmaSource::Dram;
        let gpu = self.gpu;
        let (sms, l2) = (gpu.props().sm_count, gpu.props().l2_bytes);
        let (free, _) = gpu.mem_info()?;
        let (small, large) = footprints(l2, free as u64).ok_or_else(|| {
            CalibError::Measurement(format!(
                "not enough free GPU memory for the TMA energy loads ({} free)",
                fmt_bytes(free as u64)
            ))
        })?;
        let fp = if dram { large } else { small };
        let plan = plan(fp).ok_or_else(|| {
            CalibError::Measurement(format!("TMA tensor of {fp} bytes: too many boxes"))
        })?;
        let buf = self.alloc_u32(plan.bytes)?;
        self.fill("energy_load", &buf)?;
        let shape = match source {
            // one box: box b at (b % boxes_x, b / boxes_x) lies outside unless b == 0
            TmaSource::OutOfBounds => MapShape {
                rows: u64::from(plan.shape.box_rows),
                cols: u64::from(plan.shape.box_cols),
                ..plan.shape
            },
            _ => plan.shape,
        };
        let map = encode_2d(buf.device_addr(), &shape, false)?;
        let k = self.kernel_sm90a("tma_load", "tma_stream")?;
        let ring = 1024 + STAGES * (BOX_BYTES as u32 + 8);
        let (smem, fit) = self.exclusive_smem(&k, 32, ring)?;
        let dims = LaunchDims::linear(sms, 32).with_smem(smem);
        let cycles = gpu.alloc_zeros::<u64>(sms as usize)?;
        let rec = gpu.alloc_zeros::<u64>(4)?;
        // L2: CTAs staggered over the small tensor, wrapping (as `--only tma`); DRAM: CTA c
        // starts at c x (boxes / SMs), whole strides per launch (tma_dram_per_cta)
        let cta_stride = (plan.boxes_total / sms).max(1);
        let per_cta_of = |n: u32| {
            if dram {
                tma_dram_per_cta(n, cta_stride)
            } else {
                n
            }
        };
        let run = |n: u32| {
            gpu.launch(
                &k,
                dims,
                KernelArgs::new()
                    .tensor_map(&map)
                    .u32(plan.boxes_x)
                    .u32(plan.boxes_total)
                    .u32(per_cta_of(n))
                    .u32(cta_stride)
                    .u32(STAGES)
                    .buf(&cycles)
                    .buf(&rec),
            )
        };
        let (n, ms_one) = if dram {
            size_load(gpu, &run, 1, 1 << 12)?
        } else {
            size_load(gpu, &run, 2048, 1 << 24)?
        };
        let per_cta = per_cta_of(n);
        let ran = gpu.download(&cycles)?.iter().filter(|&&c| c > 0).count();
        if ran != sms as usize {
            return Err(CalibError::Measurement(format!(
                "tma_stream: {ran} of {sms} CTAs reported cycles"
            )));
        }
        let launch = || run(n);
        let cost = Cost {
            name: match source {
                TmaSource::L2 => r::ENERGY_TMA_L2_PJ_PER_BYTE,
                TmaSource::Dram => r::ENERGY_TMA_DRAM_PJ_PER_BYTE,
                TmaSource::OutOfBounds => r::ENERGY_TMA_ZERO_PJ_PER_BYTE,
            },
            unit: "pJ/B",
            op: "byte",
            ops_per_launch: tma_bytes_per_launch(u64::from(sms), per_cta),
            static_w,
            beyond_l2: dram.then_some(l2_pj),
            launch: &launch,
            ms_one,
        };
        let (mut m, seen) = self.dynamic_cost(&cost)?;
        if dram {
            let path = path_pj(&seen, static_w, cost.ops_per_launch);
            m = m
                .with("tma_l2_pj_per_byte_subtracted", l2_pj)
                .with("dram_path_pj_per_byte", json!(path))
                .with(
                    "min_bytes_between_rereads",
                    tma_dram_reread_bytes(plan.boxes_total, sms),
                )
                .with(
                    "where",
                    "CTA c reads boxes c x (boxes / SMs) + j, whole strides per launch: a box is read again only after about the whole tensor (>= 8 x L2): misses",
                )
                .with(
                    "method",
                    "(P_window - energy_static_w) / (bytes per launch / ms per launch) - energy_tma_l2_pj_per_byte",
                );
        } else if source == TmaSource::OutOfBounds {
            m = m
                .with(
                    "where",
                    "the boxes of the L2 case through a tensor map of one box: every box but the first of each pass lies outside the tensor and is zero-filled, nothing read",
                )
                .with("boxes_inside_per_pass", 1)
                .with("boxes_per_pass", plan.boxes_total);
        } else {
            m = m.with(
                "where",
                "a tensor of a quarter of L2 (at most 16 MiB) read over and over: hits",
            );
        }
        let mhz = Self::rec_mhz(&gpu.download(&rec)?);
        let median = m.median();
        res.metrics.push(
            m.with("kernel", "tma_stream")
                .with(
                    "instruction",
                    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes, 64 x 128-byte boxes (8 KiB, 128B swizzle) into shared memory",
                )
                .with("footprint_bytes", plan.bytes)
                .with("box_bytes", BOX_BYTES)
                .with("boxes_in_flight_per_sm", STAGES)
                .with("boxes_per_cta", per_cta)
                .with("cta_stride_boxes", cta_stride)
                .with("grid", json!([sms, 32]))
                .with("dynamic_smem_bytes", smem)
                .with("blocks_that_fit_per_sm", fit)
                .with("sm_clock_during_mhz", json!(mhz))
                .with(
                    "includes",
                    if source == TmaSource::OutOfBounds {
                        "the TMA unit and the shared-memory writes of the zero-filled boxes, and the one thread per SM that issues and waits"
                    } else {
                        "the TMA unit, L2 -> SM transfer and the shared-memory writes of the boxes, and the one thread per SM that issues and waits"
                    },
                ),
        );
        Ok(median)
    }
}

/// Where `tma_stream`'s boxes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmaSource {
    /// A tensor of a quarter of L2, read over and over (hits).
    L2,
    /// A tensor of at least eight times L2 (misses).
    Dram,
    /// Outside the tensor: zero-filled by the copy engine, nothing read.
    OutOfBounds,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hopper_path_operations_per_launch() {
        // the progress bar: 10 from 8.0 (9 before: no tf32), 5 more on compute capability 9.0
        assert_eq!(metrics([7, 5], false), 9);
        assert_eq!(metrics([8, 0], false), 10);
        assert_eq!(metrics([9, 0], true), 15);
        // 132 CTAs x 2 warpgroups x 1000 rounds x 4 x m64n256k16 (524288 FLOP)
        assert_eq!(
            wgmma_flop_per_launch(132, 1000),
            132.0 * 2.0 * 1000.0 * 4.0 * 524_288.0
        );
        // the count of `--only tc-rate`: one CTA's FLOP over 1 cycle is its FLOP per cycle
        let per_cycle =
            crate::calibrate::bench::tc::wgmma_flop_per_cycle(256, 2, 1000, 1.0).unwrap();
        assert_eq!(wgmma_flop_per_launch(1, 1000), per_cycle);
        // at 4096 FLOP per SM cycle, 1980 MHz and 132 SMs: 2 ms is ~3870 rounds
        let rounds = 2e-3 * 1980e6 * 4096.0 / wgmma_flop_per_launch(1, 1);
        assert!((3800.0..3900.0).contains(&rounds), "{rounds}");
        // 1 KiB alignment + 2 x 8 KiB A + 256 x 128 B of B
        assert_eq!(wgmma_smem_bytes(), 1024 + 16384 + 32768);
        // 132 CTAs x 6000 boxes of 8 KiB
        assert_eq!(tma_bytes_per_launch(132, 6000), 132.0 * 6000.0 * 8192.0);
        assert_eq!(tma_bytes_per_launch(132, 0), 0.0);
    }

    /// Lockstep model of `tma_stream` (every CTA at step j at once), two launches back to
    /// back: the fewest steps between two reads of one box (None: no box read twice).
    fn min_reread_steps(total: u32, ctas: u32, stride: u32, per_cta: u32) -> Option<u64> {
        let mut last: Vec<Option<u64>> = vec![None; total as usize];
        let mut min: Option<u64> = None;
        for t in 0..2 * u64::from(per_cta) {
            let j = t % u64::from(per_cta);
            for c in 0..u64::from(ctas) {
                let b = ((c * u64::from(stride) + j) % u64::from(total)) as usize;
                if let Some(prev) = last[b] {
                    min = Some(min.map_or(t - prev, |m: u64| m.min(t - prev)));
                }
                last[b] = Some(t);
            }
        }
        min
    }

    #[test]
    fn the_dram_tma_load_reads_the_whole_tensor_between_rereads() {
        assert_eq!(tma_dram_per_cta(3, 1985), 5955);
        assert_eq!(tma_dram_per_cta(0, 1985), 1985);
        assert_eq!(tma_dram_per_cta(3, 0), 3);
        assert_eq!(tma_dram_per_cta(u32::MAX, 1985), u32::MAX);
        // H100: the 2 GiB tensor is 262144 boxes, 132 SMs, stride 1985; three strides per
        // launch: a box is read again only after 1985 - 262144 mod 132 = 1861 steps
        let (total, ctas) = (262_144u32, 132u32);
        let stride = total / ctas;
        assert_eq!(stride, 1985);
        let steps = min_reread_steps(total, ctas, stride, tma_dram_per_cta(3, stride)).unwrap();
        assert!(steps >= 1861, "{steps}");
        let bytes = tma_dram_reread_bytes(total, ctas);
        assert_eq!(bytes, 1861 * 132 * 8192);
        assert!(steps * 132 * BOX_BYTES >= bytes);
        // ~1.9 GiB between rereads: far beyond an H100's or H200's L2
        assert!(bytes > 8 * 60 * MIB, "{bytes}");
        // smaller shapes too, the bound holding in each
        for (total, ctas, strides) in [(1000u32, 7u32, 3u32), (4096, 132, 2), (5000, 114, 4)] {
            let stride = total / ctas;
            let steps =
                min_reread_steps(total, ctas, stride, tma_dram_per_cta(strides, stride)).unwrap();
            assert!(
                steps * u64::from(ctas) * BOX_BYTES >= tma_dram_reread_bytes(total, ctas),
                "{total} {ctas}: {steps}"
            );
        }
        // a partial stride re-reads the last boxes of a launch at the start of the next
        let steps = min_reread_steps(total, ctas, stride, 2 * stride + 1).unwrap();
        assert!(steps <= 2, "{steps}");
    }
}
