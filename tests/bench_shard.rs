//! Sharded sweeps on the CPU, with the mock bench: N shards merged give exactly the files of
//! one unsharded sweep (`configs.csv`, `shapes.csv` byte for byte; `summary.json` equal
//! outside the per-run meta keys), through the library and through `origami-bench merge`;
//! a shard cut by the time budget and resumed merges the same; overlapping, mismatched,
//! missing and unfinished shards are refused with exit 2 and one line. Repeated passes of
//! one sweep join into per-launch medians (`origami-bench passes`), and passes of other
//! sweeps are refused the same way.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use origami::dtype::Dtype;
use origami::exit::Exit;
use origami::gemm::measure::TimingPolicy;
use origami::gemm::merge::{merge_shards, MergeRequest};
use origami::gemm::mock::MockBench;
use origami::gemm::passes::{join_passes, PassesOutcome, PassesRequest};
use origami::gemm::sweep::{ConfigRow, ShapeRow};
use origami::gemm::sweep_files::{self as files, summarize_folder};
use origami::gemm::sweep_meta::{Shard, SweepMeta, PER_RUN_META_KEYS};
use origami::gemm::sweep_run::{read_shape_lists, run_sweep, Quiet, SweepFolder, SweepRequest};
use origami::setup::{setup, SetupRequest};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("origami-shard-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Two lists (one with labels, one with a shape that stands twice): 9 shapes.
fn lists(dir: &Path) -> Vec<PathBuf> {
    let a = dir.join("seed_like.csv");
    std::fs::write(
        &a,
        "M,N,K\n512,512,512\n1024,256,2048\n64,4096,512\n512,512,512\n2048,2048,1024\n",
    )
    .unwrap();
    let b = dir.join("llm_like.csv");
    std::fs::write(
        &b,
        "M,N,K,model,layer\n16,4096,4096,m,qkv\n128,11008,4096,m,up\n4096,4096,128,m,attn\n32,8192,1024,n,down\n",
    )
    .unwrap();
    vec![a, b]
}

struct Sweep {
    shard: Option<Shard>,
    max_configs: usize,
    budget: Option<f64>,
    energy_s: Option<f64>,
}

fn sweep(dir: &Path, lists: &[PathBuf], s: &Sweep) -> Result<SweepMeta, origami::exit::Failure> {
    let setup = setup(&SetupRequest {
        device: None,
        gpu_name: Some("h100-sxm".into()),
        override_file: None,
        family: "origami".into(),
        model: "origami".into(),
        no_fitted: false,
        calibration_only: false,
    })?;
    let sel = setup.selector(Dtype::Fp16)?;
    let req = SweepRequest {
        lists: read_shape_lists(lists, Dtype::Fp16)?,
        dtype: Dtype::Fp16,
        model: "origami".into(),
        max_configs: Some(s.max_configs),
        spread: None,
        only_pick: false,
        time_budget_s: s.budget,
        energy_s: s.energy_s,
        seed: Some(7),
        shard: s.shard,
        policy: TimingPolicy::default(),
        command: format!("mock sweep {:?}", s.shard),
    };
    let folder = SweepFolder::open(dir, s.shard, &Quiet)?;
    let mut bench = MockBench::new(Dtype::Fp16);
    let meta = run_sweep(&mut bench, &setup, &sel, &req, folder, &Quiet)?;
    summarize_folder(dir, Some(meta.to_value()))?;
    Ok(meta)
}

fn plain(max_configs: usize) -> Sweep {
    Sweep {
        shard: None,
        max_configs,
        budget: None,
        energy_s: None,
    }
}

fn shard(index: usize, count: usize) -> Sweep {
    Sweep {
        shard: Some(Shard { index, count }),
        max_configs: 24,
        budget: None,
        energy_s: None,
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `summary.json` without the per-run meta keys.
fn summary_outside_run_keys(dir: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&read(&dir.join(files::SUMMARY_JSON))).unwrap();
    let meta = v["meta"].as_object_mut().unwrap();
    for k in PER_RUN_META_KEYS {
        meta.remove(k);
    }
    v
}

fn assert_same_sweep(merged: &Path, one: &Path) {
    for f in [files::CONFIGS_CSV, files::SHAPES_CSV] {
        assert!(
            read(&merged.join(f)) == read(&one.join(f)),
            "{f} differs between {} and {}",
            merged.display(),
            one.display()
        );
    }
    assert_eq!(
        summary_outside_run_keys(merged),
        summary_outside_run_keys(one)
    );
}

fn merge(
    dirs: &[&Path],
    dest: &Path,
    allow_partial: bool,
) -> Result<SweepMeta, origami::exit::Failure> {
    let o = merge_shards(&MergeRequest {
        dirs: dirs.iter().map(|d| d.to_path_buf()).collect(),
        dest: dest.to_path_buf(),
        allow_partial,
        command: "mock merge".into(),
    })?;
    summarize_folder(dest, Some(o.meta.to_value()))?;
    Ok(o.meta)
}

#[test]
fn shards_merge_into_the_unsharded_sweep() {
    let root = tmpdir("merge");
    let lists = lists(&root);
    let one = root.join("one");
    let meta = sweep(&one, &lists, &plain(24)).unwrap();
    assert_eq!(meta.plan.total_shapes(), 9);
    // The mock's failures are in the fixture: both paths are merged too.
    let configs = read(&one.join(files::CONFIGS_CSV));
    assert!(configs.contains("not compiled") && configs.contains("verification failed"));
    assert_eq!(
        files::read_csv::<ShapeRow>(&one.join(files::SHAPES_CSV))
            .unwrap()
            .len(),
        9
    );
    // Every shard count from 1 to more shards than shapes (shards with no shape at all).
    for n in [1, 2, 3, 4, 11] {
        let dirs: Vec<PathBuf> = (0..n).map(|i| root.join(format!("n{n}-s{i}"))).collect();
        for (i, d) in dirs.iter().enumerate() {
            let m = sweep(d, &lists, &shard(i, n)).unwrap();
            assert_eq!(m.shard, Some(Shard { index: i, count: n }));
        }
        // In any order.
        let mut given: Vec<&Path> = dirs.iter().map(|d| d.as_path()).collect();
        given.reverse();
        let dest = root.join(format!("merged-{n}"));
        let merged = merge(&given, &dest, false).unwrap();
        assert_same_sweep(&dest, &one);
        assert_eq!(merged.run.base_seed, Some(7));
        assert_eq!(merged.run.shapes_left, 0);
        assert_eq!(merged.shard_runs.len(), n);
        assert!(merged.shard.is_none());
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_shard_cut_by_the_budget_and_resumed_merges_the_same() {
    let root = tmpdir("resume");
    let lists = lists(&root);
    let one = root.join("one");
    sweep(&one, &lists, &plain(24)).unwrap();
    let (s0, s1) = (root.join("s0"), root.join("s1"));
    let cut = sweep(
        &s0,
        &lists,
        &Sweep {
            budget: Some(1.3),
            ..shard(0, 2)
        },
    )
    .unwrap();
    assert!(cut.run.shapes_left > 0, "{:?}", cut.run);
    sweep(&s1, &lists, &shard(1, 2)).unwrap();
    // Unfinished: refused, or merged partially when allowed.
    let e = merge(&[&s0, &s1], &root.join("early"), false).unwrap_err();
    assert_eq!(e.exit, Exit::BadInput);
    assert!(e.msg.contains("shard 0/2 unfinished"), "{e}");
    let partial = merge(&[&s0, &s1], &root.join("partial"), true).unwrap();
    assert_eq!(partial.run.shapes_left, cut.run.shapes_left);
    // Resume shard 0 in its folder (it refuses another shard's folder).
    let e = sweep(&s0, &lists, &shard(1, 2)).unwrap_err();
    assert!(e.msg.contains("holds shard 0/2"), "{e}");
    sweep(&s0, &lists, &shard(0, 2)).unwrap();
    let dest = root.join("merged");
    merge(&[&s0, &s1], &dest, false).unwrap();
    assert_same_sweep(&dest, &one);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn merge_refuses_shards_of_other_sweeps() {
    let root = tmpdir("refuse");
    let lists = lists(&root);
    let d: Vec<PathBuf> = (0..3).map(|i| root.join(format!("s{i}"))).collect();
    for (i, dir) in d.iter().enumerate() {
        sweep(dir, &lists, &shard(i, 3)).unwrap();
    }
    let other = root.join("other");
    sweep(
        &other,
        &lists,
        &Sweep {
            max_configs: 12,
            ..shard(2, 3)
        },
    )
    .unwrap();
    let four = root.join("four");
    sweep(&four, &lists, &shard(3, 4)).unwrap();
    let one = root.join("one");
    sweep(&one, &lists, &plain(24)).unwrap();
    let dest = root.join("dest");
    for (dirs, needle) in [
        (vec![&d[0], &d[1], &d[1]], "overlapping shards"),
        (vec![&d[0], &d[1], &other], "meta.max_configs"),
        (vec![&d[0], &d[1], &four], "shard counts differ"),
        (vec![&d[0], &d[2]], "shard 1/3 missing"),
        (vec![&d[0], &one], "not a shard folder"),
        (vec![&d[0], &d[1], &d[2], &dest], "summary.json"),
    ] {
        let dirs: Vec<&Path> = dirs.iter().map(|p| p.as_path()).collect();
        let e = merge(&dirs, &dest, false).unwrap_err();
        assert_eq!(e.exit, Exit::BadInput, "{e}");
        assert!(
            e.msg.contains(needle) && !e.msg.contains('\n'),
            "{needle}: {e}"
        );
    }
    merge(&[&d[0], &d[1], &d[2]], &dest, false).unwrap();
    let again = merge(&[&d[0], &d[1], &d[2]], &dest, false).unwrap_err();
    assert!(again.msg.contains("already holds a sweep"), "{again}");
    let into_shard = merge(&[&d[0], &d[1], &d[2]], &d[0], false).unwrap_err();
    assert!(
        into_shard.msg.contains("one of the shard folders"),
        "{into_shard}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

fn bench_cmd() -> Command {
    let mut c = Command::cargo_bin("origami-bench").unwrap();
    c.env_remove("TRITONBLAS_HW_PARAMS")
        .env("CUDA_VISIBLE_DEVICES", "");
    c
}

#[test]
fn the_cli_merges_and_checks_shard_flags() {
    let root = tmpdir("cli");
    let lists = lists(&root);
    let one = root.join("one");
    sweep(&one, &lists, &plain(24)).unwrap();
    let d: Vec<PathBuf> = (0..3).map(|i| root.join(format!("s{i}"))).collect();
    for (i, dir) in d.iter().enumerate() {
        sweep(dir, &lists, &shard(i, 3)).unwrap();
    }
    let dest = root.join("merged");
    let o = bench_cmd()
        .args(["merge", "--no-plots", "--out"])
        .arg(&dest)
        .args(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("A/BF median"));
    assert_same_sweep(&dest, &one);
    let o = bench_cmd()
        .args(["merge", "--out"])
        .arg(root.join("x"))
        .args([&d[0], &d[1]])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("shard 2/3 missing"), "{err}");
    // Bad --shard values: exit 2, one line, before any GPU is looked for.
    for bad in ["3/3", "x", "/4", "1/0"] {
        let o = bench_cmd()
            .args(["sweep", "--shapes"])
            .arg(&lists[0])
            .args(["--shard", bad, "--out"])
            .arg(root.join("never"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--shard"), "{err}");
    }
    assert!(!root.join("never").exists());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn energy_columns_fill_for_fully_timed_configs_only() {
    let root = tmpdir("energy");
    let lists = lists(&root);
    let dir = root.join("e");
    let meta = sweep(
        &dir,
        &lists,
        &Sweep {
            energy_s: Some(1.0),
            ..plain(6)
        },
    )
    .unwrap();
    assert_eq!(meta.plan.energy_s, Some(1.0));
    let mut rdr = csv::Reader::from_path(dir.join("configs.csv")).unwrap();
    let head = rdr.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (mj, w, ms, screened, measured) = (
        col("energy_mj"),
        col("energy_w"),
        col("sustained_ms"),
        col("screened"),
        col("measured_ms"),
    );
    let mut with = 0;
    for r in rdr.records() {
        let r = r.unwrap();
        let full = !r[measured].is_empty() && &r[screened] == "0";
        assert_eq!(!r[mj].is_empty(), full, "{r:?}");
        if full {
            with += 1;
            let (e, p, t): (f64, f64, f64) = (
                r[mj].parse().unwrap(),
                r[w].parse().unwrap(),
                r[ms].parse().unwrap(),
            );
            assert!((e - p * t).abs() < 1e-6 * e, "{r:?}");
            // the mock's clock and clock-event reasons over the window
            assert_eq!(&r[col("energy_sm_mhz")], "1755.0", "{r:?}");
            assert_eq!(&r[col("energy_throttle")], "sw_power_cap", "{r:?}");
        }
    }
    assert!(with > 0);
    // cuBLAS's energy, once per shape, in shapes.csv
    let mut shapes = csv::Reader::from_path(dir.join("shapes.csv")).unwrap();
    let sh = shapes.headers().unwrap().clone();
    let cb = sh.iter().position(|h| h == "cublas_energy_mj").unwrap();
    let rows: Vec<csv::StringRecord> = shapes.records().map(|r| r.unwrap()).collect();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r[cb].parse::<f64>().unwrap() > 0.0));
    // a folder without the columns (written before them) still reads: the plain sweep
    let plain_dir = root.join("p");
    sweep(&plain_dir, &lists, &plain(6)).unwrap();
    let text = std::fs::read_to_string(plain_dir.join("configs.csv")).unwrap();
    let old: String = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f[..f.len() - 6].join(",")
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(plain_dir.join("configs.csv"), old + "\n").unwrap();
    summarize_folder(&plain_dir, None).unwrap();
}

// Repeated passes of one sweep (`origami-bench passes`).

fn join(
    dirs: &[&Path],
    dest: &Path,
    allow_partial: bool,
) -> Result<PassesOutcome, origami::exit::Failure> {
    let o = join_passes(&PassesRequest {
        dirs: dirs.iter().map(|d| d.to_path_buf()).collect(),
        dest: dest.to_path_buf(),
        allow_partial,
        command: "mock passes".into(),
    })?;
    summarize_folder(dest, Some(o.meta.to_value()))?;
    Ok(o)
}

fn configs_of(dir: &Path) -> Vec<ConfigRow> {
    files::read_csv(&dir.join(files::CONFIGS_CSV)).unwrap()
}

/// Another pass of the sweep in `dir`: every measured time (and cuBLAS's) times `f`.
fn scaled_pass(dir: &Path, dest: &Path, f: f64) {
    std::fs::create_dir_all(dest).unwrap();
    let rows: Vec<ConfigRow> = configs_of(dir)
        .into_iter()
        .map(|mut r| {
            r.measured_ms = r.measured_ms.map(|v| v * f);
            r
        })
        .collect();
    files::write_csv(&dest.join(files::CONFIGS_CSV), &rows).unwrap();
    let shapes: Vec<ShapeRow> = files::read_csv::<ShapeRow>(&dir.join(files::SHAPES_CSV))
        .unwrap()
        .into_iter()
        .map(|mut s| {
            s.cublas_ms = s.cublas_ms.map(|v| v * f);
            s
        })
        .collect();
    files::write_csv(&dest.join(files::SHAPES_CSV), &shapes).unwrap();
    std::fs::copy(
        dir.join(files::SUMMARY_JSON),
        dest.join(files::SUMMARY_JSON),
    )
    .unwrap();
}

/// Edit the meta of a folder's summary.json.
fn edit_meta(dir: &Path, f: impl Fn(&mut serde_json::Map<String, serde_json::Value>)) {
    let path = dir.join(files::SUMMARY_JSON);
    let mut v: serde_json::Value = serde_json::from_str(&read(&path)).unwrap();
    f(v["meta"].as_object_mut().unwrap());
    std::fs::write(&path, v.to_string()).unwrap();
}

#[test]
fn passes_join_into_per_launch_medians() {
    let root = tmpdir("passes");
    let lists = lists(&root);
    let p1 = root.join("p1");
    sweep(&p1, &lists, &plain(24)).unwrap();
    let (p2, p3) = (root.join("p2"), root.join("p3"));
    scaled_pass(&p1, &p2, 1.1);
    scaled_pass(&p1, &p3, 0.8);
    // Three passes: the median is the first pass's time, the spread 1.1 / 0.8 - 1.
    let three = root.join("three");
    let o = join(&[&p1, &p2, &p3], &three, false).unwrap();
    assert_eq!((o.passes, o.shapes, o.shapes_left), (3, 9, 0));
    assert!(!o.models_differ);
    assert_eq!(o.meta.pass_runs.len(), 3);
    assert_eq!(o.meta.run.base_seed, None);
    assert!((o.median_spread.unwrap() - 0.375).abs() < 1e-9, "{o:?}");
    assert_eq!(o.spread_over_10pct, Some(1.0));
    assert!((o.pass_tau_median.unwrap() - 1.0).abs() < 1e-12);
    let (one, joined) = (configs_of(&p1), configs_of(&three));
    assert_eq!(one.len(), joined.len());
    assert!(o.launches > 0 && o.launches == one.iter().filter(|r| r.timed().is_some()).count());
    for (a, b) in one.iter().zip(&joined) {
        assert_eq!(
            (&a.config, a.passed, &a.note),
            (&b.config, b.passed, &b.note)
        );
        match (a.timed(), b.timed()) {
            (Some(x), Some(y)) => {
                assert!((x - y).abs() < 1e-12 * x, "{a:?} {b:?}");
                assert_eq!(b.samples, 3 * a.samples);
            }
            (x, y) => assert_eq!(x, y),
        }
    }
    // The same ranking and cuBLAS: the same per-shape scores as the first pass.
    let shapes = |d: &Path| files::read_csv::<ShapeRow>(&d.join(files::SHAPES_CSV)).unwrap();
    for (a, b) in shapes(&p1).iter().zip(&shapes(&three)) {
        assert_eq!(
            (a.a_bf, a.kendall_tau, &a.pick),
            (b.a_bf, b.kendall_tau, &b.pick)
        );
        assert!((a.cublas_ms.unwrap() - b.cublas_ms.unwrap()).abs() < 1e-12);
    }
    let recs = read(&three.join("passes.csv"));
    assert!(recs
        .starts_with("set,m,n,k,dtype,config,passes,measured_ms,min_ms,max_ms,spread,pass_ms\n"));
    // Two passes: the mean of the two.
    let two = root.join("two");
    join(&[&p1, &p2], &two, false).unwrap();
    for (a, b) in one.iter().zip(&configs_of(&two)) {
        if let (Some(x), Some(y)) = (a.timed(), b.timed()) {
            assert!((1.05 * x - y).abs() < 1e-12 * x, "{a:?} {b:?}");
        }
    }
    // A launch that failed verification in one pass is that failure in the join.
    let p4 = root.join("p4");
    scaled_pass(&p1, &p4, 1.0);
    let mut rows = configs_of(&p4);
    let i = rows.iter().position(|r| r.timed().is_some()).unwrap();
    rows[i].passed = 0;
    rows[i].measured_ms = None;
    rows[i].note = "verification failed: rel_err 1e0 (bound 1e-2), 0 non-finite".into();
    files::write_csv(&p4.join(files::CONFIGS_CSV), &rows).unwrap();
    let failed = root.join("failed");
    join(&[&p1, &p4], &failed, false).unwrap();
    let j = &configs_of(&failed)[i];
    assert_eq!((j.passed, j.measured_ms), (0, None), "{j:?}");
    assert!(j.note.starts_with("verification failed"));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn passes_refuse_folders_of_other_sweeps() {
    let root = tmpdir("passes-refuse");
    let lists = lists(&root);
    let p1 = root.join("p1");
    sweep(&p1, &lists, &plain(24)).unwrap();
    let p2 = root.join("p2");
    scaled_pass(&p1, &p2, 1.02);
    let fewer = root.join("fewer");
    sweep(&fewer, &lists, &plain(12)).unwrap();
    let shard0 = root.join("shard0");
    sweep(&shard0, &lists, &shard(0, 2)).unwrap();
    let cut = root.join("cut");
    let m = sweep(
        &cut,
        &lists,
        &Sweep {
            budget: Some(1.3),
            ..plain(24)
        },
    )
    .unwrap();
    assert!(m.run.shapes_left > 0);
    let other_model = root.join("other-model");
    scaled_pass(&p1, &other_model, 1.0);
    edit_meta(&other_model, |m| {
        m["constants_overridden"]["tp_time_scale"] = serde_json::json!(1.5);
    });
    let dest = root.join("dest");
    for (dirs, needle) in [
        (vec![&p1], "at least two"),
        (vec![&p1, &p1], "given twice"),
        (vec![&p1, &fewer], "meta.max_configs"),
        (vec![&p1, &shard0], "different shards"),
        (vec![&p1, &other_model], "meta.constants_overridden"),
        (vec![&p1, &cut], "passes cut short"),
        (vec![&p1, &dest], "summary.json"),
    ] {
        let dirs: Vec<&Path> = dirs.iter().map(|p| p.as_path()).collect();
        let e = join(&dirs, &dest, false).unwrap_err();
        assert_eq!(e.exit, Exit::BadInput, "{e}");
        assert!(
            e.msg.contains(needle) && !e.msg.contains('\n'),
            "{needle}: {e}"
        );
    }
    // Passes of one shard: the shard's shapes are the plan's, none left.
    let shard0_again = root.join("shard0-again");
    scaled_pass(&shard0, &shard0_again, 1.05);
    let joined_shard = join(&[&shard0, &shard0_again], &root.join("shard-joined"), false).unwrap();
    assert_eq!(joined_shard.meta.shard, Some(Shard { index: 0, count: 2 }));
    assert_eq!(joined_shard.meta.run.shapes_left, 0);
    assert_eq!(joined_shard.shapes, 5);
    let partial = join(&[&p1, &cut], &root.join("partial"), true).unwrap();
    assert_eq!(partial.shapes_left, 9 - partial.shapes);
    assert_eq!(partial.meta.run.shapes_left, partial.shapes_left);
    join(&[&p1, &p2], &dest, false).unwrap();
    let again = join(&[&p1, &p2], &dest, false).unwrap_err();
    assert!(again.msg.contains("already holds a sweep"), "{again}");
    let into = join(&[&p1, &p2], &p1, false).unwrap_err();
    assert!(into.msg.contains("one of the pass folders"), "{into}");
    // A plan that times every config may change its model between passes: its launches
    // are the same; the predictions are the first folder's.
    for d in [&p1, &other_model] {
        edit_meta(d, |m| {
            m["max_configs"] = serde_json::Value::Null;
        });
    }
    let o = join(&[&p1, &other_model], &root.join("models"), false).unwrap();
    assert!(o.models_differ);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_cli_joins_passes() {
    let root = tmpdir("passes-cli");
    let lists = lists(&root);
    let p1 = root.join("p1");
    sweep(&p1, &lists, &plain(24)).unwrap();
    let p2 = root.join("p2");
    scaled_pass(&p1, &p2, 1.1);
    let dest = root.join("joined");
    let o = bench_cmd()
        .args(["passes", "--no-plots", "--out"])
        .arg(&dest)
        .args([&p1, &p2])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("A/BF median"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("joined 2 passes, 9 shapes"), "{err}");
    assert!(dest.join("passes.csv").exists() && dest.join(files::SUMMARY_JSON).exists());
    let o = bench_cmd()
        .args(["passes", "--out"])
        .arg(root.join("x"))
        .arg(&p1)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&root);
}
