//! Build script: embeds the CUDA sources of `csrc/` and, when an `nvcc` is found, compiles
//! the calibration microbenchmarks to cubins for each architecture of
//! `ORIGAMI_CUDA_ARCHS` (default `80;86;89;90`) and embeds them too.
//!
//! Design (the architecture doc, docs/architecture.md, "Dependencies"): nvcc is looked up
//! via `$NVCC`, `$CUDA_HOME/bin/nvcc`, then `PATH`. Without one the build still succeeds:
//! it prints one `cargo::warning` and the program compiles the embedded sources with NVRTC
//! for the GPU it finds. With one, a kernel that does not compile fails the build (that is
//! the point of the CI build with PyPI's nvcc). `ORIGAMI_NVCC=off` skips nvcc even when
//! present. Only `OUT_DIR` is written.
//!
//! Every `csrc/*.cu` file is embedded as source (with `#include "x.cuh"` of a sibling
//! header inlined, since NVRTC gets no include path); only the microbenchmarks listed in
//! `PREBUILT` are compiled by nvcc: `gemm.cu` is compiled per configuration at run time.
//! The microbenchmarks of `PREBUILT_SM90A` use instructions of the arch-specific target
//! `sm_90a` only (wgmma, which exists nowhere else, and the TMA loads next to it): they
//! cannot compile for the plain architectures, so nvcc builds them once for `sm_90a`
//! when `ORIGAMI_CUDA_ARCHS` includes 90, into a second table that the program uses only
//! on compute capability 9.0 (an sm_90a cubin runs nowhere else).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The microbenchmarks compiled ahead of time when nvcc is present.
const PREBUILT: &[&str] = &[
    "l2_bw",
    "dram_bw",
    "pointer_chase",
    "mma_latency",
    "sm_clock",
    "smem_bw",
    "sync_cost",
    "kloop_cost",
    "tc_rate",
    "energy_load",
    "sm_topology",
];
/// The microbenchmarks compiled for the arch-specific target sm_90a only (when 90 is among
/// the architectures).
const PREBUILT_SM90A: &[&str] = &["tc_wgmma", "tma_load"];
const DEFAULT_ARCHS: &str = "80;86;89;90";

fn main() {
    println!("cargo::rerun-if-changed=csrc");
    for var in [
        "NVCC",
        "CUDA_HOME",
        "CUDA_PATH",
        "ORIGAMI_CUDA_ARCHS",
        "ORIGAMI_NVCC",
        "PATH",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let csrc = manifest.join("csrc");

    // 1. Embedded sources (headers inlined).
    let mut sources: Vec<(String, String)> = Vec::new();
    if let Ok(rd) = fs::read_dir(&csrc) {
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cu"))
            .collect();
        files.sort();
        for f in files {
            println!("cargo::rerun-if-changed={}", f.display());
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            let text = inline_includes(&f, &csrc, 0);
            let dst = out.join(format!("{stem}.embedded.cu"));
            fs::write(&dst, text).expect("write embedded source");
            sources.push((stem, dst.display().to_string()));
        }
    }

    // 2. Cubins, when nvcc is present.
    let archs =
        parse_archs(&env::var("ORIGAMI_CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.into()));
    let mut cubins: Vec<(String, u32, String)> = Vec::new();
    // (stem, arch-specific target such as "sm_90a", path)
    let mut cubins_specific: Vec<(String, String, String)> = Vec::new();
    let mut nvcc_version = String::new();
    let disabled = env::var("ORIGAMI_NVCC").is_ok_and(|v| v == "off" || v == "0");
    match (disabled, find_nvcc()) {
        (true, _) => println!(
            "cargo::warning=ORIGAMI_NVCC=off: CUDA kernels are embedded as source and compiled with NVRTC at run time"
        ),
        (false, None) => println!(
            "cargo::warning=nvcc not found ($NVCC, $CUDA_HOME/bin, PATH): CUDA kernels are embedded as source and compiled with NVRTC at run time"
        ),
        (false, Some(nvcc)) => {
            nvcc_version = Command::new(&nvcc)
                .arg("--version")
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .and_then(|s| s.lines().last().map(str::to_owned))
                .unwrap_or_default();
            // One nvcc process per (kernel, target), run concurrently.
            let mut jobs = Vec::new();
            let mut targets: Vec<(&str, String)> = Vec::new();
            for name in PREBUILT {
                for &arch in &archs {
                    targets.push((name, format!("sm_{arch}")));
                }
            }
            if archs.contains(&90) {
                for name in PREBUILT_SM90A {
                    targets.push((name, "sm_90a".to_string()));
                }
            }
            for (name, target) in targets {
                let src = csrc.join(format!("{name}.cu"));
                if !src.exists() {
                    continue;
                }
                let dst = out.join(format!("{name}.{target}.cubin"));
                let child = Command::new(&nvcc)
                    .args(["-cubin", "-O3", "-std=c++17", "-Xptxas", "-v"])
                    .arg(format!("-arch={target}"))
                    .arg("-o")
                    .arg(&dst)
                    .arg(&src)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap_or_else(|e| panic!("cannot run {}: {e}", nvcc.display()));
                jobs.push((name, target, dst, child));
            }
            let mut ptxas_report = String::new();
            for (name, target, dst, child) in jobs {
                let o = child.wait_with_output().expect("wait for nvcc");
                if !o.status.success() {
                    panic!(
                        "nvcc failed on csrc/{name}.cu for {target} (set ORIGAMI_NVCC=off to build without nvcc):\n{}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                }
                let _ = writeln!(ptxas_report, "== {name} {target}");
                ptxas_report.push_str(&String::from_utf8_lossy(&o.stderr));
                let path = dst.display().to_string();
                match target.strip_prefix("sm_").and_then(|a| a.parse::<u32>().ok()) {
                    Some(arch) => cubins.push((name.to_string(), arch, path)),
                    None => cubins_specific.push((name.to_string(), target, path)),
                }
            }
            fs::write(out.join("ptxas-report.txt"), ptxas_report).expect("write ptxas report");
        }
    }

    // 3. The generated Rust table.
    let mut rs = String::from("// @generated by build.rs\n");
    rs.push_str("/// Embedded CUDA sources: (file stem, text with sibling headers inlined).\n");
    rs.push_str("pub static SOURCES: &[(&str, &str)] = &[\n");
    for (stem, path) in &sources {
        let _ = writeln!(rs, "    ({stem:?}, include_str!({path:?})),");
    }
    rs.push_str("];\n");
    rs.push_str("/// Cubins compiled by nvcc at build time: (file stem, sm arch, bytes).\n");
    rs.push_str("pub static CUBINS: &[(&str, u32, &[u8])] = &[\n");
    for (stem, arch, path) in &cubins {
        let _ = writeln!(rs, "    ({stem:?}, {arch}, include_bytes!({path:?})),");
    }
    rs.push_str("];\n");
    rs.push_str(
        "/// Cubins for an arch-specific target (e.g. sm_90a): (file stem, target, bytes).\n",
    );
    rs.push_str("pub static CUBINS_ARCH_SPECIFIC: &[(&str, &str, &[u8])] = &[\n");
    for (stem, target, path) in &cubins_specific {
        let _ = writeln!(rs, "    ({stem:?}, {target:?}, include_bytes!({path:?})),");
    }
    rs.push_str("];\n");
    let _ = writeln!(
        rs,
        "/// The nvcc that built the cubins (empty without one).\npub static NVCC_VERSION: &str = {nvcc_version:?};"
    );
    fs::write(out.join("kernels.rs"), rs).expect("write kernels.rs");
}

/// Parse `80;86;89;90` (also accepts commas, spaces and `sm_` prefixes).
fn parse_archs(s: &str) -> Vec<u32> {
    s.split(|c: char| c == ';' || c == ',' || c.is_whitespace())
        .map(|t| {
            t.trim()
                .trim_start_matches("sm_")
                .trim_start_matches("compute_")
        })
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<u32>().unwrap_or_else(|_| {
                panic!("ORIGAMI_CUDA_ARCHS: '{t}' is not an architecture like 90")
            })
        })
        .collect()
}

fn find_nvcc() -> Option<PathBuf> {
    if let Some(p) = env::var_os("NVCC").map(PathBuf::from) {
        if p.is_file() {
            return Some(p);
        }
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = env::var_os(var) {
            let p = Path::new(&home).join("bin").join("nvcc");
            if p.is_file() {
                return Some(p);
            }
        }
    }
    env::var_os("PATH").and_then(|paths| {
        env::split_paths(&paths)
            .map(|d| d.join("nvcc"))
            .find(|p| p.is_file())
    })
}

/// Inline `#include "name"` of files beside `file` (for NVRTC, which gets no include path).
fn inline_includes(file: &Path, dir: &Path, depth: u32) -> String {
    assert!(depth < 8, "include nesting too deep at {}", file.display());
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("#include \"") {
            if let Some(name) = rest.split('"').next() {
                let inc = dir.join(name);
                if inc.exists() {
                    println!("cargo::rerun-if-changed={}", inc.display());
                    let _ = writeln!(out, "// ---- begin {name} (inlined by build.rs)");
                    out.push_str(&inline_includes(&inc, dir, depth + 1));
                    let _ = writeln!(out, "// ---- end {name}");
                    continue;
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
