//! `origami-calibrate` as a program, without a GPU: `--check` on the committed calibration
//! files and on broken ones (exit codes 2 and 3), usage errors (2), and the missing-driver
//! path (4). Runs in CI, which has no GPU and no CUDA.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use origami::calibrate::assemble::{assemble, RunInfo};
use origami::calibrate::results::{self as r, Metric, Results};
use origami::calibrate::stability::Sampled;
use origami::hw::schema::{Curve, HwDoc};
use origami::stats::Summary;
use predicates::prelude::*;

fn bin() -> Command {
    Command::cargo_bin("origami-calibrate").unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("origami-calib-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn metric(name: &str, unit: &str, samples: &[f64]) -> Metric {
    let s = Summary::of(samples).unwrap();
    Metric::new(
        name,
        unit,
        Sampled {
            samples: samples.to_vec(),
            stable: s.cov <= 0.01,
            summary: s,
        },
    )
}

/// A measured document built through the library's own assembly (plausible H200 numbers).
fn measured_doc() -> HwDoc {
    let mut res = Results::new(origami::hw::DeviceProps {
        name: "NVIDIA H200".into(),
        compute_capability: [9, 0],
        sm_count: 132,
        l2_bytes: 52_428_800,
        smem_per_block_optin_bytes: 232_448,
        registers_per_sm: 65_536,
        sm_clock_mhz: 1980.0,
        mem_clock_mhz: 3201.0,
        mem_bus_width_bits: 6144,
    });
    res.metrics = vec![
        metric(
            r::SM_CLOCK,
            "MHz",
            &[1980.0, 1979.0, 1980.0, 1981.0, 1980.0],
        ),
        metric(
            r::L2_READ,
            "GB/s",
            &[9000.0, 9010.0, 8990.0, 9005.0, 8995.0],
        ),
        metric(
            r::DRAM_READ,
            "GB/s",
            &[4200.0, 4210.0, 4190.0, 4205.0, 4195.0],
        ),
        metric(
            r::L2_HIT_LATENCY,
            "cycles",
            &[270.0, 271.0, 269.0, 270.0, 270.0],
        ),
        metric(
            r::DRAM_LATENCY_PAGE,
            "cycles",
            &[850.0, 852.0, 848.0, 851.0, 849.0],
        ),
        metric(r::MMA_F16_LATENCY, "cycles", &[33.0; 5]),
    ];
    let mut fit = BTreeMap::new();
    fit.insert("dram_bw_coeff".to_string(), 0.02);
    fit.insert("rms_error".to_string(), 0.01);
    res.curves.insert(
        r::DRAM_SMS_CURVE.into(),
        Curve {
            x_name: "active_sms".into(),
            y_name: "dram_read_gbps".into(),
            points: vec![[1.0, 84.0], [50.0, 4200.0], [132.0, 4210.0]],
            fit,
        },
    );
    let info = RunInfo {
        command: "origami-calibrate --runs 5".into(),
        tool_version: "0.1.0".into(),
        date: "2026-01-01T00:00:00Z".into(),
        driver: Some("580.00".into()),
        cuda: Some("13.0".into()),
        runs: 5,
        max_cov: 0.01,
        allow_unstable: false,
        fallback: None,
    };
    assemble(&res, &info).unwrap()
}

fn write_doc(name: &str, doc: &HwDoc) -> PathBuf {
    let p = tmp(name);
    std::fs::write(&p, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    p
}

#[test]
fn every_committed_calibration_file_passes_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibrations");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    bin()
        .arg("--check")
        .args(&files)
        .assert()
        .success()
        .stdout(predicate::str::contains("ok: ").count(files.len()));
}

#[test]
fn a_measured_document_passes_and_its_text_summary_shows_the_formulas() {
    let p = write_doc("good.json", &measured_doc());
    bin()
        .args(["--check"])
        .arg(&p)
        .args(["--require-measured", "--format", "text"])
        .assert()
        .success()
        .stdout(predicate::str::contains("measured"))
        .stdout(predicate::str::contains("l2_perf_ratio"))
        .stdout(predicate::str::contains("hbm_latency_penalty"));
}

#[test]
fn unstable_measurement_exits_3() {
    let mut doc = measured_doc();
    doc.measurements[2].summary.cov = 0.04;
    let p = write_doc("unstable.json", &doc);
    bin()
        .arg("--check")
        .arg(&p)
        .assert()
        .code(3)
        .stderr(predicate::str::contains(r::DRAM_READ));
    // A looser threshold accepts it.
    bin()
        .arg("--check")
        .arg(&p)
        .args(["--max-cov", "5"])
        .assert()
        .success();
}

#[test]
fn broken_files_exit_2_naming_the_problem() {
    let mut doc = measured_doc();
    doc.params.dram_perf_ratio *= 2.0;
    let p = write_doc("tampered.json", &doc);
    bin().arg("--check").arg(&p).assert().code(2).stderr(
        predicate::str::contains("dram_perf_ratio").and(predicate::str::contains("disagrees")),
    );

    let mut doc = measured_doc();
    doc.provenance.driver = None;
    let p = write_doc("nodriver.json", &doc);
    bin()
        .arg("--check")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("provenance.driver"));

    let p = tmp("notjson.json");
    std::fs::write(&p, "{ nope").unwrap();
    bin()
        .arg("--check")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not valid JSON"));

    let p = tmp("flat.json");
    std::fs::write(&p, r#"{"l2_perf_ratio": 3000}"#).unwrap();
    bin()
        .arg("--check")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("flat override"));

    bin()
        .args(["--check", "/nonexistent/origami.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"));
}

#[test]
fn estimated_files_fail_when_measured_is_required() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibrations/h100-sxm.json");
    bin()
        .arg("--check")
        .arg(&f)
        .arg("--require-measured")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("estimated"));
}

#[test]
fn usage_errors_exit_2() {
    bin()
        .args(["--runs", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--runs"));
    bin().args(["--only", "warp-drive"]).assert().code(2);
    bin().args(["--device", "first"]).assert().code(2);
    bin().args(["--max-cov", "0"]).assert().code(2);
    bin()
        .args(["--check", "a.json", "--quick"])
        .assert()
        .code(2);
}

#[test]
fn without_a_driver_the_run_exits_4_and_says_what_is_missing() {
    if origami::gpu::probe::is_present(origami::gpu::Library::Driver) {
        eprintln!("a CUDA driver is present: the no-GPU path is not testable here");
        return;
    }
    let out = tmp("never-written.json");
    bin()
        .args(["--runs", "2", "--quick", "--output"])
        .arg(&out)
        .assert()
        .code(4)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("libcuda").and(predicate::str::contains("driver")));
    assert!(!out.exists(), "no file may be left behind");
    bin()
        .arg("--probe")
        .assert()
        .code(4)
        .stdout(predicate::str::contains("\"driver\": false"));
}

#[test]
fn usage_errors_are_one_line_and_help_lists_every_exit_code() {
    for (args, needle) in [
        (&["--bogus"][..], "unexpected argument '--bogus'"),
        (
            &["--only", "warp-drive"][..],
            "[possible values: clock, l2, dram",
        ),
        (&["--runs", "x"][..], "'x'"),
        (&["--check", "a.json", "--quick"][..], "--quick"),
        (&["--max-cov", "0"][..], "--max-cov"),
    ] {
        let o = bin().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("origami-calibrate: error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
    for flag in ["--help", "-h", "--version", "-V"] {
        let o = bin().arg(flag).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{flag}");
        assert!(!o.stdout.is_empty() && o.stderr.is_empty(), "{flag}");
    }
    let help = bin().arg("--help").output().unwrap().stdout;
    let help = String::from_utf8_lossy(&help);
    assert!(help.starts_with("Calibrate an NVIDIA GPU"), "{help}");
    assert!(
        help.contains(
            "Exit codes: 0 ok, 1 runtime failure, 2 bad input, 3 measurement unstable, 4 no GPU or CUDA library."
        ),
        "{help}"
    );
    // The example that needs no GPU runs.
    let check = help
        .lines()
        .find_map(|l| l.trim().strip_prefix("origami-calibrate --check "))
        .expect("a --check example");
    bin()
        .arg("--check")
        .args(check.split_whitespace())
        .assert()
        .success();
}
