//! CLI tests of `origami-bench` that need no GPU: bad input exits 2 before any GPU is
//! touched, a missing GPU exits 4, `report` / `refit` work on a sweep folder, and
//! `configs` lists the origami family.

use assert_cmd::Command;
use origami::dtype::Dtype;
use origami::gemm::sweep::{shape_row, ConfigRow, Planned};
use origami::gemm::sweep_files as files;
use origami::model::problem::parse_config;
use origami::model::Problem;

fn cmd() -> Command {
    let mut c = Command::cargo_bin("origami-bench").unwrap();
    // Hide any GPU so the test means the same everywhere.
    c.env_remove("TRITONBLAS_HW_PARAMS")
        .env("CUDA_VISIBLE_DEVICES", "");
    c
}

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("origami-bench-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn code(args: &[&str]) -> (i32, String) {
    let o = cmd().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (o.status.code().unwrap_or(-1), err)
}

#[test]
fn bad_input_exits_2_before_the_gpu() {
    for (args, needle) in [
        (vec!["run", "64", "64", "100"], "multiple of 8"),
        (vec!["run", "0", "64", "64"], "M"),
        (
            vec!["run", "64", "64", "64", "--config", "32x32x16,w8,s2"],
            "warp tile",
        ),
        (
            vec!["run", "64", "64", "64", "--config", "64x64"],
            "--config",
        ),
        (vec!["run", "64", "64", "64", "--dtype", "fp8"], "--dtype"),
        (
            vec!["run", "64", "64", "64", "--family", "triton"],
            "--family",
        ),
        (vec!["run", "64", "64", "64", "--model", "nope"], "--model"),
        (vec!["run", "64", "64", "64", "--samples", "0"], "--samples"),
        (vec!["run", "64", "64", "64", "--passes", "0"], "--passes"),
        (
            vec![
                "run",
                "100",
                "128",
                "64",
                "--config",
                "64x64x32,w4,s3,unpredicated",
            ],
            "multiples of the tile",
        ),
        (
            vec![
                "run",
                "64",
                "64",
                "64",
                "--config",
                "64x64x32,w4,s3,flatten",
            ],
            "this kernel takes only `cache_all` and `unpredicated`",
        ),
        (vec!["run", "64", "64", "64", "--passes", "9"], "--passes"),
        (vec!["run", "64", "64", "64", "--shuffle"], "--shuffle"),
        (vec!["run", "64", "64", "64", "--warm-s", "-1"], "--warm-s"),
        (vec!["run", "64", "64", "64", "--warm-s", "NaN"], "--warm-s"),
        (vec!["run", "64", "64", "64", "--warm-s", "61"], "--warm-s"),
        (
            vec!["sweep", "--shapes", "/nonexistent/shapes.csv"],
            "--shapes",
        ),
    ] {
        let (c, err) = code(&args);
        assert_eq!(c, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: '{needle}' not in {err}");
    }
    let d = tmpdir("badk");
    let f = d.join("s.csv");
    std::fs::write(&f, "M,N,K\n64,64,64\n64,64,60\n").unwrap();
    let (c, err) = code(&[
        "sweep",
        "--shapes",
        f.to_str().unwrap(),
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert_eq!(c, 2, "{err}");
    assert!(
        err.contains("multiple of 8") && err.contains("64x64x60"),
        "{err}"
    );
}

#[test]
fn no_gpu_exits_4() {
    let (c, err) = code(&["run", "64", "64", "64"]);
    assert_eq!(c, 4, "{err}");
    let d = tmpdir("nogpu");
    let (c, err) = code(&[
        "sweep",
        "--shapes",
        concat!(env!("CARGO_MANIFEST_DIR"), "/data/seed_shapes.csv"),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(c, 4, "{err}");
}

/// Timed, verified rows of `launches` on `p` (the model's rank their order, the first its
/// pick), each measured at `ms(i)`.
fn timed_rows(
    set: &str,
    p: &Problem,
    launches: &[&str],
    ms: impl Fn(usize) -> f64,
) -> Vec<ConfigRow> {
    launches
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut r = ConfigRow::planned(
                set,
                p,
                &Planned {
                    config: parse_config(s).unwrap(),
                    model_rank: i + 1,
                    predicted_cycles: 1000.0 * (i + 1) as f64,
                    predicted_us: (i + 1) as f64,
                    is_pick: i == 0,
                },
            );
            r.measured_ms = Some(ms(i));
            r.passed = 1;
            r.spills = Some(0);
            r
        })
        .collect()
}

fn fixture(dir: &std::path::Path) {
    let mut configs = Vec::new();
    let mut shapes = Vec::new();
    for (set, m) in [("seed_shapes", 512u64), ("llm_shapes", 1024)] {
        let p = Problem::new(m, m, m, Dtype::Fp16).unwrap();
        let rows = timed_rows(
            set,
            &p,
            &[
                "128x128x32,g8,w8,s3",
                "64x64x32,g8,w4,s3",
                "32x32x32,g8,w4,s2",
            ],
            |i| 0.01 * (1 + (i + 1) % 3) as f64,
        );
        shapes.push(shape_row(set, "", &p, &rows, Some((0.005, 0.01))));
        configs.extend(rows);
    }
    files::write_csv(&dir.join(files::CONFIGS_CSV), &configs).unwrap();
    files::write_csv(&dir.join(files::SHAPES_CSV), &shapes).unwrap();
}

#[test]
fn report_and_refit_work_without_a_gpu() {
    let d = tmpdir("report");
    let (c, err) = code(&["report", "--out", d.to_str().unwrap()]);
    assert_eq!(c, 2, "empty folder: {err}");
    fixture(&d);
    let o = cmd()
        .args(["report", "--out", d.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join(files::SUMMARY_JSON)).unwrap())
            .unwrap();
    for k in [
        "abf_median",
        "abf_min",
        "abf_mean",
        "kendall_tau_mean",
        "infeasible_picks",
        "a_cublas_median",
    ] {
        assert!(j.get(k).is_some(), "{k}");
    }
    assert!(d.join(files::PLOT_ABF).exists() && d.join(files::PLOT_PRED_VS_MEAS).exists());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("A/BF median"), "{stdout}");

    let fitted = d.join("fitted.json");
    let o = cmd()
        .args([
            "refit",
            "--out",
            d.to_str().unwrap(),
            "--fit-set",
            "seed_shapes",
            "--rounds",
            "1",
            "--write",
            fitted.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("held out, after"), "{stdout}");
    assert!(fitted.exists());
    let (c, err) = code(&["refit", "--out", d.to_str().unwrap(), "--fit-set", "nope"]);
    assert_eq!(c, 2, "{err}");
    // a knob the descent does not have: exit 2, one line naming it
    let dir = d.to_str().unwrap();
    let (c, err) = code(&[
        "refit",
        "--out",
        dir,
        "--fit-set",
        "seed",
        "--hold",
        "tp_nope",
    ]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("--hold tp_nope: not a knob"), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.contains("error")).count(),
        1,
        "{err}"
    );
}

/// A sweep folder of the origami family (its fitted constants are the throughput model's on
/// an H100): five seed shapes and two held-out ones, six launches each, times made up so
/// that the model's order and the measured one disagree in part.
fn correction_fixture(dir: &std::path::Path) {
    let launches = [
        "128x128x32,g8,w8,s3",
        "64x64x32,g8,w4,s3",
        "32x32x32,g8,w4,s2",
        "128x64x32,g8,w4,s3",
        "64x128x32,g8,w4,s3",
        "64x64x64,g8,w4,s2",
    ];
    write_square_sweep(dir, &launches, &[512, 768, 1024, 1536, 2048]);
}

/// A sweep's configs.csv in `dir`: `launches` timed on the square seed shapes of `seed`
/// (M = N, K = 1024) and the held-out 640 and 1280, each launch's time a fixed pattern.
fn write_square_sweep(dir: &std::path::Path, launches: &[&str], seed: &[u64]) {
    let mut configs = Vec::new();
    for (set, sizes) in [("seed_shapes", seed), ("llm_shapes", &[640, 1280][..])] {
        for &m in sizes {
            let p = Problem::new(m, m, 1024, Dtype::Fp16).unwrap();
            configs.extend(timed_rows(set, &p, launches, |i| {
                0.001 * m as f64 / 512.0 * (1.0 + ((i * 7 + m as usize) % 5) as f64)
            }));
        }
    }
    files::write_csv(&dir.join(files::CONFIGS_CSV), &configs).unwrap();
}

#[test]
fn fit_correction_fits_scores_and_writes_a_file_the_selection_reads() {
    let d = tmpdir("correction");
    correction_fixture(&d);
    let dir = d.to_str().unwrap();
    let file = d.join("correction.json");
    let base = [
        "fit-correction",
        "--out",
        dir,
        "--fit-set",
        "seed_shapes",
        "--family",
        "origami",
        "--gpu",
        "h100-sxm",
        "--trees",
        "3,5",
        "--leaves",
        "2,3",
        "--min-leaf",
        "1",
        "--guard",
        "0,0.1",
    ];
    let o = cmd()
        .args(base)
        .args(["--folds", "2", "--write", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("cross-validation over the fitting shapes (2 folds"),
        "{out}"
    );
    // 2 tree counts x 2 leaf counts x 1 leaf size x 2 guards, one of them chosen
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("  ") && l.contains(", guard "))
            .count(),
        8,
        "{out}"
    );
    assert_eq!(out.matches("<- chosen").count(), 1, "{out}");
    assert!(
        out.contains("llm_shapes fp16 (held out, 2 shapes)"),
        "{out}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let c = origami::model::correction::Correction::from_text("correction.json", &text).unwrap();
    assert_eq!(c.family, "origami");
    assert_eq!(c.fit.shapes, 5);
    assert_eq!(c.fit.rows, 30);
    assert!(c
        .fit
        .command
        .starts_with("origami-bench fit-correction --out"));
    // --score: the file against the model alone, nothing fitted
    let score_args = [
        "fit-correction",
        "--out",
        dir,
        "--family",
        "origami",
        "--gpu",
        "h100-sxm",
        "--score",
        file.to_str().unwrap(),
    ];
    let scored = cmd().args(score_args).output().unwrap();
    assert!(scored.status.success(), "{scored:?}");
    let text = String::from_utf8_lossy(&scored.stdout);
    assert!(
        text.contains("seed_shapes fp16 (5 shapes): model alone") && text.contains("; corrected"),
        "{text}"
    );
    // --per-shape: one CSV row per shape and set, the same scores the lines aggregate
    let per_shape = d.join("per-shape.csv");
    let o = cmd()
        .args(score_args)
        .args(["--per-shape", per_shape.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(o.stdout, scored.stdout);
    let csv = std::fs::read_to_string(&per_shape).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(origami::gemm::correction_fit::PER_SHAPE_HEADER)
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.iter().filter(|r| r[0] == "seed_shapes").count(), 5);
    assert_eq!(rows.iter().filter(|r| r[0] == "llm_shapes").count(), 2);
    for r in &rows {
        assert_eq!(r.len(), 10, "{r:?}");
        for abf in [r[6], r[7]] {
            let v: f64 = abf.parse().unwrap();
            assert!((0.0..=1.0).contains(&v), "{r:?}");
        }
    }
    // the model-alone column's mean is the line's A/BF mean
    let seed: Vec<f64> = rows
        .iter()
        .filter(|r| r[0] == "seed_shapes")
        .map(|r| r[6].parse().unwrap())
        .collect();
    let mean = 100.0 * seed.iter().sum::<f64>() / seed.len() as f64;
    let line = text
        .lines()
        .find(|l| l.starts_with("seed_shapes fp16"))
        .unwrap();
    let want = line
        .split("model alone ")
        .nth(1)
        .and_then(|t| t.split(" / ").nth(2))
        .and_then(|t| t.split(' ').next())
        .unwrap();
    assert!(
        (mean - want.parse::<f64>().unwrap()).abs() < 0.06,
        "{mean} {line}"
    );
    for (what, needle) in [
        ("embedded", "no correction applies to family 'origami'"),
        ("no-such.json", "--score no-such.json"),
    ] {
        let (c, err) = code(&[
            "fit-correction",
            "--out",
            dir,
            "--family",
            "origami",
            "--score",
            what,
        ]);
        assert_eq!(c, 2, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    // bad input: one line, exit 2
    for (extra, needle) in [
        (&["--folds", "1"][..], "--folds: from 2 to 50"),
        (&["--guard", "11"][..], "--guard: give fractions"),
        (&["--leaves", "1"][..], "--leaves: give whole numbers"),
        (&["--learning-rate", "0"][..], "--learning-rate: must lie"),
        (&["--folds", "9"][..], "the fitting sets have 5 shapes"),
    ] {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let (c, err) = code(&args);
        assert_eq!(c, 2, "{extra:?}: {err}");
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.contains("error")).count(),
            1,
            "{err}"
        );
    }
    for (extra, needle) in [
        (&["--fit-set", "nope"][..], "--fit-set nope"),
        (
            &["--fit-set", "seed_shapes", "--family", "seed"][..],
            "no fitted constants file",
        ),
        // --per-shape only with --score
        (
            &["--fit-set", "seed_shapes", "--per-shape", "x.csv"][..],
            "--score",
        ),
    ] {
        let args: Vec<&str> = ["fit-correction", "--out", dir]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let (c, err) = code(&args);
        assert_eq!(c, 2, "{extra:?}: {err}");
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
}

#[test]
fn fit_correction_over_the_compiled_space_fits_on_more_launches_and_scores_the_same_shapes() {
    // triton-tma: three launches of the selection's space, three of the compiled table
    // outside it (BLOCK_K 32, 2 stages, warp specialization), and one that spills
    let d = tmpdir("correction-compiled");
    let launches = [
        "128x128x64,g8,w8,s3",
        "64x128x64,g8,w4,s4",
        "128x64x64,g8,w4,s3,flatten",
        "64x64x32,g8,w4,s2",
        "64x128x64,g8,w4,s3,warp_specialize",
        "128x128x32,g8,w8,s2,epilogue_subtile",
        "128x256x32,g8,w4,s2",
    ];
    write_square_sweep(&d, &launches, &[512, 768, 1024, 1536]);
    let dir = d.to_str().unwrap();
    let fit = |space: &str| {
        let o = cmd()
            .args([
                "fit-correction",
                "--out",
                dir,
                "--fit-set",
                "seed_shapes",
                "--family",
                "triton-tma",
                "--trees",
                "3",
                "--leaves",
                "2",
                "--min-leaf",
                "1",
                "--guard",
                "0",
                "--folds",
                "2",
                "--fit-space",
                space,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let (narrow, wide) = (fit("selection"), fit("compiled"));
    // 4 shapes x 3 launches of the space; x 6 that compile without spilling
    assert!(
        narrow.contains("fitted on 12 launches of 4 fp16 shapes"),
        "{narrow}"
    );
    assert!(
        wide.contains(
            "fitted on 24 launches (every config of the compiled table the sweep timed) of 4 \
             fp16 shapes"
        ),
        "{wide}"
    );
    // the same shapes scored, within the selection's space: the model alone alike
    let model_alone = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains(" shapes): model alone"))
            .map(|l| l.split("; corrected").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(model_alone(&narrow).len(), 2);
    assert_eq!(model_alone(&narrow), model_alone(&wide));
    let (c, err) = code(&[
        "fit-correction",
        "--out",
        dir,
        "--fit-set",
        "seed_shapes",
        "--family",
        "triton-tma",
        "--fit-space",
        "everything",
    ]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("--fit-space"), "{err}");
}

#[test]
fn configs_lists_the_family_without_a_gpu() {
    let o = cmd()
        .args(["configs", "--dtype", "bf16", "--smem-limit", "232448"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 384);
    assert_eq!(rows.iter().filter(|r| r.contains(",1,-D")).count(), 342);
    assert!(rows
        .iter()
        .all(|r| r.contains("-DWARPS_M=") && r.contains("-DDTYPE_BF16")));
    let (c, err) = code(&["configs", "--dtype", "fp8"]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("fp16, bf16 or tf32"), "{err}");
    // fp32 is the tf32 path's storage: the message says which type to ask for
    let (c, err) = code(&["configs", "--dtype", "fp32"]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("ask for tf32"), "{err}");
    // tf32: 4-byte elements, BLOCK_K at most 64
    let o = cmd()
        .args(["configs", "--dtype", "tf32", "--smem-limit", "232448"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 384);
    assert!(rows
        .iter()
        .all(|r| r[9].contains("-DDTYPE_TF32") && (r[2] != "128" || r[8] == "0")));
    let row = rows
        .iter()
        .find(|r| r[..5] == ["128", "256", "32", "8", "3"])
        .unwrap();
    assert_eq!(row[7], (3 * 384 * 32 * 4).to_string());
}

/// Replace one cell of the fixture's `configs.csv` (data line `line`, 0 first) by `value`.
fn set_cell(dir: &std::path::Path, line: usize, column: &str, value: &str) {
    let path = dir.join(files::CONFIGS_CSV);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().unwrap().clone();
    let col = header.iter().position(|h| h == column).unwrap();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).unwrap();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.unwrap();
        let cells: Vec<&str> = rec
            .iter()
            .enumerate()
            .map(|(j, c)| if i == line && j == col { value } else { c })
            .collect();
        w.write_record(&cells).unwrap();
    }
    std::fs::write(&path, w.into_inner().unwrap()).unwrap();
}

#[test]
fn impossible_timings_and_sizes_are_bad_input_before_anything_is_written() {
    for (column, value) in [
        ("measured_ms", "inf"),
        ("measured_ms", "1e308"),
        ("measured_ms", "NaN"),
        ("measured_ms", "-0.01"),
        ("measured_ms", "0"),
        ("predicted_us", "inf"),
        ("predicted_us", "-1"),
    ] {
        let d = tmpdir(&format!("bad-{column}-{value}"));
        fixture(&d);
        set_cell(&d, 1, column, value);
        if value == "1e308" {
            // Finite but absurd: no bound on a measured time, but the plots must end.
            let (c, err) = code(&["report", "--out", d.to_str().unwrap()]);
            assert_eq!(c, 0, "{err}");
            continue;
        }
        for tool in ["report", "refit"] {
            let (c, err) = code(
                &[
                    tool,
                    "--out",
                    d.to_str().unwrap(),
                    "--fit-set",
                    "seed_shapes",
                ][..if tool == "refit" { 5 } else { 3 }],
            );
            assert_eq!(c, 2, "{tool} {column}={value}: {err}");
            assert!(
                err.contains("configs.csv line 3, column ") && err.contains(column),
                "{err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{err}");
        }
        assert!(!d.join(files::SUMMARY_JSON).exists(), "{column}={value}");
        assert!(!d.join(files::PLOT_ABF).exists(), "{column}={value}");
    }
    let d = tmpdir("bad-m");
    fixture(&d);
    set_cell(&d, 0, "m", "0");
    let (c, err) = code(&[
        "refit",
        "--out",
        d.to_str().unwrap(),
        "--fit-set",
        "seed_shapes",
    ]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("line 2, column m"), "{err}");
}

#[test]
fn usage_errors_are_one_line_and_help_and_version_exit_0() {
    for (args, needle) in [
        (&["--bogus"][..], "unexpected argument '--bogus'"),
        (&["report", "--bogus"][..], "unexpected argument '--bogus'"),
        (&["run"][..], "<M> <N> <K>"),
        (&["run", "64", "64", "64", "--top", "x"][..], "'x'"),
        (
            &["run", "64", "64", "64", "--format", "yaml"][..],
            "[possible values: text, json]",
        ),
        (&["frobnicate"][..], "'frobnicate'"),
        (
            &[][..],
            "a command is required: run, sweep, merge, passes, report, refit, fit-correction, energy, configs",
        ),
    ] {
        let o = cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("origami-bench: error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
    for args in [
        &["--help"][..],
        &["-V"],
        &["--version"],
        &["run", "--help"],
        &["sweep", "--help"],
        &["merge", "--help"],
        &["report", "--help"],
        &["refit", "--help"],
        &["configs", "--help"],
        &["help", "run"],
    ] {
        let o = cmd().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(!o.stdout.is_empty() && o.stderr.is_empty(), "{args:?}");
    }
    let o = cmd().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(
        help.contains(
            "Exit codes: 0 ok, 1 runtime failure, 2 bad input, 4 no GPU or CUDA library."
        ),
        "{help}"
    );
}
