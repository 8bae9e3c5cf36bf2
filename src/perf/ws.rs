//! The warp-specialized persistent GEMM model (its "WSPersistentGEMM"): the kernel is a
//! prologue (setup overhead, then the first load the MMA waits for) followed by waves of
//! output tiles, one tile per SM per wave, in which the DMA (TMA loads), MATH (MMA) and
//! EPILOG (constant plus the output write) warps overlap; a wave costs the largest of the
//! three, and the last wave's epilogue is exposed:
//!
//! runtime = overhead + first DMA + sum over waves of max(DMA, MATH, EPILOG)
//!           + EPILOG of the last wave.
//!
//! DMA bytes per tile include block-scale factors and are divided by the cluster multicast
//! (A by cluster n, B by cluster m). The last wave may be partial (wave quantization). A
//! 2-CTA MMA pair counts as 2x the per-CTA M for the tensor core's full-rate condition. L2:
//! none (the published model as printed), its global hit-rate knob, or the rasterization
//! reuse model of `l2.rs`.

use serde::Serialize;

use super::gpu::GpuPerf;
use super::l2::{best_raster, wave_traffic, Raster, RasterInput, WaveTraffic, Waves, MAX_SWIZZLE};
use super::problem::{operand_bytes, scale_bytes, Pair, Problem};
use super::PerfError;

/// How the model treats L2.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum L2Mode {
    /// Every load goes to DRAM (the warp-specialized persistent GEMM model as printed).
    None,
    /// A global hit rate applied to every load (the published model's knob).
    HitRate(f64),
    /// Reuse from rasterization and resident tiles; `None` picks the better order.
    Raster { order: Option<Raster>, swizzle: u64 },
}

impl L2Mode {
    pub fn name(&self) -> String {
        match self {
            L2Mode::None => "none".into(),
            L2Mode::HitRate(h) => format!("hit-rate {h}"),
            L2Mode::Raster { order, swizzle } => format!(
                "raster {} swizzle {swizzle}",
                order.map(|o| o.name()).unwrap_or("auto")
            ),
        }
    }
}

/// Options of one prediction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WsOptions {
    pub tile: Pair,
    pub cluster: Pair,
    /// Force 2-CTA MMA on or off; `None`: on when the GPU has it and cluster m is even.
    pub two_cta: Option<bool>,
    pub l2: L2Mode,
}

/// Times of one wave, microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Phase {
    pub tiles: u64,
    pub dma_us: f64,
    pub math_us: f64,
    pub epilogue_us: f64,
}

impl Phase {
    pub fn max_us(&self) -> f64 {
        self.dma_us.max(self.math_us).max(self.epilogue_us)
    }
    pub fn limiter(&self) -> &'static str {
        if self.dma_us >= self.math_us && self.dma_us >= self.epilogue_us {
            "DMA"
        } else if self.math_us >= self.epilogue_us {
            "MATH"
        } else {
            "EPILOG"
        }
    }
}

/// The per-phase breakdown of a prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WsBreakdown {
    pub tiles: u64,
    pub waves: u64,
    pub concurrent_tiles: u64,
    pub two_cta: bool,
    pub mma_efficiency: f64,
    pub l2_mode: String,
    pub raster: Option<&'static str>,
    /// Bytes one CTA loads for its tile (after multicast), before any L2 effect.
    pub dma_bytes_per_tile: f64,
    /// DRAM load bytes of the whole kernel under the L2 mode.
    pub dram_load_bytes: f64,
    /// 1 - DRAM load bytes / bytes the CTAs load (the reuse the L2 mode gives).
    pub l2_hit_rate: f64,
    pub overhead_us: f64,
    pub first_dma_us: f64,
    /// A full wave (the mean over full waves when their DMA differs).
    pub mainloop: Phase,
    pub last_wave: Phase,
    /// Sum over all waves but the last of max(DMA, MATH, EPILOG).
    pub mainloop_us: f64,
    pub predicted_us: f64,
}

/// Predicts one GEMM with the warp-specialized persistent model.
pub fn ws_predict(p: &Problem, gpu: &GpuPerf, o: &WsOptions) -> Result<WsBreakdown, PerfError> {
    let c = &gpu.ws;
    let (tm, tn) = (u64::from(o.tile.m), u64::from(o.tile.n));
    let (cm, cn) = (u64::from(o.cluster.m), u64::from(o.cluster.n));
    let cluster_size = cm * cn;
    if cluster_size > u64::from(c.sm_count) {
        return Err(PerfError::Invalid(format!(
            "cluster {} has more CTAs than {} has SMs ({})",
            o.cluster, gpu.name, c.sm_count
        )));
    }
    if let L2Mode::Raster { swizzle, .. } = o.l2 {
        if !(1..=MAX_SWIZZLE).contains(&swizzle) {
            return Err(PerfError::Invalid(format!(
                "swizzle must be 1 to {MAX_SWIZZLE} clusters, got {swizzle}"
            )));
        }
    }
    let two_cta = match o.two_cta {
        Some(true) => {
            if !c.two_cta_mma {
                return Err(PerfError::Invalid(format!(
                    "2-CTA MMA requested but {} has none",
                    gpu.name
                )));
            }
            if cm % 2 != 0 {
                return Err(PerfError::Invalid(format!(
                    "2-CTA MMA needs an even cluster m, got cluster {}",
                    o.cluster
                )));
            }
            true
        }
        Some(false) => false,
        None => c.two_cta_mma && cm % 2 == 0,
    };
    let clock_hz = c.clock_hz();
    let dram_bps = c.dram_bytes_per_s();
    let l2_bps = c.l2_bandwidth_gbps * 1e9;
    let mma_m = f64::from(o.tile.m) * if two_cta { 2.0 } else { 1.0 };
    let mma_efficiency = (mma_m / f64::from(c.mma_full_rate_m)).min(1.0);
    let flops_per_clock = gpu.ws_mma_flops_per_clock(p.dtype, p.acc16)? * mma_efficiency;

    let tiles_m = p.m.div_ceil(tm);
    let tiles_n = p.n.div_ceil(tn);
    let tiles = tiles_m * tiles_n;
    let concurrent_clusters = u64::from(c.sm_count) / cluster_size;
    let concurrent_tiles = concurrent_clusters * cluster_size;
    let k = p.k as f64;
    let a_panel = operand_bytes(p.dtype, tm as f64, k) + scale_bytes(p.dtype, tm as f64, k);
    let b_panel = operand_bytes(p.dtype, tn as f64, k) + scale_bytes(p.dtype, tn as f64, k);
    let dma_bytes_per_tile = a_panel / cn as f64 + b_panel / cm as f64;

    // Per-wave traffic: (tiles, DRAM-equivalent DMA time) for each wave.
    let rin = RasterInput {
        tiles_m,
        tiles_n,
        cluster: o.cluster,
        concurrent_clusters,
        swizzle: 1,
        a_panel_bytes: a_panel,
        b_panel_bytes: b_panel,
        l2_bytes: gpu.hardware.l2_bytes as f64,
    };
    let (raster, waves): (Option<Raster>, Waves) = match o.l2 {
        L2Mode::Raster { order, swizzle } => {
            let rin = RasterInput { swizzle, ..rin };
            match order {
                Some(r) => (Some(r), wave_traffic(&rin, r)),
                None => {
                    let (r, w) = best_raster(&rin);
                    (Some(r), w)
                }
            }
        }
        // As published: every wave holds `concurrent_tiles` tiles but the last.
        _ => (
            None,
            Waves::uniform(tiles, concurrent_tiles, dma_bytes_per_tile),
        ),
    };
    let hit = match o.l2 {
        L2Mode::HitRate(h) => {
            if !(0.0..1.0).contains(&h) {
                return Err(PerfError::Invalid(format!(
                    "L2 hit rate must be in [0, 1), got {h}"
                )));
            }
            h
        }
        _ => 0.0,
    };
    let dma_us = |w: &WaveTraffic| -> f64 {
        match o.l2 {
            L2Mode::Raster { .. } => (w.dram_bytes / dram_bps).max(w.l2_read_bytes / l2_bps) * 1e6,
            _ => w.dram_bytes * (1.0 - hit) / dram_bps * 1e6,
        }
    };
    let math_us = 2.0 * tm as f64 * tn as f64 * k / flops_per_clock / clock_hz * 1e6;
    let c_tile_bytes = tm as f64 * tn as f64 * p.out.bytes();
    let epi_us =
        |t: u64| (c.epilogue_min_cycles / clock_hz + t as f64 * c_tile_bytes / dram_bps) * 1e6;
    let phase = |w: &WaveTraffic| Phase {
        tiles: w.tiles,
        dma_us: dma_us(w),
        math_us,
        epilogue_us: epi_us(w.tiles),
    };

    let last = phase(&waves.last);
    let mainloop_us = waves.sum_but_last(|w| phase(w).max_us());
    let mainloop = if waves.count == 1 {
        last
    } else {
        let nf = (waves.count - 1) as f64;
        Phase {
            tiles: waves.first.tiles,
            dma_us: waves.sum_but_last(dma_us) / nf,
            math_us,
            epilogue_us: waves.sum_but_last(|w| epi_us(w.tiles)) / nf,
        }
    };

    // First load the MMA waits for: one MMA-instruction K slice of every first-wave tile.
    let k_first = (c.first_dma_k_bytes / p.dtype.bytes()).min(k);
    let a_first =
        operand_bytes(p.dtype, tm as f64, k_first) + scale_bytes(p.dtype, tm as f64, k_first);
    let b_first =
        operand_bytes(p.dtype, tn as f64, k_first) + scale_bytes(p.dtype, tn as f64, k_first);
    let w0 = &waves.first;
    let reuse0 = if w0.l2_read_bytes > 0.0 {
        match o.l2 {
            L2Mode::Raster { .. } => w0.dram_bytes / w0.l2_read_bytes,
            _ => 1.0 - hit,
        }
    } else {
        1.0
    };
    let first_dma_us =
        w0.tiles as f64 * (a_first / cn as f64 + b_first / cm as f64) * reuse0 / dram_bps * 1e6;
    let overhead_us = c.overhead_cycles / clock_hz * 1e6;
    let predicted_us = overhead_us + first_dma_us + mainloop_us + last.max_us() + last.epilogue_us;

    let loaded = waves.sum(|w| w.l2_read_bytes);
    let dram_load_bytes = waves.sum(|w| w.dram_bytes * (1.0 - hit));
    Ok(WsBreakdown {
        tiles,
        waves: waves.count,
        concurrent_tiles,
        two_cta,
        mma_efficiency,
        l2_mode: o.l2.name(),
        raster: raster.map(|r| r.name()),
        dma_bytes_per_tile,
        dram_load_bytes,
        l2_hit_rate: if loaded > 0.0 {
            1.0 - dram_load_bytes / loaded
        } else {
            0.0
        },
        overhead_us,
        first_dma_us,
        mainloop,
        last_wave: last,
        mainloop_us,
        predicted_us,
    })
}

impl WsBreakdown {
    /// The breakdown in the warp-specialized persistent GEMM model's printed layout (the
    /// name `seed_text` is kept for callers).
    pub fn seed_text(&self, p: &Problem, o: &WsOptions, measured_us: Option<f64>) -> String {
        let mut s = String::new();
        s += &format!("MNK {} {} {}\n", p.m, p.n, p.k);
        s += &format!("CTA ({} {})\n", o.tile.m, o.tile.n);
        s += &format!("CLUSTER ({} {})\n", o.cluster.m, o.cluster.n);
        if let Some(m) = measured_us {
            s += &format!("RATIO: {}\n", self.predicted_us / m);
            s += &format!("    predicted: {}\n", self.predicted_us);
            s += &format!("    actual: {m}\n");
        } else {
            s += &format!("PREDICTED: {}\n", self.predicted_us);
        }
        s += "PROLOGUE\n";
        s += &format!("    Overhead: {}\n", self.overhead_us);
        s += &format!("    DMA: {}\n", self.first_dma_us);
        s += "MAINLOOP\n";
        s += &format!("    Limiter: {}\n", self.mainloop.limiter());
        s += &format!("        DMA: {}\n", self.mainloop.dma_us);
        s += &format!("        MATH: {}\n", self.mainloop.math_us);
        s += &format!("        EPILOG: {}\n", self.mainloop.epilogue_us);
        s += "    Last Wave\n";
        s += &format!("        DMA: {}\n", self.last_wave.dma_us);
        s += &format!("        MATH: {}\n", self.last_wave.math_us);
        s += &format!("        EPILOG: {}\n", self.last_wave.epilogue_us);
        s += &format!(
            "WAVES {} (tiles {}, {} per wave, last {}), 2-CTA {}, L2 {}{}, DRAM load {:.0} B (L2 hit {:.3})\n",
            self.waves,
            self.tiles,
            self.concurrent_tiles,
            self.last_wave.tiles,
            if self.two_cta { "yes" } else { "no" },
            self.l2_mode,
            self.raster.map(|r| format!(" ({r})")).unwrap_or_default(),
            self.dram_load_bytes,
            self.l2_hit_rate
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::perf::problem::OutDtype;

    fn b200() -> GpuPerf {
        GpuPerf::by_name("b200").unwrap()
    }

    fn opts(tile: (u32, u32), cluster: (u32, u32), l2: L2Mode) -> WsOptions {
        WsOptions {
            tile: Pair {
                m: tile.0,
                n: tile.1,
            },
            cluster: Pair {
                m: cluster.0,
                n: cluster.1,
            },
            two_cta: None,
            l2,
        }
    }

    #[test]
    fn single_wave_has_no_mainloop() {
        let p = Problem::new(256, 256, 1024, Dtype::Fp16).unwrap();
        let b = ws_predict(&p, &b200(), &opts((128, 128), (1, 1), L2Mode::None)).unwrap();
        assert_eq!(b.waves, 1);
        assert_eq!(b.mainloop_us, 0.0);
        assert_eq!(b.last_wave.tiles, 4);
    }

    #[test]
    fn hit_rate_only_scales_dma() {
        let p = Problem::new(4096, 4096, 16384, Dtype::Nvfp4)
            .unwrap()
            .with_out(OutDtype::Fp32);
        let a = ws_predict(&p, &b200(), &opts((128, 64), (2, 1), L2Mode::None)).unwrap();
        let h = ws_predict(&p, &b200(), &opts((128, 64), (2, 1), L2Mode::HitRate(0.4))).unwrap();
        assert!((h.mainloop.dma_us - 0.6 * a.mainloop.dma_us).abs() < 1e-9);
        assert_eq!(h.mainloop.math_us, a.mainloop.math_us);
        assert_eq!(h.last_wave.epilogue_us, a.last_wave.epilogue_us);
    }

    #[test]
    fn raster_reuse_never_loads_more_than_no_reuse() {
        let p = Problem::new(4096, 4096, 16384, Dtype::Nvfp4).unwrap();
        let g = b200();
        let none = ws_predict(&p, &g, &opts((128, 64), (2, 1), L2Mode::None)).unwrap();
        let r = ws_predict(
            &p,
            &g,
            &opts(
                (128, 64),
                (2, 1),
                L2Mode::Raster {
                    order: None,
                    swizzle: 1,
                },
            ),
        )
        .unwrap();
        assert!(r.dram_load_bytes < none.dram_load_bytes);
        assert!(r.predicted_us < none.predicted_us);
        assert!(r.l2_hit_rate > 0.5, "{}", r.l2_hit_rate);
    }

    #[test]
    fn two_cta_needs_even_cluster_m() {
        let p = Problem::new(1024, 1024, 1024, Dtype::Fp8E4m3).unwrap();
        let mut o = opts((64, 256), (1, 1), L2Mode::None);
        o.two_cta = Some(true);
        assert!(ws_predict(&p, &b200(), &o).is_err());
        // without the pair, a 64-row tile runs the tensor core at half rate
        o.two_cta = None;
        let single = ws_predict(&p, &b200(), &o).unwrap();
        assert_eq!(single.mma_efficiency, 0.5);
        let pair = ws_predict(&p, &b200(), &opts((64, 256), (2, 1), L2Mode::None)).unwrap();
        assert!(pair.two_cta);
        assert!((single.mainloop.math_us - 2.0 * pair.mainloop.math_us).abs() < 1e-12);
    }
}
