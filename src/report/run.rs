//! The writers of `origami-bench run`'s report (one shape: the chosen configs beside
//! cuBLAS): [`run_text`] for people, [`run_json`] for programs. The report itself,
//! `gemm::run_report::RunReport`, is what `gemm::run` produces.

use crate::gemm::run_report::RunReport;

/// The report as pretty JSON (keys sorted, as every origami JSON output).
pub fn run_json(r: &RunReport) -> String {
    let v = serde_json::to_value(r).expect("the report serializes");
    serde_json::to_string_pretty(&v).expect("a JSON value prints")
}

fn or_dash<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or("-".into(), f)
}

/// A number as the JSON report has it: non-finite values are null there, `-` here.
fn num(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    or_dash(v.filter(|x| x.is_finite()), f)
}

/// The report as a table: cuBLAS, then one line per config (`*`: the model's pick).
pub fn run_text(r: &RunReport) -> String {
    let s = &r.shape;
    let mut t = format!(
        "{}x{}x{} {} on {} ({} family, model pick {}; inputs rotated over {} copies)\n",
        s.m, s.n, s.k, s.dtype, r.gpu, r.family, r.model_pick, r.rotation_copies
    );
    t.push_str(&format!(
        "{:<22} {:>10} {:>7} {:>9} {:>8} {:>5} {:>6} {:>10} {:>6}\n",
        "config", "median ms", "CoV", "TFLOP/s", "vs cuB", "regs", "spill", "rel_err", "pred us"
    ));
    t.push_str(&format!(
        "{:<22} {:>10.4} {:>7.3} {:>9.1}\n",
        "cuBLAS", r.cublas.median_ms, r.cublas.cov, r.cublas.tflops
    ));
    for c in &r.configs {
        let ran = c.ran.as_ref();
        let timed = ran.and_then(|x| x.timed.as_ref());
        let note = match ran {
            Some(x) if !x.passed => "  FAILED verification",
            None if c.error.is_some() => "  not compiled",
            _ => "",
        };
        t.push_str(&format!(
            "{:<22} {:>10} {:>7} {:>9} {:>8} {:>5} {:>6} {:>10} {:>6}{}\n",
            format!(
                "{}{}",
                c.config,
                if ran.is_some_and(|x| x.is_pick) {
                    "*"
                } else {
                    ""
                }
            ),
            num(timed.map(|x| x.median_ms), |v| format!("{v:.4}")),
            num(timed.map(|x| x.cov), |v| format!("{v:.3}")),
            num(timed.map(|x| x.tflops), |v| format!("{v:.1}")),
            num(timed.map(|x| x.vs_cublas), |v| format!("{:.1}%", 100.0 * v)),
            or_dash(ran, |x| x.registers.to_string()),
            or_dash(ran, |x| x.spills.to_string()),
            num(ran.map(|x| x.rel_err), |v| format!("{v:.2e}")),
            num(ran.map(|x| x.predicted_us), |v| format!("{v:.1}")),
            note
        ));
    }
    t.push_str(&passes_text(r));
    t.push_str(&sustained_text(r));
    t
}

/// The passes block (`--passes`): each launch's median per pass, in pass order (the
/// table's medians are their medians).
fn passes_text(r: &RunReport) -> String {
    if r.cublas.pass_ms.is_empty() {
        return String::new();
    }
    let ms = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.4}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let warm = r.warmed_s.map_or(String::new(), |w| {
        format!(", after {w:.1} s of cuBLAS warm-up")
    });
    let mut t = format!(
        "passes ({}, alternating order{warm}; ms per pass):\n{:<22} {}\n",
        r.cublas.pass_ms.len(),
        "cuBLAS",
        ms(&r.cublas.pass_ms)
    );
    for c in &r.configs {
        if let Some(x) = c.ran.as_ref().and_then(|x| x.timed.as_ref()) {
            t.push_str(&format!("{:<22} {}\n", c.config, ms(&x.pass_ms)));
        }
    }
    t
}

/// The energy block (`--energy-s`), when any line has a sustained measurement: per line
/// millijoules per GEMM, average watts, the sustained time per GEMM and its energy against
/// cuBLAS's.
fn sustained_text(r: &RunReport) -> String {
    use crate::gemm::energy::Sustained;
    let mut lines: Vec<(String, Option<&Sustained>)> =
        vec![("cuBLAS".into(), r.cublas.sustained.as_ref())];
    for c in &r.configs {
        let s = c
            .ran
            .as_ref()
            .and_then(|x| x.timed.as_ref())
            .and_then(|x| x.sustained.as_ref());
        lines.push((c.config.clone(), s));
    }
    if lines.iter().all(|(_, s)| s.is_none()) {
        return String::new();
    }
    let cb = r.cublas.sustained.as_ref().map(|s| s.mj_per_launch);
    let mut t = format!(
        "sustained load (NVML energy counter, tick to tick):\n{:<22} {:>10} {:>8} {:>12} {:>9} {:>9} {:>6} {:>7} {:>10}  {}\n",
        "config", "mJ/GEMM", "W", "ms/GEMM", "window s", "launches", "busy", "SM MHz", "cuB mJ/mJ", "clock events"
    );
    for (name, s) in lines {
        match s {
            Some(s) => t.push_str(&format!(
                "{:<22} {:>10.3} {:>8.1} {:>12.4} {:>9.2} {:>9} {:>6.3} {:>7} {:>10}  {}\n",
                name,
                s.mj_per_launch,
                s.avg_w,
                s.ms_per_launch,
                s.window_s,
                s.launches,
                s.busy,
                num(s.sm_mhz, |v| format!("{v:.0}")),
                num(cb.map(|c| c / s.mj_per_launch), |v| format!("{v:.3}")),
                if s.throttle.is_empty() {
                    "-".to_string()
                } else {
                    s.throttle.join(",")
                }
            )),
            None => t.push_str(&format!("{name:<22} {:>10}\n", "-")),
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::run_report::{ConfigResult, CublasResult, RanConfig, RunShape, TimedConfig};

    fn report() -> RunReport {
        RunReport {
            shape: RunShape {
                m: 64,
                n: 64,
                k: 64,
                dtype: "fp16".into(),
            },
            gpu: "mock GPU".into(),
            family: "origami".into(),
            model_pick: "64x64x32,g1,w4,s3".into(),
            cublas: CublasResult {
                median_ms: 0.01,
                cov: 0.02,
                samples: 10,
                tflops: 0.05,
                reps: 64,
                sustained: None,
                pass_ms: Vec::new(),
            },
            configs: vec![
                ConfigResult {
                    config: "64x64x32,g1,w4,s3".into(),
                    error: None,
                    ran: Some(RanConfig {
                        is_pick: true,
                        predicted_us: 3.25,
                        registers: 128,
                        local_bytes: 0,
                        spills: false,
                        smem_bytes: 24576,
                        rel_err: 1e-4,
                        unwritten: 0,
                        bound: 2e-3,
                        passed: true,
                        timed: Some(TimedConfig {
                            median_ms: 0.02,
                            cov: 0.01,
                            samples: 10,
                            reps: 64,
                            tflops: 0.026,
                            vs_cublas: 0.5,
                            sustained: None,
                            pass_ms: Vec::new(),
                        }),
                    }),
                },
                ConfigResult {
                    config: "32x32x16,g1,w4,s2".into(),
                    error: Some("no".into()),
                    ran: None,
                },
            ],
            rotation_copies: 32,
            clocks: None,
            warmed_s: None,
        }
    }

    #[test]
    fn the_passes_block_lists_each_pass() {
        let mut r = report();
        assert!(!run_text(&r).contains("passes ("));
        r.cublas.pass_ms = vec![0.01, 0.011];
        if let Some(t) = r.configs[0].ran.as_mut().and_then(|x| x.timed.as_mut()) {
            t.pass_ms = vec![0.02, 0.021];
        }
        let text = run_text(&r);
        assert!(text.contains("passes (2, alternating order"), "{text}");
        assert!(
            text.contains("0.0100 0.0110") && text.contains("0.0200 0.0210"),
            "{text}"
        );
        let j: serde_json::Value = serde_json::from_str(&run_json(&r)).unwrap();
        assert_eq!(j["cublas"]["pass_ms"][1], 0.011);
        assert!(run_json(&report()).find("pass_ms").is_none());
    }

    #[test]
    fn the_energy_block_appears_with_a_sustained_measurement() {
        use crate::gemm::energy::Sustained;
        let mut r = report();
        assert!(!run_text(&r).contains("sustained load"));
        let s = |mj: f64| Sustained {
            mj_per_launch: mj,
            avg_w: 500.0,
            window_s: 1.05,
            launches: 1000,
            ms_per_launch: 0.021,
            busy: 0.99,
            sm_mhz: Some(1410.0),
            sm_mhz_min: Some(1395.0),
            throttle: vec!["sw_power_cap".into()],
        };
        r.cublas.sustained = Some(s(10.0));
        if let Some(t) = r.configs[0].ran.as_mut().and_then(|x| x.timed.as_mut()) {
            t.sustained = Some(s(12.5));
        }
        let text = run_text(&r);
        assert!(text.contains("sustained load"), "{text}");
        // cuBLAS's energy over the config's: 10 / 12.5
        assert!(text.contains("0.800"), "{text}");
        assert!(
            text.contains(" 1410 ") && text.contains("sw_power_cap"),
            "{text}"
        );
        let j: serde_json::Value = serde_json::from_str(&run_json(&r)).unwrap();
        assert_eq!(j["cublas"]["sustained"]["mj_per_launch"], 10.0);
        assert_eq!(j["configs"][0]["sustained"]["launches"], 1000);
    }

    #[test]
    fn json_keys_are_flat_and_sorted() {
        let r = report();
        assert!(r.any_failed());
        let j: serde_json::Value = serde_json::from_str(&run_json(&r)).unwrap();
        assert_eq!(j["configs"][0]["vs_cublas"], serde_json::json!(0.5));
        assert_eq!(j["configs"][1]["error"], serde_json::json!("no"));
        assert!(j["configs"][1].get("passed").is_none());
        let text = run_json(&r);
        assert!(text.find("\"cublas\"").unwrap() < text.find("\"gpu\"").unwrap());
    }

    #[test]
    fn text_marks_the_pick_and_the_failures() {
        let t = run_text(&report());
        assert!(t.contains("64x64x32,g1,w4,s3*"), "{t}");
        assert!(t.contains("50.0%") && t.contains("1.00e-4"), "{t}");
        assert!(t.lines().last().unwrap().ends_with("  not compiled"), "{t}");
    }
}
