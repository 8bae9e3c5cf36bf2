//! Golden outputs of every tool that runs without a GPU, pinned before the code moves:
//! `origami-select` over the seed and LLM shape lists for every family, model variant,
//! fitted tier and output format (single shapes and batch), `origami-predict` on the
//! committed model inputs, `origami-bench report` and `refit` on committed sweeps, and
//! `origami-calibrate --check`. Each case's stdout, stderr, exit code and written files
//! are hashed into one line of `tests/golden/manifest.txt`.
//!
//! A change that moves code must leave every line as it is. When a change is meant to
//! alter an output, regenerate with `ORIGAMI_BLESS=1 cargo test --release --test golden`
//! and say why in the commit. On a mismatch the outputs of the differing cases are written
//! under `target/golden-actual/`; `ORIGAMI_GOLDEN_DUMP=DIR` writes every case's output
//! there, to diff one commit's outputs against another's.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST: &str = "tests/golden/manifest.txt";

/// One pinned invocation.
struct Case {
    name: String,
    bin: &'static str,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// A committed folder copied to a scratch folder first; `{dir}` in args names the copy.
    copy_dir: Option<&'static str>,
    /// Files (relative to the scratch folder) whose bytes are part of the result; a name
    /// that is empty or ends in `/` stands for every file of that folder but the plots.
    outputs: Vec<&'static str>,
}

impl Case {
    fn new(name: String, bin: &'static str, args: &[&str]) -> Case {
        Case {
            name,
            bin,
            args: args.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
            copy_dir: None,
            outputs: Vec::new(),
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shapes of a committed list (header and `#` comments skipped), as "M N K".
fn shapes(list: &str) -> Vec<[String; 3]> {
    let text = std::fs::read_to_string(root().join(list)).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with('M'))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            [f[0].to_string(), f[1].to_string(), f[2].to_string()]
        })
        .collect()
}

const FAMILIES: [&str; 3] = ["triton", "origami", "seed"];
const LISTS: [(&str, &str); 2] = [
    ("seed", "data/seed_shapes.csv"),
    ("llm", "data/llm_shapes.csv"),
];

fn select_cases() -> Vec<Case> {
    let mut v = Vec::new();
    // Batch mode: every list, family, model, tier, GPU and format.
    for (list, path) in LISTS {
        for fam in FAMILIES {
            for model in ["origami", "seed"] {
                for fitted in [true, false] {
                    for gpu in ["default", "a100", "h200", "rtx4090", "b200"] {
                        let formats: &[&str] = if matches!(gpu, "default" | "a100") {
                            &["text", "json", "csv", "triton"]
                        } else {
                            &["csv"]
                        };
                        for fmt in formats {
                            let mut a = vec!["--shapes", path, "--family", fam, "--model", model];
                            a.extend(["--format", fmt]);
                            if !fitted {
                                a.push("--no-fitted");
                            }
                            if gpu != "default" {
                                a.extend(["--gpu", gpu]);
                            }
                            let name = format!(
                                "select/batch/{list}/{fam}/{model}/{}/{gpu}/{fmt}",
                                if fitted { "fitted" } else { "published" }
                            );
                            v.push(Case::new(name, "origami-select", &a));
                        }
                    }
                }
            }
            for dtype in ["bf16", "fp8", "fp32", "tf32"] {
                let a = [
                    "--shapes", path, "--family", fam, "--dtype", dtype, "--format", "csv",
                ];
                let name = format!("select/batch/{list}/{fam}/dtype-{dtype}");
                v.push(Case::new(name, "origami-select", &a));
            }
            for file in [
                "calibrations/h200.json",
                "calibrations/h100-sxm.json",
                "calibrations/fitted/h200-origami.json",
                "calibrations/fitted/h200-triton-throughput.json",
            ] {
                let a = ["--shapes", path, "--family", fam, "--format", "json"];
                let mut c = Case::new(
                    format!("select/batch/{list}/{fam}/file-{file}"),
                    "origami-select",
                    &a,
                );
                c.env.push(("TRITONBLAS_HW_PARAMS".into(), file.into()));
                v.push(c);
            }
        }
    }
    // Single shapes: every shape of both lists, family and tier, in text (with the
    // walk-through), json and csv; the seed model variant in text.
    for (list, path) in LISTS {
        for [m, n, k] in shapes(path) {
            for fam in FAMILIES {
                for fitted in [true, false] {
                    for (fmt, extra) in [("text", "--explain"), ("json", ""), ("csv", "")] {
                        let mut a = vec![m.as_str(), n.as_str(), k.as_str(), "--family", fam];
                        a.extend(["--format", fmt]);
                        if !extra.is_empty() {
                            a.push(extra);
                        }
                        if !fitted {
                            a.push("--no-fitted");
                        }
                        let name = format!(
                            "select/single/{list}/{m}x{n}x{k}/{fam}/{}/{fmt}",
                            if fitted { "fitted" } else { "published" }
                        );
                        v.push(Case::new(name, "origami-select", &a));
                    }
                    let mut a = vec![m.as_str(), n.as_str(), k.as_str(), "--family", fam];
                    a.extend(["--model", "seed", "--explain"]);
                    if !fitted {
                        a.push("--no-fitted");
                    }
                    let name = format!(
                        "select/single/{list}/{m}x{n}x{k}/{fam}/{}/seed-model",
                        if fitted { "fitted" } else { "published" }
                    );
                    v.push(Case::new(name, "origami-select", &a));
                }
            }
        }
    }
    // Every candidate with its reason, for a few shapes.
    for shape in [
        ["64", "64", "64"],
        ["4096", "4096", "4096"],
        ["1", "6144", "4096"],
        ["4100", "576", "7168"],
        ["1000", "1000", "1000"],
    ] {
        for fam in FAMILIES {
            for fitted in [true, false] {
                for fmt in ["text", "json", "csv"] {
                    let mut a = vec![shape[0], shape[1], shape[2], "--family", fam, "--all"];
                    a.extend(["--format", fmt]);
                    if !fitted {
                        a.push("--no-fitted");
                    }
                    let name = format!(
                        "select/all/{}x{}x{}/{fam}/{}/{fmt}",
                        shape[0],
                        shape[1],
                        shape[2],
                        if fitted { "fitted" } else { "published" }
                    );
                    v.push(Case::new(name, "origami-select", &a));
                }
            }
        }
    }
    // Triton's Hopper kernel and the choice between the two Triton kernels, on the GPU
    // its constants were fitted on: batches in every format and type, the walk-through
    // of a few shapes (aligned, unaligned K or N, decode), every candidate of those.
    for fam in ["triton-tma", "triton-auto"] {
        for (list, path) in LISTS {
            for fmt in ["text", "json", "csv", "triton"] {
                let a = [
                    "--shapes", path, "--family", fam, "--gpu", "h100-sxm", "--format", fmt,
                ];
                let name = format!("select/batch/{list}/{fam}/h100-sxm/{fmt}");
                v.push(Case::new(name, "origami-select", &a));
            }
            let a = [
                "--shapes", path, "--family", fam, "--gpu", "h100-sxm", "--dtype", "bf16",
                "--format", "csv",
            ];
            let name = format!("select/batch/{list}/{fam}/h100-sxm/dtype-bf16");
            v.push(Case::new(name, "origami-select", &a));
        }
        for shape in [
            ["4096", "4096", "4096"],
            ["3000", "3000", "3000"],
            ["4097", "4097", "4097"],
            ["1000", "7168", "2050"],
            ["1", "6144", "4096"],
        ] {
            for (fmt, extra) in [("text", "--explain"), ("json", ""), ("triton", "")] {
                let mut a = vec![shape[0], shape[1], shape[2], "--family", fam];
                a.extend(["--gpu", "h100-sxm", "--format", fmt]);
                if !extra.is_empty() {
                    a.push(extra);
                }
                let name = format!(
                    "select/single/{}x{}x{}/{fam}/h100-sxm/{fmt}",
                    shape[0], shape[1], shape[2]
                );
                v.push(Case::new(name, "origami-select", &a));
            }
            if fam == "triton-tma" {
                let a = [
                    shape[0], shape[1], shape[2], "--family", fam, "--gpu", "h100-sxm", "--all",
                    "--format", "csv",
                ];
                let name = format!(
                    "select/all/{}x{}x{}/{fam}/h100-sxm/csv",
                    shape[0], shape[1], shape[2]
                );
                v.push(Case::new(name, "origami-select", &a));
            }
        }
    }
    // What the model would use, with no shape.
    for gpu in ["h200", "a100"] {
        for fam in FAMILIES {
            for fmt in ["text", "json"] {
                let a = ["--describe", "--gpu", gpu, "--family", fam, "--format", fmt];
                let name = format!("select/describe/{gpu}/{fam}/{fmt}");
                v.push(Case::new(name, "origami-select", &a));
            }
        }
    }
    // Bad inputs: exit codes and messages.
    let bad: [&[&str]; 9] = [
        &["0", "4096", "4096"],
        &["4096", "4096"],
        &["4096", "4096", "x"],
        &["4096", "4096", "4096", "--family", "nope"],
        &["4096", "4096", "4096", "--model", "nope"],
        &["4096", "4096", "4096", "--dtype", "int4"],
        &["4096", "4096", "4096", "--gpu", "nope"],
        &["4096", "4096", "4096", "--top", "0"],
        &[
            "4096", "4096", "4096", "--family", "origami", "--dtype", "fp32",
        ],
    ];
    for (i, a) in bad.iter().enumerate() {
        v.push(Case::new(format!("select/bad/{i}"), "origami-select", a));
    }
    v
}

fn other_cases() -> Vec<Case> {
    let mut v = Vec::new();
    // origami-predict: the printed models and the CSV runs over committed inputs.
    for gpu in ["b200", "h100-sxm", "h200"] {
        for (m, n, k) in [
            ("8192", "8192", "8192"),
            ("4096", "14336", "4096"),
            ("1", "4096", "4096"),
        ] {
            for l2 in ["none", "hit-rate", "raster"] {
                let a = [
                    "ws", m, n, k, "--dtype", "fp16", "--tile", "128x256", "--gpu", gpu, "--l2", l2,
                ];
                v.push(Case::new(
                    format!("predict/ws/{gpu}/{m}x{n}x{k}/{l2}"),
                    "origami-predict",
                    &a,
                ));
            }
            let a = ["roofline", m, n, k, "--dtype", "fp16", "--gpu", gpu];
            v.push(Case::new(
                format!("predict/roofline/{gpu}/{m}x{n}x{k}"),
                "origami-predict",
                &a,
            ));
        }
    }
    for (model, l2) in [
        ("sol", "none"),
        ("ws", "none"),
        ("ws", "raster"),
        ("ws", "hit-rate"),
    ] {
        let mut c = Case::new(
            format!("predict/model/{model}-{l2}"),
            "origami-predict",
            &[
                "model",
                "--model",
                model,
                "--l2",
                l2,
                "--gpu",
                "h200",
                "--input",
                "results/h200/predict/model_input.csv",
                "--out",
                "{dir}/out",
                "--print-cases",
                "2",
            ],
        );
        c.copy_dir = Some("");
        c.outputs = vec!["out/"];
        v.push(c);
    }
    // origami-bench report and refit on committed sweeps.
    for dir in [
        "results/h200/bench",
        "results/h200/bench-throughput",
        "results/h200/bench-bf16",
    ] {
        let mut c = Case::new(
            format!("bench/report/{dir}"),
            "origami-bench",
            &["report", "--out", "{dir}"],
        );
        c.copy_dir = Some(dir);
        // The files report reads and writes; the folder holds other committed files too.
        c.outputs = vec!["configs.csv", "shapes.csv", "summary.json"];
        v.push(c);
    }
    // The origami refit from the preset, and from the fitted file as its start.
    for (name, start) in [
        ("origami", None),
        (
            "origami-throughput-start",
            Some("calibrations/fitted/h200-origami.json"),
        ),
    ] {
        let mut c = Case::new(
            format!("bench/refit/{name}"),
            "origami-bench",
            &[
                "refit",
                "--out",
                "{dir}",
                "--fit-set",
                "seed_shapes",
                "--rounds",
                "1",
                "--write",
                "{dir}/fit.json",
            ],
        );
        c.copy_dir = Some("results/h200/bench-throughput");
        if let Some(file) = start {
            c.env.push(("TRITONBLAS_HW_PARAMS".into(), file.into()));
        }
        c.outputs = vec!["fit.json"];
        v.push(c);
    }
    let mut c = Case::new(
        "bench/refit/triton".into(),
        "origami-bench",
        &[
            "refit",
            "--out",
            "{dir}",
            "--fit-set",
            "seed_shapes",
            "--family",
            "triton",
            "--rounds",
            "1",
            "--tau-weight",
            "1",
            "--write",
            "{dir}/fit.json",
        ],
    );
    c.copy_dir = Some("results/h200/triton-table/fit");
    c.env.push((
        "TRITONBLAS_HW_PARAMS".into(),
        "results/h200/triton-table/fit/start4.json".into(),
    ));
    c.outputs = vec!["fit.json"];
    v.push(c);
    // origami-calibrate --check on every committed calibration.
    for f in [
        "calibrations/h200.json",
        "calibrations/h100-sxm.json",
        "calibrations/a100.json",
    ] {
        v.push(Case::new(
            format!("calibrate/check/{f}"),
            "origami-calibrate",
            &["--check", f],
        ));
    }
    v
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// The files an output entry names, sorted; plots (PNG, SVG) are left out.
fn expand(dir: &Path, entry: &str) -> Vec<String> {
    if !(entry.is_empty() || entry.ends_with('/')) {
        return vec![entry.to_string()];
    }
    let mut v: Vec<String> = std::fs::read_dir(dir.join(entry))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| !n.ends_with(".png") && !n.ends_with(".svg"))
                .map(|n| format!("{entry}{n}"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Runs one case; returns its hash and the text that was hashed.
fn run(case: &Case, scratch: &Path) -> (String, String) {
    let bin = match case.bin {
        "origami-select" => env!("CARGO_BIN_EXE_origami-select"),
        "origami-predict" => env!("CARGO_BIN_EXE_origami-predict"),
        "origami-bench" => env!("CARGO_BIN_EXE_origami-bench"),
        "origami-calibrate" => env!("CARGO_BIN_EXE_origami-calibrate"),
        other => panic!("unknown binary {other}"),
    };
    let dir = scratch.join(case.name.replace('/', "_"));
    if let Some(src) = case.copy_dir {
        let _ = std::fs::remove_dir_all(&dir);
        if src.is_empty() {
            std::fs::create_dir_all(&dir).unwrap();
        } else {
            copy_tree(&root().join(src), &dir);
        }
    }
    let dir_s = dir.to_string_lossy().to_string();
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| a.replace("{dir}", &dir_s))
        .collect();
    let mut cmd = Command::new(bin);
    cmd.current_dir(root())
        .args(&args)
        .env_remove("TRITONBLAS_HW_PARAMS")
        .env("ORIGAMI_NO_GPU", "1")
        .env("NO_COLOR", "1");
    for (k, v) in &case.env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    // Scratch paths appear in some outputs; write them as {dir}.
    let norm = |b: &[u8]| String::from_utf8_lossy(b).replace(&dir_s, "{dir}");
    let mut text = format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        norm(&out.stdout),
        norm(&out.stderr)
    );
    for f in case.outputs.iter().flat_map(|f| expand(&dir, f)) {
        let body = std::fs::read(dir.join(&f))
            .map(|b| norm(&b))
            .unwrap_or_else(|e| format!("<missing: {e}>"));
        text.push_str(&format!("--- file {f}\n{body}"));
    }
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    (hex, text)
}

#[test]
fn golden_outputs_are_unchanged() {
    let mut cases = select_cases();
    cases.extend(other_cases());
    // A shape that stands twice in a list is one case.
    let mut seen = std::collections::HashSet::new();
    cases.retain(|c| seen.insert(c.name.clone()));
    let scratch = std::env::temp_dir().join(format!("origami-golden-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let chunks: Vec<&[Case]> = cases.chunks(cases.len().div_ceil(threads)).collect();
    let results: BTreeMap<String, (String, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let scratch = &scratch;
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|c| (c.name.clone(), run(c, scratch)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(results.len(), cases.len(), "case names must be unique");

    if let Some(dump) = std::env::var_os("ORIGAMI_GOLDEN_DUMP") {
        for (name, (_, text)) in &results {
            let p = PathBuf::from(&dump).join(name.replace('/', "_") + ".txt");
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        }
    }
    let manifest_path = root().join(MANIFEST);
    let actual: String = results
        .iter()
        .map(|(n, (h, _))| format!("{h}  {n}\n"))
        .collect();
    if std::env::var_os("ORIGAMI_BLESS").is_some() {
        std::fs::create_dir_all(manifest_path.parent().unwrap()).unwrap();
        std::fs::write(&manifest_path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&manifest_path)
        .unwrap_or_else(|e| panic!("{MANIFEST}: {e} (create it with ORIGAMI_BLESS=1)"));
    let want: BTreeMap<&str, &str> = expected
        .lines()
        .filter_map(|l| l.split_once("  ").map(|(h, n)| (n, h)))
        .collect();
    let mut differ = Vec::new();
    for (name, (hash, text)) in &results {
        if want.get(name.as_str()) != Some(&hash.as_str()) {
            let p = root()
                .join("target/golden-actual")
                .join(name.replace('/', "_") + ".txt");
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            differ.push(name.clone());
        }
    }
    let missing: Vec<&&str> = want.keys().filter(|n| !results.contains_key(**n)).collect();
    assert!(
        differ.is_empty() && missing.is_empty(),
        "{} of {} golden cases differ (outputs in target/golden-actual/): {:?}{}; cases no longer run: {:?}",
        differ.len(),
        results.len(),
        &differ[..differ.len().min(20)],
        if differ.len() > 20 { " ..." } else { "" },
        missing
    );
}
