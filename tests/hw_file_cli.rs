//! One validation of hardware files for every tool: a file `origami-calibrate --check`
//! passes is one `origami-select` accepts through `TRITONBLAS_HW_PARAMS`, and a file the
//! selector refuses is refused by `--check` with exit 2 and the same reason (the file and
//! field named). `--check` adds its own checks of a calibration on top.

use assert_cmd::Command;
use std::path::PathBuf;

fn tmpfile(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("origami-hw-file-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Exit code and stderr of `origami-select 4096 4096 4096` with the file.
fn select(file: &PathBuf) -> (Option<i32>, String) {
    let out = Command::cargo_bin("origami-select")
        .unwrap()
        .args(["4096", "4096", "4096"])
        .env("TRITONBLAS_HW_PARAMS", file)
        .env("ORIGAMI_NO_GPU", "1")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Exit code and stderr of `origami-calibrate --check FILE`.
fn check(file: &PathBuf) -> (Option<i32>, String) {
    let out = Command::cargo_bin("origami-calibrate")
        .unwrap()
        .arg("--check")
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The one error line of a failed run, its tool's prefix taken off.
fn reason(stderr: &str, prefix: &str) -> String {
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "one line starting '{prefix}' expected: {stderr}"
    );
    lines[0].to_string()
}

/// A preset with `constants` set to this JSON object and `gpu`'s fields changed.
fn full(constants: &str, gpu: &[(&str, serde_json::Value)]) -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(include_str!("../calibrations/a100.json")).unwrap();
    v["constants"] = serde_json::from_str(constants).unwrap();
    for (k, x) in gpu {
        v["gpu"][*k] = x.clone();
    }
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn bad_files_are_refused_by_both_tools_with_the_same_reason() {
    let constants = [
        (
            "tie_band",
            r#"{"tie_band": 5}"#,
            "field 'constants.tie_band': must be at most 1 (got 5)",
        ),
        (
            "unknown",
            r#"{"tie_bandd": 0.01}"#,
            "field 'constants.tie_bandd': unknown constant (known: ",
        ),
        (
            "negative",
            r#"{"loop_overhead_cycles": -3}"#,
            "field 'constants.loop_overhead_cycles': must be a finite non-negative number (got -3)",
        ),
        (
            "smooth",
            r#"{"tp_smooth_exponent": 0.5}"#,
            "field 'constants.tp_smooth_exponent': must be 0 (off) or at least 1 (got 0.5)",
        ),
        (
            "switch",
            r#"{"throughput_model": 2}"#,
            "field 'constants.throughput_model': must be 0 or 1 (got 2)",
        ),
    ];
    let mut cases: Vec<(String, String, String)> = Vec::new();
    for (name, c, want) in constants {
        cases.push((
            format!("flat-{name}"),
            format!(r#"{{"constants": {c}}}"#),
            want.into(),
        ));
        cases.push((format!("full-{name}"), full(c, &[]), want.into()));
    }
    // Numbers JSON cannot hold, and text where a number belongs.
    cases.push((
        "flat-huge".into(),
        r#"{"constants": {"tie_band": 1e999}}"#.into(),
        "not valid JSON: number out of range".into(),
    ));
    cases.push((
        "flat-nan-text".into(),
        r#"{"constants": {"tie_band": "NaN"}}"#.into(),
        "field 'constants.tie_band': must be a number".into(),
    ));
    cases.push((
        "full-nan-text".into(),
        full(r#"{"tie_band": "NaN"}"#, &[]),
        "invalid type: string \"NaN\", expected f64".into(),
    ));
    cases.push((
        "flat-param".into(),
        r#"{"dram_perf_ratio": -1}"#.into(),
        "field 'dram_perf_ratio': must be positive (got -1)".into(),
    ));
    cases.push((
        "full-smem".into(),
        full("{}", &[("smem_per_block_optin_bytes", 4096.into())]),
        "field 'gpu.smem_per_block_optin_bytes': must be at least 49152".into(),
    ));
    cases.push((
        "full-registers".into(),
        full("{}", &[("max_registers_per_thread", 8.into())]),
        "field 'gpu.max_registers_per_thread': must be 63 to 255".into(),
    ));
    for (name, text, want) in &cases {
        let f = tmpfile(&format!("{name}.json"), text);
        let (sel_code, sel_err) = select(&f);
        let (chk_code, chk_err) = check(&f);
        assert_eq!(sel_code, Some(2), "{name}: select: {sel_err}");
        assert_eq!(chk_code, Some(2), "{name}: check: {chk_err}");
        let from_select = reason(&sel_err, "origami-select: error: TRITONBLAS_HW_PARAMS: ");
        let from_check = reason(&chk_err, "origami-calibrate: error: check failed: ");
        assert_eq!(from_select, from_check, "{name}");
        let file = f.display().to_string();
        assert!(
            from_select.starts_with(&format!("{file}: ")) && from_select.contains(want.as_str()),
            "{name}: '{want}' not in: {from_select}"
        );
    }
}

#[test]
fn good_files_are_accepted_by_both_tools() {
    let committed = ["calibrations/a100.json", "calibrations/h200.json"]
        .map(|f| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(f));
    let tuned = tmpfile(
        "tuned.json",
        &full(
            r#"{"tie_band": 0.02, "tp_smooth_exponent": 2, "throughput_model": 1, "occupancy": 2}"#,
            &[
                ("smem_per_block_optin_bytes", 49152.into()),
                ("max_registers_per_thread", 63.into()),
            ],
        ),
    );
    for f in committed.iter().chain([&tuned]) {
        let (code, err) = check(f);
        assert_eq!(code, Some(0), "check {}: {err}", f.display());
        let (code, err) = select(f);
        assert_eq!(code, Some(0), "select {}: {err}", f.display());
    }
}
