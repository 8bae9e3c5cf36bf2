//! `origami-select --objective/--power-limit/--energy-costs/--pareto` (issue 15, section 4)
//! end to end on the H100 preset, with a costs file made here from the committed H100
//! calibration plus known energy costs, and every bad input refused in one line (exit 2).

use assert_cmd::Command;
use serde_json::Value;

fn cmd() -> Command {
    let mut c = Command::cargo_bin("origami-select").unwrap();
    c.env_remove("TRITONBLAS_HW_PARAMS")
        .env("ORIGAMI_NO_GPU", "1");
    c
}

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("origami-select-energy-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The committed H100 calibration with these energy costs added as measurements.
fn costs_file(static_w: f64) -> std::path::PathBuf {
    let text = std::fs::read_to_string("results/h100/calibrate-full-2026-11-26.json").unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let one = doc["measurements"][0].clone();
    let costs = [
        ("energy_static_w", static_w),
        ("energy_mma_pj_per_flop", 0.3),
        ("energy_smem_pj_per_byte", 0.4),
        ("energy_l2_pj_per_byte", 1.5),
        ("energy_dram_pj_per_byte", 6.0),
        ("power_limit_w", 700.0),
    ];
    for (name, v) in costs {
        let mut m = one.clone();
        m["name"] = name.into();
        m["unit"] = "x".into();
        m["median"] = v.into();
        m["mean"] = v.into();
        m["details"] = serde_json::json!({});
        doc["measurements"].as_array_mut().unwrap().push(m);
    }
    // one file per call: the tests run in parallel threads of one process, and two of them
    // writing the same name let a third read a half-written file
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let p = dir().join(format!("costs-{static_w}-{n}.json"));
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    p
}

fn ok(args: &[&str]) -> String {
    let out = cmd().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn refused(args: &[&str], needle: &str) {
    let out = cmd().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
    assert!(out.stdout.is_empty());
}

const H100: [&str; 4] = ["--gpu", "h100-sxm", "--family", "hopper"];

#[test]
fn bad_energy_requests_are_one_line_exit_2() {
    let f = costs_file(200.0);
    let f = f.to_str().unwrap();
    let shape = ["4096", "4096", "4096"];
    let with = |extra: &[&str]| -> Vec<String> {
        shape
            .iter()
            .chain(H100.iter())
            .chain(extra.iter())
            .map(|s| s.to_string())
            .collect()
    };
    let run = |extra: &[&str], needle: &str| {
        let a = with(extra);
        refused(&a.iter().map(String::as_str).collect::<Vec<_>>(), needle);
    };
    run(&["--objective", "speed"], "unknown objective 'speed'");
    run(
        &[
            "--objective",
            "energy",
            "--energy-costs",
            f,
            "--power-limit",
            "-5",
        ],
        "--power-limit: '-5'",
    );
    run(
        &[
            "--objective",
            "energy",
            "--energy-costs",
            f,
            "--power-limit",
            "abc",
        ],
        "not a power in watts",
    );
    run(
        &[
            "--objective",
            "energy",
            "--energy-costs",
            f,
            "--power-limit",
            "150",
        ],
        "at or below the GPU's static power",
    );
    run(
        &[
            "--objective",
            "energy",
            "--energy-costs",
            "no/such/file.json",
        ],
        "--energy-costs no/such/file.json",
    );
    let flat = dir().join("flat.json");
    std::fs::write(&flat, r#"{"l2_perf_ratio": 4000}"#).unwrap();
    run(
        &[
            "--objective",
            "energy",
            "--energy-costs",
            flat.to_str().unwrap(),
        ],
        "a flat override has no measurements",
    );
    run(
        &["--pareto", "--format", "triton", "--energy-costs", f],
        "--pareto writes text, csv or json",
    );
    // a calibration without the energy measurements
    run(
        &[
            "--objective",
            "edp",
            "--energy-costs",
            "results/h100/calibrate-full-2026-11-26.json",
        ],
        "has no measurement 'energy_static_w'",
    );
    // a GPU with no committed costs
    refused(
        &[
            "4096",
            "4096",
            "4096",
            "--gpu",
            "a100",
            "--family",
            "origami",
            "--objective",
            "energy",
        ],
        "no energy costs for",
    );
}

#[test]
fn the_energy_pick_is_priced_in_every_format() {
    let f = costs_file(200.0);
    let f = f.to_str().unwrap();
    let mut a = vec!["4096", "4096", "4096"];
    a.extend(H100);
    a.extend(["--objective", "energy", "--energy-costs", f]);
    let text = ok(&a);
    assert!(
        text.contains("objective energy: ranked by the energy model under a power limit of 700 W"),
        "{text}"
    );
    assert!(text.contains("energy_mJ"), "{text}");
    let mut j = a.clone();
    j.extend(["--format", "json"]);
    let v: Value = serde_json::from_str(&ok(&j)).unwrap();
    let e = &v["pick"]["energy"];
    assert!(e["energy_mj"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(v["objective"]["objective"], "energy");
    // the ranked list is in energy order, the pick first
    let mj: Vec<f64> = v["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["energy"]["energy_mj"].as_f64().unwrap())
        .collect();
    assert!(mj.windows(2).all(|w| w[0] <= w[1]), "{mj:?}");
    assert_eq!(mj[0], e["energy_mj"].as_f64().unwrap());
    // a batch in CSV gains the energy columns
    let shapes = dir().join("s.csv");
    std::fs::write(&shapes, "M,N,K\n4096,4096,4096\n1,6144,4096\n").unwrap();
    let mut b = vec!["--shapes", shapes.to_str().unwrap(), "--format", "csv"];
    b.extend(H100);
    b.extend(["--objective", "edp", "--energy-costs", f]);
    let csv = ok(&b);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .ends_with(",sustained_us,energy_mj,power_w,power_capped"));
    assert_eq!(lines.count(), 2, "{csv}");
}

#[test]
fn a_lower_power_limit_slows_the_sustained_time_and_the_front_is_monotone() {
    let f = costs_file(200.0);
    let f = f.to_str().unwrap();
    let sustained = |limit: &str| -> f64 {
        let mut a = vec!["8192", "8192", "8192"];
        a.extend(H100);
        a.extend([
            "--objective",
            "sustained",
            "--energy-costs",
            f,
            "--format",
            "json",
            "--power-limit",
            limit,
        ]);
        let v: Value = serde_json::from_str(&ok(&a)).unwrap();
        v["pick"]["energy"]["sustained_us"].as_f64().unwrap()
    };
    let (high, low) = (sustained("1000"), sustained("300"));
    assert!(low > high * 1.2, "{low} vs {high}");
    let png = dir().join("front.png");
    let mut a = vec!["8192", "8192", "8192"];
    a.extend(H100);
    a.extend([
        "--pareto",
        "--format",
        "csv",
        "--energy-costs",
        f,
        "--power-limit",
        "400",
        "--plot",
        png.to_str().unwrap(),
    ]);
    let csv = ok(&a);
    let rows: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    assert!(!rows.is_empty(), "{csv}");
    // columns 10 and 11 of 14 (the config is quoted and holds commas): count from the end
    let col = |r: &Vec<String>, from_end: usize| r[r.len() - from_end].parse::<f64>().unwrap();
    for w in rows.windows(2) {
        assert!(col(&w[0], 4) <= col(&w[1], 4), "time ascending: {csv}");
        assert!(col(&w[0], 3) > col(&w[1], 3), "energy descending: {csv}");
    }
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
}

#[test]
fn explain_accounts_for_the_picks_energy() {
    let args = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = vec!["1", "28672", "4096"];
        v.extend(H100);
        v.extend(["--explain"]);
        v.extend(extra);
        v
    };
    let out = ok(&args(&["--objective", "energy"]));
    let at = out
        .find("== Energy of the pick")
        .unwrap_or_else(|| panic!("{out}"));
    let section = &out[at..];
    assert!(section.contains("busy share"), "{section}");
    // a decode launch on the TMA path: below the limit, and its parts add up to the
    // energy printed under it
    let full = section
        .lines()
        .find(|l| l.trim_start().starts_with("at full clock"))
        .unwrap();
    let mj: Vec<f64> = full
        .split(';')
        .filter_map(|part| part.trim().strip_suffix(" mJ"))
        .map(|v| v.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(mj.len(), 6, "{full}");
    let under = section
        .lines()
        .find(|l| l.trim_start().starts_with("under"))
        .unwrap();
    assert!(under.contains("not capped"), "{under}");
    let total: f64 = under
        .split(',')
        .find_map(|part| part.trim().strip_suffix(" mJ"))
        .unwrap()
        .parse()
        .unwrap();
    let sum: f64 = mj.iter().sum();
    assert!(
        (sum - total).abs() < 1e-3 * total.max(1.0),
        "{sum} vs {total}: {section}"
    );
    // the model's own time objective prints no energy account
    assert!(!ok(&args(&[])).contains("== Energy of the pick"));
}
