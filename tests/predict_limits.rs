//! origami-predict at the size limit: model costs do not grow with the problem (the
//! warp-specialized model at 2^31 in every L2 mode answers at once, in bounded memory),
//! and sizes or swizzles beyond the limits are one-line exit-2 errors naming the limit.

use std::time::{Duration, Instant};

use assert_cmd::Command;

fn cmd() -> Command {
    Command::cargo_bin("origami-predict").unwrap()
}

fn one_line_exit_2(args: &[&str], needle: &str) {
    let out = cmd().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "'{needle}' not in {err}");
    assert!(out.stdout.is_empty());
}

const MAX: &str = "2147483648";

#[test]
fn ws_at_the_size_limit_answers_in_every_l2_mode() {
    for l2 in ["none", "hit-rate", "raster"] {
        for swizzle in ["1", "8"] {
            let t = Instant::now();
            let out = cmd()
                .args(["ws", MAX, MAX, MAX, "--dtype", "fp16", "--tile", "128x64"])
                .args(["--gpu", "h200", "--l2", l2, "--swizzle", swizzle])
                .args(["--cluster", "2x1", "--format", "json"])
                .timeout(Duration::from_secs(60))
                .output()
                .unwrap();
            assert!(out.status.success(), "{l2}: {out:?}");
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            // 2^24 x 2^25 tiles of 128 x 64, 132 at a time
            assert_eq!(v["tiles"], 1u64 << 49, "{v}");
            let us = v["predicted_us"].as_f64().unwrap();
            assert!(us.is_finite() && us > 0.0, "{v}");
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "{l2}: {:?}",
                t.elapsed()
            );
        }
    }
}

#[test]
fn sizes_beyond_the_limit_are_refused() {
    let huge = "18446744073709551615";
    for l2 in ["none", "raster"] {
        one_line_exit_2(
            &[
                "ws", huge, huge, huge, "--dtype", "fp16", "--tile", "128x64", "--l2", l2, "--gpu",
                "h200",
            ],
            "above the limit 2^31",
        );
    }
    one_line_exit_2(
        &[
            "ws",
            "1",
            "2147483649",
            "1",
            "--dtype",
            "fp16",
            "--tile",
            "128x64",
            "--gpu",
            "h200",
        ],
        "N: 2147483649 is above the limit 2^31",
    );
    one_line_exit_2(
        &[
            "roofline",
            "1",
            "1",
            "4294967296",
            "--dtype",
            "fp16",
            "--gpu",
            "h200",
        ],
        "K: 4294967296 is above the limit 2^31",
    );
}

#[test]
fn model_rows_beyond_the_limit_name_their_line() {
    let dir = std::env::temp_dir().join(format!("origami-predict-limits-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("big.csv");
    std::fs::write(
        &csv,
        "M,N,K,dtype,tile\n2147483648,2147483648,2147483648,fp16,128x64\n\
         18446744073709551615,1,1,fp16,128x64\n",
    )
    .unwrap();
    let out_dir = dir.join("out");
    one_line_exit_2(
        &[
            "model",
            "--model",
            "ws",
            "--l2",
            "raster",
            "--gpu",
            "h200",
            "--input",
            csv.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        "line 3: M: 18446744073709551615 is above the limit 2^31",
    );
    assert!(!out_dir.exists(), "nothing written on bad input");
    // the row at the limit alone runs
    std::fs::write(
        &csv,
        "M,N,K,dtype,tile\n2147483648,2147483648,2147483648,fp16,128x64\n",
    )
    .unwrap();
    let out = cmd()
        .args([
            "model", "--model", "ws", "--l2", "raster", "--gpu", "h200", "--input",
        ])
        .arg(&csv)
        .arg("--out")
        .arg(&out_dir)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out_dir.join("predictions_ws_raster.csv").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn swizzle_beyond_the_widest_band_is_refused() {
    one_line_exit_2(
        &[
            "ws",
            "4096",
            "4096",
            "4096",
            "--dtype",
            "fp16",
            "--tile",
            "128x64",
            "--l2",
            "raster",
            "--swizzle",
            "65",
            "--gpu",
            "h200",
        ],
        "swizzle must be 1 to 64 clusters, got 65",
    );
}
