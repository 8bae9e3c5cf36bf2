//! Load latency under load (`origami-calibrate --only latency-loaded`, opt-in; issue 14):
//! the pointer chase of `latency` while every other block of a full grid streams memory,
//! as one of a GEMM's pipelined loads waits while all SMs load their tiles. The unloaded
//! chase (`dram_latency_page_local_cycles`, 693 cycles on the H100) is the latency of an
//! idle memory system; the throughput model's round trip of a stage (`tp_load_latency_cycles`)
//! is paid under a GEMM's load, and the fitted tiers took 1100-1200 real cycles for it
//! (docs/calibration-only.md). This measures it.
//!
//! `csrc/pointer_chase.cu`'s `chase_loaded`: the chain and its footprints are `latency`'s
//! (an L2-resident cycle warmed by the chasing SM; random lines inside 2 MiB pages over
//! max(8 x L2, 1 GiB)); the streamers read an L2-resident buffer (half of L2, for the L2
//! chase) or one of max(8 x L2, 1 GiB) (for the DRAM chase) with 4 loads in flight per
//! thread. A sample is kept only when the chase ended before the first streamer did; the
//! streamers' passes double until it does.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::bench::{build_chain, pow2_floor, Runner};
use super::results::Results;
use super::CalibError;
use crate::gpu::{KernelArgs, LaunchDims};

/// L2 hit latency while every other SM streams from L2 (SM cycles).
pub const L2_LOADED: &str = "l2_hit_latency_loaded_cycles";
/// DRAM latency (page-local chase) while every other SM streams from DRAM (SM cycles).
pub const DRAM_LOADED: &str = "dram_latency_loaded_cycles";
/// Cycles the chasing thread waits before its first load, so that the streamers run.
const DELAY_CYCLES: u64 = 20_000;
/// Doublings of the streamers' passes before a sample is given up.
const MAX_DOUBLINGS: u32 = 14;
/// Threads per block (the kernel's launch bound).
const THREADS: u32 = 512;

/// Whether a sample is valid: the chase (ending at `chase_end_ns`) finished before the
/// first streamer (`first_stream_end_ns`).
pub fn chase_inside_load(chase_end_ns: u64, first_stream_end_ns: u64) -> bool {
    chase_end_ns > 0 && chase_end_ns < first_stream_end_ns
}

impl Runner<'_> {
    /// The L2 and DRAM chases under load (see the module header).
    pub fn latency_loaded(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let p = gpu.props().clone();
        let build = self.kernel("pointer_chase", "chase_build")?;
        let touch = self.kernel("pointer_chase", "chase_touch")?;
        let touch_sm = self.kernel("pointer_chase", "chase_touch_sm")?;
        let loaded = self.kernel("pointer_chase", "chase_loaded")?;
        let l2_fp = pow2_floor(p.l2_bytes / 8).max(256 * 1024);
        let l2_stream = pow2_floor(p.l2_bytes / 2).max(1 << 20);
        let dram_fp = ((8 * p.l2_bytes).max(1 << 30)).next_power_of_two();
        let (free, _) = gpu.mem_info()?;
        if (2 * dram_fp + l2_stream) as f64 > 0.8 * free as f64 {
            return Err(CalibError::Measurement(format!(
                "not enough free GPU memory for the loaded chase (needs {} MiB)",
                (2 * dram_fp + l2_stream) >> 20
            )));
        }
        let chain = self.alloc_u32(dram_fp)?;
        let dram_stream = self.alloc_u32(dram_fp)?;
        let l2_buf = self.alloc_u32(l2_stream)?;
        self.fill("pointer_chase", &dram_stream)?;
        self.fill("pointer_chase", &l2_buf)?;
        let mut out = gpu.alloc_zeros::<u64>(4)?;
        let mut claim = gpu.alloc_zeros::<u32>(1)?;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let sms = p.sm_count;
        let target_smid = self.lowest_smid()?;
        let blocks = self.blocks_for(&loaded, THREADS)?;
        let quick = self.cfg.quick;
        let policy = self.cfg.policy;
        // (metric, chase footprint, bits_local, steps, warm, L2 chase, stream buffer, its bytes, first passes)
        let variants = [
            (
                L2_LOADED,
                l2_fp,
                None,
                if quick { 512 } else { 2048 },
                0u32,
                true,
                &l2_buf,
                l2_stream,
                64u32,
            ),
            (
                DRAM_LOADED,
                dram_fp,
                Some(14u32),
                if quick { 256 } else { 1024 },
                64,
                false,
                &dram_stream,
                dram_fp,
                2,
            ),
        ];
        for (name, fp, local, steps, warm, l2_chase, stream, stream_bytes, first_passes) in variants
        {
            let lines = fp / 128;
            let bits_total = lines.trailing_zeros();
            let bits_local = local.unwrap_or(bits_total).min(bits_total);
            let mut rng = StdRng::seed_from_u64(self.rng.random());
            let mut passes = first_passes;
            let mut retries = 0u32;
            let m = self.sampled(name, "cycles", policy, |_| {
                build_chain(gpu, &build, &chain, (bits_total, bits_local), &mut rng)?;
                if l2_chase {
                    // the stream buffer into L2, then the chain from the chasing SM
                    gpu.launch(
                        &touch,
                        LaunchDims::linear(sms * 4, 256),
                        KernelArgs::new()
                            .buf(stream)
                            .u64(stream_bytes / 16)
                            .buf(&sink),
                    )?;
                    gpu.zero(&mut claim)?;
                    gpu.launch(
                        &touch_sm,
                        LaunchDims::linear(sms * 2, 1024),
                        KernelArgs::new()
                            .buf(&chain)
                            .u64(fp / 16)
                            .u32(target_smid)
                            .buf(&claim)
                            .buf(&sink),
                    )?;
                }
                let start = rng.random_range(0..lines) as u32 * 32;
                for _ in 0..=MAX_DOUBLINGS {
                    gpu.zero(&mut out)?;
                    gpu.zero(&mut claim)?;
                    let end = gpu.upload(&[u64::MAX])?;
                    gpu.launch(
                        &loaded,
                        LaunchDims::linear(blocks, THREADS),
                        KernelArgs::new()
                            .buf(&chain)
                            .u32(start)
                            .u32(warm)
                            .u32(steps)
                            .buf(&out)
                            .u32(target_smid)
                            .buf(&claim)
                            .u64(DELAY_CYCLES)
                            .buf(stream)
                            .u64(stream_bytes / 16 - 1)
                            .u32(passes)
                            .buf(&end)
                            .buf(&sink),
                    )?;
                    let o = gpu.download(&out)?;
                    let first_end = gpu.download(&end)?[0];
                    if o[0] == 0 {
                        return Err(CalibError::Measurement(format!(
                            "loaded pointer chase: no block landed on SM {target_smid}"
                        )));
                    }
                    if chase_inside_load(o[3], first_end) {
                        return Ok(o[0] as f64 / f64::from(steps));
                    }
                    passes = passes.saturating_mul(2);
                    retries += 1;
                }
                Err(CalibError::Measurement(format!(
                    "{name}: the streamers finished before the chase even at {passes} passes"
                )))
            })?;
            res.metrics.push(
                m.with("chase_footprint_bytes", fp)
                    .with("stream_bytes", stream_bytes)
                    .with("stream_passes", passes)
                    .with("retries_with_more_passes", retries)
                    .with("steps", steps)
                    .with("grid", serde_json::json!([blocks, THREADS]))
                    .with(
                        "load",
                        "every other block streams its buffer with 4 ld.global.cg v4 in flight per thread",
                    )
                    .with("smid", target_smid),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_counts_only_inside_the_load() {
        assert!(chase_inside_load(100, 200));
        assert!(!chase_inside_load(200, 200));
        assert!(!chase_inside_load(300, 200));
        // no chase ran, or no streamer ended (u64::MAX): the first is no sample
        assert!(!chase_inside_load(0, u64::MAX));
        assert!(chase_inside_load(5, u64::MAX));
    }
}
