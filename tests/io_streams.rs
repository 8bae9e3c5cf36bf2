//! Closed and full output streams, and input files that are not regular files: every tool
//! ends with one `tool: error: ...` (or `error: ...`) line on stderr and exit 1 when its
//! stdout cannot take the output (a pipe whose reader is gone, `/dev/full`), help and
//! version included, and exit 2 naming the reason when an input is a FIFO or a device.
//! Nothing panics.

use std::process::{Command, Output, Stdio};

fn bin(tool: &str) -> Command {
    let path = match tool {
        "origami-select" => env!("CARGO_BIN_EXE_origami-select"),
        "origami-predict" => env!("CARGO_BIN_EXE_origami-predict"),
        "origami-calibrate" => env!("CARGO_BIN_EXE_origami-calibrate"),
        "origami-bench" => env!("CARGO_BIN_EXE_origami-bench"),
        _ => unreachable!("{tool}"),
    };
    let mut c = Command::new(path);
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("TRITONBLAS_HW_PARAMS")
        .env("CUDA_VISIBLE_DEVICES", "")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Every command line below writes something to stdout on success.
const CASES: &[(&str, &[&str])] = &[
    ("origami-select", &["--help"]),
    ("origami-select", &["--version"]),
    ("origami-select", &["4096", "4096", "4096", "--gpu", "h200"]),
    ("origami-predict", &["--help"]),
    ("origami-predict", &["--version"]),
    (
        "origami-predict",
        &[
            "ws", "4096", "4096", "4096", "--dtype", "fp16", "--tile", "128x64", "--gpu", "h200",
        ],
    ),
    (
        "origami-predict",
        &[
            "roofline", "4096", "4096", "4096", "--dtype", "fp16", "--gpu", "b200",
        ],
    ),
    ("origami-calibrate", &["--help"]),
    ("origami-calibrate", &["--version"]),
    ("origami-calibrate", &["--check", "calibrations/h200.json"]),
    ("origami-bench", &["--help"]),
    ("origami-bench", &["--version"]),
    ("origami-bench", &["configs"]),
    (
        "origami-bench",
        &[
            "refit",
            "--out",
            "results/h200/bench",
            "--fit-set",
            "seed_shapes",
            "--rounds",
            "1",
        ],
    ),
];

fn assert_one_line_exit_1(what: &str, o: &Output) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_eq!(o.status.code(), Some(1), "{what}: {err}");
    let last = err.lines().last().unwrap_or("");
    assert!(last.contains("error: "), "{what}: {err}");
    assert!(
        last.contains("writing") && (last.contains("Broken pipe") || last.contains("No space")),
        "{what}: {err}"
    );
    let errors = err.lines().filter(|l| l.contains("error")).count();
    assert_eq!(errors, 1, "{what}: {err}");
}

#[test]
fn a_full_stdout_is_exit_1_with_one_line() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    for (tool, args) in CASES {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = bin(tool).args(*args).stdout(full).output().unwrap();
        assert_one_line_exit_1(&format!("{tool} {args:?} > /dev/full"), &o);
    }
}

/// The write end of a pipe whose reader is already gone: a FIFO opened for reading
/// without blocking, then for writing, then the reader closed.
#[cfg(target_os = "linux")]
fn closed_pipe(dir: &std::path::Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    const O_NONBLOCK: i32 = 0o4000;
    let fifo = dir.join("closed");
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    drop(reader);
    writer
}

#[cfg(target_os = "linux")]
#[test]
fn a_closed_pipe_is_exit_1_with_one_line() {
    let dir = std::env::temp_dir().join(format!("origami-io-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (tool, args) in CASES {
        let o = bin(tool)
            .args(*args)
            .stdout(closed_pipe(&dir))
            .output()
            .unwrap();
        assert_one_line_exit_1(&format!("{tool} {args:?} | (closed)"), &o);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn devices_and_fifos_are_not_read() {
    let dir = std::env::temp_dir().join(format!("origami-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let mut inputs = vec!["/dev/zero".to_string()];
    if made.map(|s| s.success()).unwrap_or(false) {
        inputs.push(fifo.display().to_string());
    }
    let out = dir.join("out").display().to_string();
    for input in &inputs {
        let cases: Vec<(&str, Vec<&str>, Option<&str>)> = vec![
            ("origami-select", vec!["4096", "4096", "4096"], Some(input)),
            ("origami-select", vec!["--shapes", input], None),
            ("origami-calibrate", vec!["--check", input], None),
            (
                "origami-predict",
                vec!["model", "--model", "sol", "--input", input, "--out", &out],
                None,
            ),
            (
                "origami-predict",
                vec![
                    "model",
                    "--model",
                    "sol",
                    "--input",
                    "x.csv",
                    "--out",
                    &out,
                    "--gpu-file",
                    input,
                ],
                None,
            ),
        ];
        for (tool, args, env) in cases {
            let mut c = bin(tool);
            c.args(&args).stdout(Stdio::null());
            if let Some(v) = env {
                c.env("TRITONBLAS_HW_PARAMS", v);
            }
            let o = c.output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            let what = format!("{tool} {args:?} env {env:?}");
            assert!(!err.contains("panicked"), "{what}: {err}");
            assert_eq!(o.status.code(), Some(2), "{what}: {err}");
            assert!(err.contains("not a regular file"), "{what}: {err}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
