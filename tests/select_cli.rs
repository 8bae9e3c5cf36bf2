//! CLI tests of `origami-select`: every output format and every bad input this project
//! handles (exit 2 and one line naming the argument, file and field; never a panic).

use assert_cmd::Command;
use predicates::prelude::*;
use std::io::Write;

fn cmd() -> Command {
    let mut c = Command::cargo_bin("origami-select").unwrap();
    c.env_remove("TRITONBLAS_HW_PARAMS")
        .env("ORIGAMI_NO_GPU", "1");
    c
}

fn tmpfile(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("origami-select-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    p
}

/// A failing run: exit 2, one stderr line containing every `needles`, no panic.
fn fails_with(args: &[&str], env: Option<(&str, &str)>, needles: &[&str]) {
    let mut c = cmd();
    c.args(args);
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "args {args:?}: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<_> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(lines.len(), 1, "one error line expected: {err}");
    for n in needles {
        assert!(err.contains(n), "args {args:?}: '{n}' not in: {err}");
    }
}

#[test]
fn default_runs_without_gpu_and_says_so() {
    cmd()
        .args(["4096", "4096", "4096"])
        .assert()
        .success()
        .stdout(predicate::str::contains("pick:"))
        .stderr(predicate::str::contains("no GPU found").and(predicate::str::contains("h100-sxm")));
}

#[test]
fn triton_format_has_exactly_the_launch_keys() {
    let out = cmd()
        .args(["4096", "4096", "4096", "--format", "triton"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "BLOCK_SIZE_K",
            "BLOCK_SIZE_M",
            "BLOCK_SIZE_N",
            "GROUP_SIZE_M",
            "num_stages",
            "num_warps"
        ]
    );
}

#[test]
fn json_format_has_latency_and_tiers() {
    let out = cmd()
        .args(["1024", "2048", "512", "--format", "json", "--gpu", "h200"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["pick"]["predicted_cycles"].as_f64().unwrap() > 0.0);
    assert!(v["pick"]["predicted_us"].as_f64().unwrap() > 0.0);
    assert_eq!(v["params"]["l2_perf_ratio"]["tier"], "preset");
}

#[test]
fn csv_and_all_list_rejected_with_reasons() {
    let out = cmd()
        .args(["4096", "4096", "4096", "--format", "csv", "--all"])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.starts_with("rank,BLOCK_SIZE_M"));
    assert!(
        s.contains("spills"),
        "256x256 tiles must be listed as spilling"
    );
    assert!(s.contains("shared memory"));
}

#[test]
fn explain_shows_tiers_and_algorithms() {
    let f = tmpfile("flat.json", r#"{"mma_latency": 30}"#);
    cmd()
        .args(["2048", "2048", "2048", "--gpu", "rtx4090", "--explain"])
        .env("TRITONBLAS_HW_PARAMS", &f)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("[Algorithm 5]")
                .and(predicate::str::contains("Phase 2"))
                .and(predicate::str::contains(
                    "mma_latency          = 30.0000      [file",
                ))
                .and(predicate::str::contains("[preset rtx4090 (estimated)]")),
        );
}

#[test]
fn committed_throughput_fit_loads_and_scores_every_launch() {
    // The fitted files turn the throughput model on; the explain walk-through names it, and
    // the pick is a config of the family that does not spill.
    let root = env!("CARGO_MANIFEST_DIR");
    for (file, family) in [
        ("h200-origami.json", "origami"),
        ("h200-triton-throughput.json", "triton"),
    ] {
        let f = format!("{root}/calibrations/fitted/{file}");
        let txt = cmd()
            .args([
                "4096",
                "4096",
                "4096",
                "--gpu",
                "h200",
                "--family",
                family,
                "--explain",
            ])
            .env("TRITONBLAS_HW_PARAMS", &f)
            .output()
            .unwrap();
        let t = String::from_utf8_lossy(&txt.stdout);
        assert!(t.contains("[Throughput model]"), "{file}: {t}");
        assert!(t.contains("blocks resident per SM"), "{file}: {t}");
    }
}

#[test]
fn fitted_constants_apply_on_their_architecture_unless_told_not_to() {
    let explain = |extra: &[&str]| {
        let out = cmd()
            .args(["4096", "4096", "4096", "--explain"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    // Hopper, triton family (the default): the embedded triton fit scores every launch.
    let t = explain(&["--gpu", "h200"]);
    assert!(
        t.contains("[fitted calibrations/fitted/h200-triton-throughput.json"),
        "{t}"
    );
    assert!(t.contains("[Throughput model]"), "{t}");
    let t = explain(&["--gpu", "h100-sxm", "--family", "origami"]);
    assert!(
        t.contains("[fitted calibrations/fitted/h200-origami.json"),
        "{t}"
    );
    // --no-fitted: the model as published; other architectures have no fit.
    let t = explain(&["--gpu", "h200", "--no-fitted"]);
    assert!(
        !t.contains("[Throughput model]") && !t.contains("fitted calibrations"),
        "{t}"
    );
    let t = explain(&["--gpu", "a100"]);
    assert!(!t.contains("[Throughput model]"), "{t}");
    // A file's constants win over the fitted ones.
    let f = tmpfile("off.json", r#"{"constants": {"throughput_model": 0}}"#);
    let out = cmd()
        .args(["4096", "4096", "4096", "--gpu", "h200", "--explain"])
        .env("TRITONBLAS_HW_PARAMS", &f)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(!t.contains("[Throughput model]"), "{t}");
}

#[test]
fn batch_mode_one_row_per_shape() {
    let f = tmpfile(
        "shapes.csv",
        "M,N,K,dtype\n64,64,64,\n4096,4096,4096,bf16\n1000,3000,777,fp8\n",
    );
    let out = cmd()
        .args(["--shapes", f.to_str().unwrap(), "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let s = String::from_utf8(out.stdout).unwrap();
    assert_eq!(s.lines().count(), 4);
    assert!(s
        .lines()
        .nth(2)
        .unwrap()
        .starts_with("4096,4096,4096,bf16,"));
}

#[test]
fn bad_sizes() {
    fails_with(&["0", "4096", "4096"], None, &["M", "at least 1"]);
    fails_with(&["4096", "-1", "4096"], None, &["N", "negative"]);
    fails_with(&["4096", "4096", "abc"], None, &["K", "not a whole number"]);
    fails_with(&["4096", "4096", "4294967296"], None, &["K", "2^31"]);
    fails_with(&["4096", "4096"], None, &["M N K"]);
}

#[test]
fn unknown_names_list_the_known_ones() {
    fails_with(
        &["64", "64", "64", "--dtype", "fp64"],
        None,
        &["--dtype", "fp64", "bf16"],
    );
    fails_with(
        &["64", "64", "64", "--family", "cutlass"],
        None,
        &["--family", "cutlass", "triton", "origami", "seed"],
    );
    fails_with(
        &["64", "64", "64", "--family", "origami", "--dtype", "fp8"],
        None,
        &[
            "--family origami",
            "takes fp16, bf16 or tf32 inputs, not fp8",
        ],
    );
    fails_with(
        &["64", "64", "64", "--gpu", "v100"],
        None,
        &["--gpu", "v100", "h100-sxm", "rtx4090"],
    );
    fails_with(
        &["64", "64", "64", "--model", "x"],
        None,
        &["--model", "origami"],
    );
}

#[test]
fn bad_hardware_files() {
    let env = "TRITONBLAS_HW_PARAMS";
    let a = ["64", "64", "64"];
    fails_with(
        &a,
        Some((env, "/nonexistent/hw.json")),
        &[env, "/nonexistent/hw.json"],
    );
    let f = tmpfile("notjson.json", "{ l2: ");
    fails_with(
        &a,
        Some((env, f.to_str().unwrap())),
        &["notjson.json", "not valid JSON"],
    );
    let f = tmpfile("typo.json", r#"{"l2_perf_ratoi": 3000}"#);
    fails_with(
        &a,
        Some((env, f.to_str().unwrap())),
        &["typo.json", "l2_perf_ratoi", "unknown field"],
    );
    let f = tmpfile("neg.json", r#"{"dram_perf_ratio": -1}"#);
    fails_with(
        &a,
        Some((env, f.to_str().unwrap())),
        &["neg.json", "dram_perf_ratio", "positive"],
    );
    let full = include_str!("../calibrations/rtx4090.json")
        .replace("\"mma_latency\": 33.0", "\"mma_latencyy\": 33.0");
    let f = tmpfile("full_typo.json", &full);
    fails_with(
        &a,
        Some((env, f.to_str().unwrap())),
        &["full_typo.json", "mma_latencyy"],
    );
    let missing = include_str!("../calibrations/rtx4090.json").replace("\"sm_count\": 128,", "");
    let f = tmpfile("missing.json", &missing);
    fails_with(
        &a,
        Some((env, f.to_str().unwrap())),
        &["missing.json", "missing field", "sm_count"],
    );
    let f = tmpfile(
        "zero_bw.json",
        &include_str!("../calibrations/rtx4090.json")
            .replace("\"l2_perf_ratio\": 1896.0", "\"l2_perf_ratio\": 0.0"),
    );
    fails_with(
        &a,
        Some((env, f.to_str().unwrap())),
        &["zero_bw.json", "params.l2_perf_ratio", "positive"],
    );
    let f = tmpfile("badconst.json", r#"{"constants": {"loop_overhead": 3}}"#);
    fails_with(
        &a,
        Some((env, f.to_str().unwrap())),
        &["constants.loop_overhead", "unknown constant"],
    );
}

#[test]
fn bad_shape_files() {
    fails_with(
        &["--shapes", "/nonexistent/s.csv"],
        None,
        &["--shapes", "/nonexistent/s.csv"],
    );
    let f = tmpfile("cols.csv", "M,N\n1,2\n");
    fails_with(
        &["--shapes", f.to_str().unwrap()],
        None,
        &["cols.csv", "missing column"],
    );
    let f = tmpfile("val.csv", "M,N,K\n1,2,0\n");
    fails_with(
        &["--shapes", f.to_str().unwrap()],
        None,
        &["val.csv", "line 2", "K"],
    );
    let f = tmpfile("nvfp4.csv", "M,N,K,dtype\n1,2,3,nvfp4\n");
    fails_with(
        &["--shapes", f.to_str().unwrap()],
        None,
        &["nvfp4", "not supported"],
    );
}

#[test]
fn describe_lists_the_gpu_parameters_and_every_constant() {
    let out = cmd()
        .args([
            "--describe",
            "--gpu",
            "h200",
            "--family",
            "origami",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["gpu"]["sm_count"], 132);
    assert_eq!(j["family"], "origami");
    assert_eq!(j["params"]["mma_latency"]["tier"], "preset");
    let constants = j["constants"].as_array().unwrap();
    assert_eq!(constants.len(), origami::constants::CONSTANT_NAMES.len());
    // The fitted tier of the origami family on Hopper turns the throughput model on.
    let tm = constants
        .iter()
        .find(|c| c["name"] == "throughput_model")
        .unwrap();
    assert_eq!(
        (tm["value"].as_f64(), tm["tier"].as_str()),
        (Some(1.0), Some("fitted"))
    );
    // With --no-fitted every constant is the table's default.
    let out = cmd()
        .args([
            "--describe",
            "--gpu",
            "h200",
            "--no-fitted",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(j["constants"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["tier"] == "default" && c["value"] == c["default"]));
    let text = cmd()
        .args(["--describe", "--gpu", "a100"])
        .output()
        .unwrap();
    assert_eq!(text.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&text.stdout).contains("tp_time_scale"));
}

#[test]
fn describe_refuses_shapes_and_other_formats() {
    fails_with(
        &["--describe", "--format", "csv"],
        None,
        &["--describe", "text or json"],
    );
    let out = cmd()
        .args(["--describe", "4096", "4096", "4096"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// stdout and stderr of a successful run with `TRITONBLAS_HW_PARAMS` set to `file`.
fn run_with_file(args: &[&str], file: &std::path::Path) -> (String, String) {
    let out = cmd()
        .args(args)
        .env("TRITONBLAS_HW_PARAMS", file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "args {args:?}: {out:?}");
    (
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_full_document_is_said_to_supply_the_hardware_and_wins_over_gpu() {
    let f = tmpfile("full-h200.json", include_str!("../calibrations/h200.json"));
    let shown = f.display().to_string();
    let shape = ["4096", "4096", "4096", "--format", "json"];
    let (alone, err) = run_with_file(&shape, &f);
    assert_eq!(
        err,
        format!(
            "origami-select: hardware from the full document {shown} (TRITONBLAS_HW_PARAMS) ('NVIDIA H200')\n"
        )
    );
    let mut with_gpu = shape.to_vec();
    with_gpu.extend(["--gpu", "a100"]);
    let (out, err) = run_with_file(&with_gpu, &f);
    assert_eq!(
        err,
        format!(
            "origami-select: hardware from the full document {shown} (TRITONBLAS_HW_PARAMS) ('NVIDIA H200'); --gpu a100 is ignored\n"
        )
    );
    // The file's hardware is used, and stdout carries no notice.
    assert_eq!(out, alone);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(j.to_string().contains("NVIDIA H200"), "{out}");
    assert!(!j.to_string().contains("A100"), "{out}");
    // --describe says it too.
    let (_, err) = run_with_file(&["--describe", "--gpu", "b200"], &f);
    assert!(err.ends_with("; --gpu b200 is ignored\n"), "{err}");
}

#[test]
fn a_flat_override_is_said_with_its_preset() {
    let f = tmpfile(
        "flat-some.json",
        r#"{"mma_latency": 30, "constants": {"tie_band": 0.02}}"#,
    );
    let shown = f.display().to_string();
    let (out, err) = run_with_file(&["4096", "4096", "4096", "--gpu", "a100"], &f);
    assert_eq!(
        err,
        format!(
            "origami-select: preset 'a100' with 1 parameter and 1 constant from {shown} (TRITONBLAS_HW_PARAMS)\n"
        )
    );
    assert!(out.contains("pick:"), "{out}");
    let (_, err) = run_with_file(&["4096", "4096", "4096"], &f);
    assert!(
        err.starts_with(&format!(
            "origami-select: no GPU found; using the embedded preset 'h100-sxm' with 1 parameter and 1 constant from {shown} (TRITONBLAS_HW_PARAMS) (choose the preset with --gpu NAME: "
        )) && err.lines().count() == 1,
        "{err}"
    );
    // No file, a named preset: nothing to say.
    let out = cmd()
        .args(["4096", "4096", "4096", "--gpu", "a100"])
        .output()
        .unwrap();
    assert!(out.stderr.is_empty(), "{out:?}");
}

#[test]
fn the_origami_family_refuses_what_its_kernel_cannot_run_with_the_runners_reason() {
    let reason = "K = 7 is not a multiple of 8: the origami kernel loads rows of A and B in 16-byte chunks (docs/gemm-kernel.md, alignment rule); pad K to 8";
    // The runner's line (refused before any GPU is looked for).
    let out = Command::cargo_bin("origami-bench")
        .unwrap()
        .args(["run", "128", "128", "7"])
        .env("ORIGAMI_NO_GPU", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("origami-bench: error: {reason}\n")
    );
    // The selector's: the same reason after the flag it comes from.
    let out = cmd()
        .args(["--family", "origami", "128", "128", "7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("origami-select: error: --family origami: {reason}\n")
    );
    fails_with(
        &["--family", "origami", "2147483648", "64", "64"],
        None,
        &["M = 2147483648 does not fit the kernel's int argument"],
    );
    // Batch mode: one bad row refuses the whole list, naming its line; nothing is written.
    let f = tmpfile("k7.csv", "M,N,K\n# one comment\n64,64,64\n\n128,128,7\n");
    for fmt in ["text", "csv", "json"] {
        let out = cmd()
            .args(["--family", "origami", "--shapes", f.to_str().unwrap()])
            .args(["--format", fmt])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(out.stdout.is_empty(), "{fmt}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "origami-select: error: --shapes {}: line 5: --family origami: {reason}\n",
                f.display()
            )
        );
    }
    // Triton's kernel masks its loads along K, and the seed family has no kernel here: both
    // rank K = 7.
    for fam in ["triton", "seed"] {
        cmd()
            .args(["--family", fam, "128", "128", "7"])
            .assert()
            .success();
        cmd()
            .args(["--family", fam, "--shapes", f.to_str().unwrap()])
            .assert()
            .success();
    }
}

/// Exit 2 and exactly one line on stderr (nothing else), containing every needle.
fn one_line_usage_error(args: &[&str], needles: &[&str]) {
    let out = cmd().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "args {args:?}: {out:?}");
    assert!(out.stdout.is_empty(), "args {args:?}: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one stderr line expected: {err}");
    assert!(err.starts_with("origami-select: error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "args {args:?}: '{n}' not in: {err}");
    }
}

#[test]
fn usage_errors_are_one_line_and_help_and_version_exit_0() {
    one_line_usage_error(&["--bogus"], &["unexpected argument '--bogus'"]);
    one_line_usage_error(
        &["4096", "4096", "4096", "--bogus"],
        &["unexpected argument '--bogus'"],
    );
    one_line_usage_error(&["1", "2", "3", "--top", "x"], &["'x'", "--top"]);
    one_line_usage_error(
        &["1", "2", "3", "--format", "yaml"],
        &["'yaml'", "[possible values: text, json, csv, triton]"],
    );
    one_line_usage_error(&["1", "2", "3", "--gpu"], &["--gpu"]);
    for flag in ["--help", "-h", "--version", "-V"] {
        let out = cmd().arg(flag).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{flag}");
        assert!(!out.stdout.is_empty() && out.stderr.is_empty(), "{flag}");
    }
}

#[test]
fn help_documents_the_batch_choices_and_its_examples_run() {
    let out = cmd().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("refused with --shapes"), "{help}");
    assert!(help.contains("N ranked rows per"), "{help}");
    // The examples that need no file of the user's run from the repository root.
    let examples: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Examples:"))
        .filter_map(|l| l.trim().strip_prefix("origami-select "))
        .collect();
    assert!(examples.len() >= 4, "{help}");
    for e in examples {
        let out = cmd().args(e.split_whitespace()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "origami-select {e}: {out:?}");
    }
}

#[test]
fn a_batch_refuses_explain_all_and_ranked_triton_in_one_line() {
    let f = tmpfile("refuse.csv", "M,N,K\n64,64,64\n");
    let f = f.to_str().unwrap();
    let gpu = ["--gpu", "h200"];
    for (flags, needle) in [
        (vec!["--explain"], "--explain walks through one shape"),
        (vec!["--all"], "--all lists every candidate of one shape"),
        (vec!["--all", "--top", "3"], "--all"),
        (vec!["--top", "0"], "--top: must be at least 1"),
        (
            vec!["--top", "2", "--format", "triton"],
            "--format triton prints one launch per shape",
        ),
    ] {
        let mut args = vec!["--shapes", f];
        args.extend(gpu);
        args.extend(flags);
        one_line_usage_error(&args, &[needle]);
    }
}

#[test]
fn a_batch_with_top_writes_n_ranked_rows_per_shape() {
    let f = tmpfile("top.csv", "M,N,K,dtype\n64,64,64,\n4096,4096,4096,bf16\n");
    let f = f.to_str().unwrap();
    let run = |format: &str, top: Option<&str>| {
        let mut c = cmd();
        c.args(["--shapes", f, "--gpu", "h200", "--format", format]);
        if let Some(t) = top {
            c.args(["--top", t]);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{format} {top:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let csv = run("csv", Some("3"));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 2 * 3, "{csv}");
    assert!(
        lines[0].starts_with("M,N,K,dtype,rank,BLOCK_SIZE_M,"),
        "{csv}"
    );
    assert!(lines[3].starts_with("64,64,64,fp16,3,"), "{csv}");
    assert!(lines[4].starts_with("4096,4096,4096,bf16,1,"), "{csv}");
    // without --top: the pick alone, no rank column (unchanged)
    let picks = run("csv", None);
    assert_eq!(picks.lines().count(), 3);
    assert!(picks.starts_with("M,N,K,dtype,BLOCK_SIZE_M,"), "{picks}");

    let json: serde_json::Value = serde_json::from_str(&run("json", Some("2"))).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let ranks: Vec<u64> = rows.iter().map(|r| r["rank"].as_u64().unwrap()).collect();
    assert_eq!(ranks, [1, 2, 1, 2]);
    assert_eq!(rows[3]["problem"]["dtype"], "bf16");
    assert!(rows[3]["config"]["BLOCK_SIZE_M"].is_number());

    let text = run("text", Some("2"));
    assert_eq!(text.lines().count(), 1 + 2 * 2, "{text}");
    assert!(text.lines().next().unwrap().contains(" rank "), "{text}");
}

// ------------------------------------------------- triton-tma's switches, triton-auto

/// stdout of a successful run on the H100 preset (the one Hopper GPU the TMA kernel's
/// compiled table covers).
fn h100(args: &[&str]) -> String {
    let out = cmd()
        .args(args)
        .args(["--gpu", "h100-sxm"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

const SWITCHES: [&str; 3] = ["WARP_SPECIALIZE", "FLATTEN", "EPILOGUE_SUBTILE"];

#[test]
fn triton_tma_writes_its_switches_in_every_format() {
    let shape = ["4096", "4096", "4096", "--family", "triton-tma"];
    let with = |extra: &[&str]| h100(&[&shape[..], extra].concat());

    // csv: the switch columns tell the FLATTEN variant of a config from the plain one
    let csv = with(&["--format", "csv", "--all"]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &header[6..10],
        [
            "num_stages",
            "WARP_SPECIALIZE",
            "FLATTEN",
            "EPILOGUE_SUBTILE"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let keys: std::collections::HashSet<Vec<&str>> =
        rows.iter().map(|r| r[1..10].to_vec()).collect();
    assert_eq!(keys.len(), rows.len(), "every row is a different launch");
    assert!(rows.iter().any(|r| r[8] == "true") && rows.iter().any(|r| r[8] == "false"));

    // text: every row's columns line up with the header, the longest config included
    let text = with(&["--all"]);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("rank"))
        .take_while(|l| !l.starts_with("rejected"))
        .collect();
    let cycles_end = table[0].find("cycles").unwrap() + "cycles".len();
    assert!(table.len() > 10);
    for l in &table[1..] {
        let end = l[..cycles_end].trim_end().len();
        assert_eq!(end, cycles_end, "'cycles' column misaligned: {l}");
        assert_eq!(l.as_bytes()[cycles_end], b' ', "{l}");
    }
    assert!(table.iter().any(|l| l.contains(",flatten ")), "{text}");

    // json: every config has the three switches
    let v: serde_json::Value = serde_json::from_str(&with(&["--format", "json"])).unwrap();
    for c in v["ranked"].as_array().unwrap().iter().chain([&v["pick"]]) {
        for s in SWITCHES {
            assert!(c[s].is_boolean(), "{s} in {c}");
        }
    }
    assert_eq!(v["kernel"], "matmul_tma_persistent_kernel");

    // triton: the named launch with the kernel's constexprs and NUM_PROGRAMS = the SMs
    let t: serde_json::Value = serde_json::from_str(&with(&["--format", "triton"])).unwrap();
    assert_eq!(t["kernel"], "matmul_tma_persistent_kernel");
    assert_eq!(t["family"], "triton-tma");
    assert_eq!(t["grid"], serde_json::json!([132]));
    let kw = t["kwargs"].as_object().unwrap();
    assert_eq!(kw.len(), 10, "{kw:?}");
    assert_eq!(kw["NUM_PROGRAMS"], 132);
    for s in SWITCHES {
        assert!(kw[s].is_boolean(), "{s}");
    }
    assert_eq!(kw["BLOCK_SIZE_M"], v["pick"]["BLOCK_SIZE_M"]);
    assert_eq!(kw["FLATTEN"], v["pick"]["FLATTEN"]);
}

#[test]
fn the_classic_family_keeps_its_columns() {
    let csv = h100(&["4096", "4096", "4096", "--format", "csv", "--top", "1"]);
    assert!(
        !csv.contains("FLATTEN") && !csv.starts_with("family"),
        "{csv}"
    );
    let t: serde_json::Value =
        serde_json::from_str(&h100(&["4096", "4096", "4096", "--format", "triton"])).unwrap();
    assert!(
        t.get("kernel").is_none() && t.get("FLATTEN").is_none(),
        "{t}"
    );
}

#[test]
fn triton_auto_names_the_kernel_it_chose() {
    let auto = ["--family", "triton-auto"];
    // K = 4095: only the tutorial kernel runs it
    let t: serde_json::Value = serde_json::from_str(&h100(
        &[
            &["4096", "4096", "4095"][..],
            &auto,
            &["--format", "triton"],
        ]
        .concat(),
    ))
    .unwrap();
    assert_eq!(t["kernel"], "matmul_kernel");
    assert_eq!(t["family"], "triton");
    assert_eq!(t["kwargs"].as_object().unwrap().len(), 6, "{t}");
    // The classic kernel's grid: one program per tile.
    let tiles = |size: u64, key: &str| size.div_ceil(t["kwargs"][key].as_u64().unwrap());
    assert_eq!(
        t["grid"],
        serde_json::json!([tiles(4096, "BLOCK_SIZE_M") * tiles(4096, "BLOCK_SIZE_N")])
    );

    let text = h100(&[&["4096", "4096", "4095"][..], &auto].concat());
    assert!(text.contains("family triton,"), "{text}");
    assert!(text.contains("triton-auto: triton chosen"), "{text}");
    assert!(text.contains("triton-tma: not run: K = 4095"), "{text}");

    // an A of 2^31 elements: only the TMA kernel runs it
    let big = ["65536", "64", "32768"];
    let t: serde_json::Value =
        serde_json::from_str(&h100(&[&big[..], &auto, &["--format", "triton"]].concat())).unwrap();
    assert_eq!(t["kernel"], "matmul_tma_persistent_kernel");
    assert_eq!(t["kwargs"]["NUM_PROGRAMS"], 132);
    let v: serde_json::Value =
        serde_json::from_str(&h100(&[&big[..], &auto, &["--format", "json"]].concat())).unwrap();
    assert_eq!(v["family"], "triton-tma");
    assert_eq!(v["auto"]["chosen"], "triton-tma");
    let entrants = v["auto"]["entrants"].as_array().unwrap();
    assert_eq!(entrants[0]["family"], "triton");
    assert!(entrants[0]["not_run"]
        .as_str()
        .unwrap()
        .contains("32-bit offsets"));
    assert_eq!(entrants[1]["pick"], v["pick"]);
    let csv = h100(&[&big[..], &auto, &["--format", "csv", "--top", "2"]].concat());
    assert!(csv.starts_with("family,rank,BLOCK_SIZE_M,"), "{csv}");
    assert!(
        csv.lines().skip(1).all(|l| l.starts_with("triton-tma,")),
        "{csv}"
    );
    let walk = h100(&[&big[..], &auto, &["--explain"]].concat());
    assert!(walk.contains("== Kernel choice (triton-auto)"), "{walk}");

    // aligned: both run; the pick is the faster of the two families' picks
    let v: serde_json::Value = serde_json::from_str(&h100(
        &[&["4096", "4096", "4096"][..], &auto, &["--format", "json"]].concat(),
    ))
    .unwrap();
    let times: Vec<f64> = v["auto"]["entrants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pick"]["predicted_us"].as_f64().unwrap())
        .collect();
    assert_eq!(times.len(), 2);
    let best = times[0].min(times[1]);
    assert_eq!(v["pick"]["predicted_us"].as_f64().unwrap(), best);
    for (fam, fmt) in [("triton", "text"), ("triton-tma", "text")] {
        let alone = h100(&["4096", "4096", "4096", "--family", fam, "--format", fmt]);
        assert!(alone.contains("pick: "), "{alone}");
    }
}

#[test]
fn triton_auto_batches_carry_the_family() {
    let f = tmpfile(
        "auto.csv",
        "M,N,K,dtype\n4096,4096,4096,fp16\n4096,4096,4095,\n65536,64,32768,bf16\n64,64,64,fp32\n",
    );
    let f = f.to_str().unwrap();
    let run =
        |extra: &[&str]| h100(&[&["--shapes", f, "--family", "triton-auto"][..], extra].concat());
    let csv = run(&["--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("M,N,K,dtype,family,BLOCK_SIZE_M,"),
        "{csv}"
    );
    assert!(lines[0].contains(",num_stages,WARP_SPECIALIZE,FLATTEN,EPILOGUE_SUBTILE,"));
    assert!(lines[2].starts_with("4096,4096,4095,fp16,triton,"), "{csv}");
    assert!(
        lines[3].starts_with("65536,64,32768,bf16,triton-tma,"),
        "{csv}"
    );
    assert!(lines[4].starts_with("64,64,64,fp32,triton,"), "{csv}");
    let ranked = run(&["--format", "csv", "--top", "2"]);
    assert_eq!(ranked.lines().count(), 1 + 4 * 2);
    assert!(ranked.starts_with("M,N,K,dtype,family,rank,"), "{ranked}");

    let json: serde_json::Value = serde_json::from_str(&run(&["--format", "json"])).unwrap();
    let fams: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["family"].as_str().unwrap())
        .collect();
    assert_eq!(fams[1..], ["triton", "triton-tma", "triton"]);

    let launches = run(&["--format", "triton"]);
    let kernels: Vec<String> = launches
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kernel"].to_string())
        .collect();
    assert_eq!(kernels.len(), 4);
    assert_eq!(kernels[2], "\"matmul_tma_persistent_kernel\"");

    // text: the family column and the config column line up with the header
    let text = run(&["--top", "2"]);
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let col = |name: &str| header.find(name).unwrap();
    for l in lines {
        assert_ne!(l.as_bytes()[col("family")], b' ', "{header}\n{l}");
        assert_ne!(l.as_bytes()[col("config")], b' ', "{header}\n{l}");
        assert_eq!(l.as_bytes()[col("config") - 1], b' ', "{header}\n{l}");
    }
}

#[test]
fn triton_auto_refuses_in_one_line() {
    let auto = ["--family", "triton-auto", "--gpu", "h100-sxm"];
    one_line_usage_error(
        &[&["4096", "4096", "4096", "--all"][..], &auto].concat(),
        &[
            "--all lists every candidate of one family",
            "triton and triton-tma",
        ],
    );
    // neither kernel: A too large for the tutorial kernel, K unaligned for TMA
    one_line_usage_error(
        &[&["65536", "64", "32769"][..], &auto].concat(),
        &[
            "--family triton-auto: triton: M x K",
            "; triton-tma: K = 32769",
        ],
    );
    let f = tmpfile("auto-bad.csv", "M,N,K\n64,64,64\n65536,64,32769\n");
    one_line_usage_error(
        &[&["--shapes", f.to_str().unwrap()][..], &auto].concat(),
        &["line 3: --family triton-auto: triton: "],
    );
    one_line_usage_error(
        &["64", "64", "64", "--family", "nope"],
        &["known: triton, triton-tma, origami, hopper, seed, triton-auto, auto"],
    );
}

#[test]
fn triton_auto_off_hopper_and_its_description() {
    // no TMA kernel on an A100: the tutorial kernel is chosen, the text says why
    let out = cmd()
        .args([
            "4096",
            "4096",
            "4096",
            "--family",
            "triton-auto",
            "--gpu",
            "a100",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("triton-tma: not run: no feasible config"),
        "{text}"
    );

    let v: serde_json::Value = serde_json::from_str(&h100(&[
        "--describe",
        "--family",
        "triton-auto",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(v["family"], "triton-auto");
    let members: Vec<&str> = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["family"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["triton", "triton-tma"]);
    let text = h100(&["--describe", "--family", "triton-auto"]);
    assert!(text.contains("family triton,") && text.contains("family triton-tma,"));
    let help = String::from_utf8(cmd().arg("--help").output().unwrap().stdout).unwrap();
    for word in ["triton-auto", "triton-tma", "WARP_SPECIALIZE", "kwargs"] {
        assert!(help.contains(word), "{word} not in --help");
    }
}
