//! CLI tests of origami-predict: outputs, and one-line exit-2 errors for bad input.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;

fn cmd() -> Command {
    Command::cargo_bin("origami-predict").unwrap()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("origami-predict-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs and checks: exit 2, a single stderr line containing every needle.
fn fails_with(args: &[&str], needles: &[&str]) {
    let out = cmd().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "args {args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line expected: {err}"
    );
    for n in needles {
        assert!(err.contains(n), "'{n}' not in: {err}");
    }
}

#[test]
fn roofline_json_has_keys_and_published_sol() {
    let out = cmd()
        .args([
            "roofline",
            "1",
            "4096",
            "7168",
            "--groups",
            "80,176,128,72,64,248,96,160",
        ])
        .args(["--dtype", "nvfp4", "--gpu", "b200", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "flops",
        "bytes",
        "arithmetic_intensity",
        "bound",
        "sol_us",
        "groups",
        "shared_b",
        "crossover_intensity",
        "regime",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["bytes"], 144_637_952.0);
    assert_eq!(v["bound"], "memory");
    assert_eq!(format!("{:.3}", v["sol_us"].as_f64().unwrap()), "18.833");
    assert_eq!(v["groups"].as_array().unwrap().len(), 8);
}

#[test]
fn roofline_text_trace() {
    cmd()
        .args([
            "roofline",
            "128",
            "4096",
            "7168",
            "--dtype",
            "nvfp4",
            "--gpu",
            "b200",
            "--dram-gbps",
            "8000",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("18,079,744"))
        .stdout(predicate::str::contains("AI    = 415.7"))
        .stdout(predicate::str::contains("MEMORY BOUND"));
}

#[test]
fn ws_prints_seed_breakdown() {
    cmd()
        .args([
            "ws",
            "4096",
            "4096",
            "16384",
            "--dtype",
            "nvfp4",
            "--out-dtype",
            "fp32",
        ])
        .args(["--tile", "128x64", "--cluster", "2x1", "--gpu", "b200"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Limiter: DMA"))
        .stdout(predicate::str::contains("MATH: 6.3015384615384615"))
        .stdout(predicate::str::contains("Overhead: 6.153846153846154"));
}

#[test]
fn model_writes_predictions_stats_and_scurve() {
    let d = tmpdir("model");
    let input = d.join("in.csv");
    std::fs::write(
        &input,
        "M,N,K,dtype,tile,cluster,out_dtype,measured_us\n\
         4096,4096,16384,nvfp4,128x64,2x1,fp32,225.28\n\
         4096,7168,257,fp8,64x256,2x1,fp8,35.6352\n\
         8192,8192,8192,fp16,256x128,2x1,,900\n",
    )
    .unwrap();
    let out = d.join("out");
    for (model, l2) in [
        ("sol", "none"),
        ("ws", "none"),
        ("ws", "hit-rate"),
        ("ws", "raster"),
    ] {
        cmd()
            .args(["model", "--model", model, "--gpu", "b200", "--l2", l2])
            .arg("--input")
            .arg(&input)
            .arg("--out")
            .arg(&out)
            .assert()
            .success()
            .stdout(predicate::str::contains("within 10%"));
    }
    for f in [
        "predictions_sol.csv",
        "predictions_ws.csv",
        "predictions_ws_l2hit.csv",
        "predictions_ws_raster.csv",
        "stats_ws.json",
        "scurve_ws.png",
        "scurve_sol.png",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let png = std::fs::read(out.join("scurve_ws.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let csv = std::fs::read_to_string(out.join("predictions_ws.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("predicted_us"));
    assert_eq!(csv.lines().count(), 4);
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats_ws.json")).unwrap()).unwrap();
    assert_eq!(stats["n"], 3);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn model_without_measurements_still_predicts() {
    let d = tmpdir("nomeas");
    let input = d.join("in.csv");
    std::fs::write(&input, "M,N,K,dtype\n1024,1024,1024,bf16\n").unwrap();
    cmd()
        .args(["model", "--model", "sol", "--gpu", "h200"])
        .arg("--input")
        .arg(&input)
        .arg("--out")
        .arg(d.join("o"))
        .assert()
        .success();
    assert!(d.join("o/predictions_sol.csv").exists());
    assert!(!d.join("o/scurve_sol.png").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_sizes_exit_2() {
    fails_with(
        &[
            "roofline", "abc", "1", "1", "--dtype", "fp16", "--gpu", "h200",
        ],
        &["'abc'", "<M>"],
    );
    fails_with(
        &[
            "roofline", "0", "1", "1", "--dtype", "fp16", "--gpu", "h200",
        ],
        &["'0'", "positive"],
    );
    fails_with(
        &[
            "roofline", "1", "1", "1", "--groups", "4,x", "--dtype", "fp16", "--gpu", "h200",
        ],
        &["--groups", "'x'"],
    );
    fails_with(
        &[
            "ws", "1", "1", "1", "--dtype", "fp16", "--gpu", "h200", "--tile", "64",
        ],
        &["--tile", "MxN"],
    );
}

#[test]
fn unknown_names_exit_2_listing_known() {
    fails_with(
        &[
            "roofline", "1", "1", "1", "--dtype", "fp64", "--gpu", "h200",
        ],
        &["fp64", "bf16", "nvfp4"],
    );
    fails_with(
        &[
            "roofline", "1", "1", "1", "--dtype", "fp16", "--gpu", "v100",
        ],
        &["v100", "rtx4090", "h100-sxm", "h200", "a100", "b200"],
    );
    fails_with(
        &[
            "model", "--model", "magic", "--input", "x.csv", "--out", "o",
        ],
        &["magic", "sol", "ws"],
    );
    // a dtype the GPU has no rate for
    fails_with(
        &[
            "roofline", "1", "1", "1", "--dtype", "nvfp4", "--gpu", "a100",
        ],
        &["a100", "nvfp4"],
    );
}

#[test]
fn bad_csv_exit_2_naming_file_and_field() {
    let d = tmpdir("badcsv");
    let out = d.join("o");
    let run = |name: &str, body: Option<&str>, model: &str, needles: &[&str]| {
        let p = d.join(name);
        if let Some(b) = body {
            std::fs::write(&p, b).unwrap();
        }
        let p = p.to_str().unwrap().to_string();
        let o = out.to_str().unwrap().to_string();
        fails_with(
            &[
                "model", "--model", model, "--gpu", "b200", "--input", &p, "--out", &o,
            ],
            needles,
        );
    };
    run("missing.csv", None, "sol", &["missing.csv", "cannot read"]);
    run(
        "nocol.csv",
        Some("M,N,dtype\n1,2,fp16\n"),
        "sol",
        &["nocol.csv", "missing column 'k'"],
    );
    run(
        "notile.csv",
        Some("M,N,K,dtype\n1,2,3,fp16\n"),
        "ws",
        &["notile.csv", "'tile'"],
    );
    run(
        "nonnum.csv",
        Some("M,N,K,dtype\n1,2,zz,fp16\n"),
        "sol",
        &["nonnum.csv", "line 2", "'K'", "zz"],
    );
    run(
        "zero.csv",
        Some("M,N,K,dtype\n0,2,3,fp16\n"),
        "sol",
        &["zero.csv", "'M'"],
    );
    run(
        "ragged.csv",
        Some("M,N,K,dtype\n1,2,3\n"),
        "sol",
        &["ragged.csv", "line 2", "malformed"],
    );
    run(
        "dtype.csv",
        Some("M,N,K,dtype\n1,2,3,fp64\n"),
        "sol",
        &["dtype.csv", "fp64"],
    );
    run(
        "meas.csv",
        Some("M,N,K,dtype,measured_us\n1,2,3,fp16,-1\n"),
        "sol",
        &["meas.csv", "measured_us"],
    );
    run(
        "cluster.csv",
        Some("M,N,K,dtype,tile,cluster\n64,64,64,fp16,64x64,2\n"),
        "ws",
        &["cluster.csv", "'cluster'"],
    );
    run(
        "empty.csv",
        Some("M,N,K,dtype\n"),
        "sol",
        &["empty.csv", "no data rows"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn no_args_is_usage_error() {
    cmd().assert().code(2);
    cmd().arg("--help").assert().success();
}

#[test]
fn usage_errors_are_one_line() {
    for (args, needle) in [
        (&["--bogus"][..], "unexpected argument '--bogus'"),
        (
            &[
                "ws", "1", "1", "1", "--dtype", "fp16", "--tile", "64x64", "--gpu", "h200",
                "--bogus",
            ][..],
            "unexpected argument '--bogus'",
        ),
        (&["roofline", "1", "1", "1"][..], "--dtype <DTYPE>"),
        (&[][..], "a command is required: roofline, ws, model"),
        (&["sol"][..], "'sol'"),
    ] {
        let o = cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("origami-predict: error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
    for flag in ["--help", "-h", "--version", "-V"] {
        let o = cmd().arg(flag).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{flag}");
        assert!(!o.stdout.is_empty() && o.stderr.is_empty(), "{flag}");
    }
}

/// The `--help` of `args`, which must exit 0.
fn help_of(args: &[&str]) -> String {
    let o = cmd().args(args).arg("--help").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{args:?}");
    String::from_utf8(o.stdout).unwrap()
}

/// The example command lines under "Examples:" in a help text, without the tool's name.
fn examples(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Examples:"))
        .filter_map(|l| l.trim().strip_prefix("origami-predict "))
        .map(str::to_string)
        .collect()
}

/// Every example of `--help` and of each subcommand's `--help` runs and exits 0 (in a
/// fresh folder holding a copy of the repository's `data/`, where the examples' files
/// live and their outputs go); every help lists the exit codes.
#[test]
fn help_examples_run() {
    let top = help_of(&[]);
    let mut all = examples(&top);
    assert!(all.len() >= 3, "{top}");
    for sub in ["roofline", "ws", "model"] {
        let h = help_of(&[sub]);
        assert!(
            h.contains("Exit codes: 0 ok, 1 runtime failure, 2 bad input."),
            "{sub}: {h}"
        );
        let ex = examples(&h);
        assert!(ex.len() >= 2, "{sub}: {h}");
        assert!(ex.iter().all(|e| e.starts_with(sub)), "{sub}: {ex:?}");
        all.extend(ex);
    }
    assert!(top.contains("Exit codes: 0 ok, 1 runtime failure, 2 bad input."));
    all.sort();
    all.dedup();
    let d = tmpdir("examples");
    std::fs::create_dir_all(d.join("data")).unwrap();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for e in std::fs::read_dir(repo.join("data")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, d.join("data").join(p.file_name().unwrap())).unwrap();
    }
    for e in &all {
        let o = cmd()
            .current_dir(&d)
            .args(e.split_whitespace())
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "origami-predict {e}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!o.stdout.is_empty(), "origami-predict {e}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
