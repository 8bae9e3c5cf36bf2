//! Roofline trace, the method of the NVFP4 group-GEMM roofline trace: FLOPs, bytes per
//! tensor (A, B, scale factors, C), arithmetic intensity against the crossover intensity
//! (peak rate / DRAM bandwidth), the bound, the latency-vs-bandwidth regime (working set
//! against DRAM bandwidth x latency), per group and in total for a grouped GEMM run group
//! after group, and the variant where the groups share B (and its scales) through L2.

use serde::Serialize;

use super::gpu::GpuPerf;
use super::problem::{GemmBytes, OutDtype, Problem};
use super::PerfError;
use crate::dtype::Dtype;

/// What to trace.
#[derive(Debug, Clone)]
pub struct RooflineOptions {
    /// M of each group (one entry for a plain GEMM).
    pub m_list: Vec<u64>,
    pub n: u64,
    pub k: u64,
    pub dtype: Dtype,
    pub out: OutDtype,
    pub acc16: bool,
    /// DRAM bandwidth override, GB/s.
    pub dram_gbps: Option<f64>,
}

/// The roofline numbers of one GEMM (a group, or the total).
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub m: Option<u64>,
    pub flops: f64,
    pub bytes: f64,
    pub bytes_per_tensor: GemmBytes,
    pub arithmetic_intensity: f64,
    /// "memory" or "compute".
    pub bound: &'static str,
    pub math_us: f64,
    pub dram_us: f64,
    pub sol_us: f64,
    /// "latency" when the working set is below bandwidth x latency, else "bandwidth".
    pub regime: &'static str,
}

/// Grouped GEMM whose groups share B: B and SFB come from DRAM once, later groups read
/// them from L2.
#[derive(Debug, Clone, Serialize)]
pub struct SharedB {
    pub dram_bytes: f64,
    pub l2_reread_bytes: f64,
    pub dram_us: f64,
    pub l2_us: f64,
    pub math_us: f64,
    /// max(DRAM, L2, math): the three overlap.
    pub sol_us: f64,
    pub fits_in_l2: bool,
}

/// A full trace.
#[derive(Debug, Clone, Serialize)]
pub struct Roofline {
    pub gpu: String,
    pub dtype: String,
    pub out_dtype: String,
    pub n: u64,
    pub k: u64,
    pub peak_tflops: f64,
    pub dram_bandwidth_gbps: f64,
    pub crossover_intensity: f64,
    pub dram_latency_ns: f64,
    pub latency_bandwidth_bytes: f64,
    #[serde(flatten)]
    pub total: Trace,
    pub groups: Vec<Trace>,
    pub shared_b: Option<SharedB>,
}

fn trace(
    m: Option<u64>,
    flops: f64,
    b: GemmBytes,
    peak: f64,
    bw: f64,
    crossover: f64,
    lat_bw: f64,
) -> Trace {
    let bytes = b.total();
    let ai = flops / bytes;
    let math_us = flops / peak * 1e6;
    let dram_us = bytes / bw * 1e6;
    Trace {
        m,
        flops,
        bytes,
        bytes_per_tensor: b,
        arithmetic_intensity: ai,
        bound: if ai < crossover { "memory" } else { "compute" },
        math_us,
        dram_us,
        sol_us: math_us.max(dram_us),
        regime: if bytes < lat_bw {
            "latency"
        } else {
            "bandwidth"
        },
    }
}

/// Traces a GEMM or a grouped GEMM on a GPU.
pub fn roofline(gpu: &GpuPerf, o: &RooflineOptions) -> Result<Roofline, PerfError> {
    if o.m_list.is_empty() {
        return Err(PerfError::Invalid("no M values".into()));
    }
    let peak = gpu.peak_flops(o.dtype, o.acc16)?;
    let bw = match o.dram_gbps {
        Some(g) if g.is_finite() && g > 0.0 => g * 1e9,
        Some(g) => {
            return Err(PerfError::Invalid(format!(
                "--dram-gbps must be a positive number, got {g}"
            )))
        }
        None => gpu.dram_bytes_per_s(),
    };
    let crossover = peak / bw;
    let lat_bw = bw * gpu.hardware.dram_latency_ns * 1e-9;
    let mut groups = Vec::new();
    let mut sum = GemmBytes::default();
    let mut flops = 0.0;
    for &m in &o.m_list {
        let mut p = Problem::new(m, o.n, o.k, o.dtype)?.with_out(o.out);
        p.acc16 = o.acc16;
        let b = p.bytes();
        sum = sum.add(&b);
        flops += p.flops();
        groups.push(trace(Some(m), p.flops(), b, peak, bw, crossover, lat_bw));
    }
    // Run group after group: times add up, so the total SOL is max(sum math, sum DRAM).
    let mut total = trace(None, flops, sum, peak, bw, crossover, lat_bw);
    let math_sum: f64 = groups.iter().map(|g| g.math_us).sum();
    let dram_sum: f64 = groups.iter().map(|g| g.dram_us).sum();
    total.math_us = math_sum;
    total.dram_us = dram_sum;
    total.sol_us = math_sum.max(dram_sum);
    let shared_b = if groups.len() > 1 {
        let g0 = &groups[0].bytes_per_tensor;
        let b_once = g0.b + g0.sfb;
        let dram_bytes = sum.a + sum.sfa + sum.c + b_once;
        let l2_reread = b_once * (groups.len() - 1) as f64;
        let l2_bw = gpu.hardware.l2_bandwidth_gbps * 1e9;
        let dram_us = dram_bytes / bw * 1e6;
        let l2_us = l2_reread / l2_bw * 1e6;
        Some(SharedB {
            dram_bytes,
            l2_reread_bytes: l2_reread,
            dram_us,
            l2_us,
            math_us: math_sum,
            sol_us: dram_us.max(l2_us).max(math_sum),
            fits_in_l2: b_once <= gpu.hardware.l2_bytes as f64,
        })
    } else {
        None
    };
    Ok(Roofline {
        gpu: gpu.name.clone(),
        dtype: o.dtype.name().to_string(),
        out_dtype: o.out.name().to_string(),
        n: o.n,
        k: o.k,
        peak_tflops: peak / 1e12,
        dram_bandwidth_gbps: bw / 1e9,
        crossover_intensity: crossover,
        dram_latency_ns: gpu.hardware.dram_latency_ns,
        latency_bandwidth_bytes: lat_bw,
        total,
        groups,
        shared_b,
    })
}

/// 12345678 -> "12,345,678" (rounded to an integer).
pub fn commas(x: f64) -> String {
    let neg = x < 0.0;
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if neg {
        format!("-{out}")
    } else {
        out
    }
}

impl Roofline {
    /// The trace for people, laid out like the NVFP4 group-GEMM roofline trace.
    pub fn text(&self) -> String {
        let mut s = String::new();
        s += &format!(
            "Roofline: {} GEMM on {} (peak {} TFLOP/s, DRAM {} GB/s), output {}\n",
            self.dtype, self.gpu, self.peak_tflops, self.dram_bandwidth_gbps, self.out_dtype
        );
        s += &format!(
            "Crossover intensity = peak / bandwidth = {:.1} FLOP/B\n",
            self.crossover_intensity
        );
        s += &format!(
            "Latency x bandwidth = {:.0} ns x {} GB/s = {} B (working sets below it are latency-bound)\n",
            self.dram_latency_ns,
            self.dram_bandwidth_gbps,
            commas(self.latency_bandwidth_bytes)
        );
        let grouped = self.groups.len() > 1;
        for (i, g) in self.groups.iter().enumerate() {
            s += "\n";
            if grouped {
                s += &format!("Group {}: ", i + 1);
            }
            s += &self.group_text(g);
        }
        if grouped {
            s += &format!(
                "\nTotal ({} groups, run one after another):\n",
                self.groups.len()
            );
            s += &format!("  FLOPs = {}\n", commas(self.total.flops));
            s += &format!("  Bytes = {}\n", commas(self.total.bytes));
            s += &format!(
                "  AI    = {:.1} FLOP/B -> {} BOUND\n",
                self.total.arithmetic_intensity,
                self.total.bound.to_uppercase()
            );
            s += &format!(
                "  math {:.4} us, memory {:.4} us -> SOL {:.3} us\n",
                self.total.math_us, self.total.dram_us, self.total.sol_us
            );
            if let Some(sb) = &self.shared_b {
                s += "\nGroups sharing B (and its scales) through L2:\n";
                s += &format!(
                    "  DRAM bytes = {} (B once), L2 re-reads = {} ({})\n",
                    commas(sb.dram_bytes),
                    commas(sb.l2_reread_bytes),
                    if sb.fits_in_l2 {
                        "B fits in L2"
                    } else {
                        "B does NOT fit in L2"
                    }
                );
                s += &format!(
                    "  DRAM {:.4} us, L2 {:.4} us, math {:.4} us -> SOL {:.3} us\n",
                    sb.dram_us, sb.l2_us, sb.math_us, sb.sol_us
                );
            }
        }
        s
    }

    fn group_text(&self, g: &Trace) -> String {
        let b = &g.bytes_per_tensor;
        let mut s = format!("M={} N={} K={}\n", g.m.unwrap_or(0), self.n, self.k);
        s += &format!(
            "  FLOPs = 2 x {} x {} x {} = {}\n",
            g.m.unwrap_or(0),
            self.n,
            self.k,
            commas(g.flops)
        );
        s += &format!(
            "  Bytes = A {} + B {} + SFA {} + SFB {} + C {} = {}\n",
            commas(b.a),
            commas(b.b),
            commas(b.sfa),
            commas(b.sfb),
            commas(b.c),
            commas(g.bytes)
        );
        s += &format!(
            "  AI    = {:.1} FLOP/B {} {:.1} -> {} BOUND\n",
            g.arithmetic_intensity,
            if g.bound == "memory" { "<" } else { ">=" },
            self.crossover_intensity,
            g.bound.to_uppercase()
        );
        s += &format!(
            "  math {:.4} us, memory {:.4} us -> SOL {:.3} us; regime: {}\n",
            g.math_us, g.dram_us, g.sol_us, g.regime
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(m_list: Vec<u64>, n: u64, k: u64, dram_gbps: Option<f64>) -> RooflineOptions {
        RooflineOptions {
            m_list,
            n,
            k,
            dtype: Dtype::Nvfp4,
            out: OutDtype::Fp16,
            acc16: false,
            dram_gbps,
        }
    }

    #[test]
    fn roofline_trace_problem1_group_m128() {
        let g = GpuPerf::by_name("b200").unwrap();
        let r = roofline(&g, &opts(vec![128], 4096, 7168, Some(8000.0))).unwrap();
        assert_eq!(r.total.bytes, 18_079_744.0);
        assert_eq!(format!("{:.1}", r.total.arithmetic_intensity), "415.7");
        assert_eq!(format!("{:.1}", r.crossover_intensity), "962.8");
        assert_eq!(r.total.bound, "memory");
        assert_eq!(format!("{:.2}", r.total.dram_us), "2.26");
        // the NVFP4 group-GEMM roofline trace, section 7.2: 8 TB/s x 280 ns = 2.24 MB
        assert_eq!(r.latency_bandwidth_bytes.round(), 2_240_000.0);
        assert_eq!(r.total.regime, "bandwidth");
    }

    #[test]
    fn roofline_trace_problem2_and_3_bytes() {
        let g = GpuPerf::by_name("b200").unwrap();
        let r = roofline(&g, &opts(vec![128], 7168, 2048, None)).unwrap();
        assert_eq!(r.total.bytes, 10_240_000.0);
        assert_eq!(r.total.flops, 3_758_096_384.0);
        let r = roofline(&g, &opts(vec![192, 320], 3072, 4096, None)).unwrap();
        assert_eq!(r.groups[0].bytes, 8_699_904.0);
        assert_eq!(r.groups[1].bytes, 9_781_248.0);
        assert_eq!(r.total.bytes, 18_481_152.0);
    }

    #[test]
    fn shared_b_reads_b_once() {
        let g = GpuPerf::by_name("b200").unwrap();
        let r = roofline(&g, &opts(vec![64, 64, 64], 4096, 7168, None)).unwrap();
        let sb = r.shared_b.unwrap();
        let one = &r.groups[0].bytes_per_tensor;
        assert_eq!(sb.dram_bytes, r.total.bytes - 2.0 * (one.b + one.sfb));
        assert_eq!(sb.l2_reread_bytes, 2.0 * (one.b + one.sfb));
        assert!(sb.sol_us < r.total.sol_us);
    }

    #[test]
    fn small_working_set_is_latency_regime() {
        let g = GpuPerf::by_name("h200").unwrap();
        let mut o = opts(vec![64], 64, 64, None);
        o.dtype = Dtype::Fp16;
        let r = roofline(&g, &o).unwrap();
        assert_eq!(r.total.regime, "latency");
        assert!(r.shared_b.is_none());
    }

    #[test]
    fn commas_groups_thousands() {
        assert_eq!(commas(18_079_744.0), "18,079,744");
        assert_eq!(commas(999.0), "999");
        assert_eq!(commas(1000.0), "1,000");
    }
}
