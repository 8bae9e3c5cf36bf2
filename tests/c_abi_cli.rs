//! The C interface (`crates/origami-c`, called through its extern functions) picks what
//! `origami-select` prints: for the seed shapes in every family and set, the config, its
//! switches, predicted time, shared memory and registers (`--format json`), and the
//! launch grid, kernel and NUM_PROGRAMS (`--format triton`); a bad input fails with the
//! CLI's exit code and the message it prints after `origami-select: error: `.

use std::ffi::{CStr, CString};
use std::process::Command;
use std::ptr;

use origami_c::{
    field_text, origami_last_error, origami_select, origami_selector_free, origami_selector_new,
    OrigamiPick, OrigamiSelector, OrigamiStatus,
};
use origami_core::model::family_set::set_names;

const GPU: &str = "h100-sxm";
const SEED: &str = "data/seed_shapes.csv";

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_origami-select"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

fn cli_json_lines(args: &[&str]) -> Vec<serde_json::Value> {
    let out = cli(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    if text.trim_start().starts_with('[') {
        match serde_json::from_str(&text).unwrap() {
            serde_json::Value::Array(v) => v,
            _ => unreachable!(),
        }
    } else {
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

struct Sel(*mut OrigamiSelector);

impl Drop for Sel {
    fn drop(&mut self) {
        unsafe { origami_selector_free(self.0) }
    }
}

fn selector(family: &str) -> Sel {
    let (gpu, fam) = (CString::new(GPU).unwrap(), CString::new(family).unwrap());
    let mut out = ptr::null_mut();
    let s = unsafe { origami_selector_new(ptr::null(), gpu.as_ptr(), fam.as_ptr(), &mut out) };
    assert_eq!(s, OrigamiStatus::Ok);
    Sel(out)
}

fn select(sel: &Sel, m: u64, n: u64, k: u64, dtype: &str) -> Result<OrigamiPick, (i32, String)> {
    let d = CString::new(dtype).unwrap();
    let mut p = OrigamiPick::ZERO;
    let s = unsafe { origami_select(sel.0, m, n, k, d.as_ptr(), &mut p) };
    if s == OrigamiStatus::Ok {
        Ok(p)
    } else {
        let msg = unsafe { CStr::from_ptr(origami_last_error()) };
        Err((s.code(), msg.to_str().unwrap().to_string()))
    }
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn the_c_picks_are_the_cli_picks_for_the_seed_shapes_in_every_family() {
    for family in set_names() {
        let sel = selector(family);
        for dtype in ["fp16", "bf16"] {
            let base = [
                "--shapes", SEED, "--family", family, "--gpu", GPU, "--dtype", dtype,
            ];
            let json = cli_json_lines(&[&base[..], &["--format", "json"]].concat());
            let is_triton = family.starts_with("triton");
            let launch = if is_triton {
                cli_json_lines(&[&base[..], &["--format", "triton"]].concat())
            } else {
                Vec::new()
            };
            assert!(json.len() >= 20, "{family}");
            for (i, row) in json.iter().enumerate() {
                let pr = &row["problem"];
                let (m, n, k) = (u(&pr["M"]), u(&pr["N"]), u(&pr["K"]));
                let what = format!("{family} {m}x{n}x{k} {dtype}");
                let p = select(&sel, m, n, k, dtype).unwrap_or_else(|e| panic!("{what}: {e:?}"));
                let c = &row["pick"];
                assert_eq!(
                    field_text(&p.dtype),
                    pr["dtype"].as_str().unwrap(),
                    "{what}"
                );
                assert_eq!(
                    [
                        p.block_m,
                        p.block_n,
                        p.block_k,
                        p.group_m,
                        p.num_warps,
                        p.num_stages
                    ]
                    .map(u64::from),
                    [
                        "BLOCK_SIZE_M",
                        "BLOCK_SIZE_N",
                        "BLOCK_SIZE_K",
                        "GROUP_SIZE_M",
                        "num_warps",
                        "num_stages"
                    ]
                    .map(|f| u(&c[f])),
                    "{what}"
                );
                for (got, name) in [
                    (p.flatten, "FLATTEN"),
                    (p.warp_specialize, "WARP_SPECIALIZE"),
                    (p.epilogue_subtile, "EPILOGUE_SUBTILE"),
                ] {
                    assert_eq!(got, c[name].as_bool().unwrap_or(false), "{what} {name}");
                }
                // The CLI writes f64s in shortest round-trip form, but serde_json's default
                // parser may land one ulp off (its exact parser is a feature this build
                // leaves off): equal to within 2 ulps. The C picks equal the engine's
                // bit for bit (crates/origami-c/tests/abi.rs).
                for (got, name) in [
                    (p.predicted_us, "predicted_us"),
                    (p.predicted_cycles, "predicted_cycles"),
                ] {
                    let want = c[name].as_f64().unwrap();
                    assert!(
                        (got - want).abs() <= 2.0 * f64::EPSILON * want.abs(),
                        "{what} {name}: {got} vs {want}"
                    );
                }
                assert_eq!(p.smem_bytes, u(&c["smem_bytes"]), "{what}");
                assert_eq!(
                    i64::from(p.registers),
                    c["registers"].as_i64().unwrap_or(-1),
                    "{what}"
                );
                let fam = row["family"].as_str().unwrap_or(family);
                assert_eq!(field_text(&p.family), fam, "{what}");
                if is_triton {
                    // A persistent kernel's launch (triton-tma, triton-auto) names its
                    // kernel and grid; the plain triton family's is its kwargs alone.
                    let l = &launch[i];
                    let kwargs = if l.get("kwargs").is_some() {
                        assert_eq!(p.grid, u(&l["grid"][0]), "{what}");
                        assert_eq!(
                            field_text(&p.kernel),
                            l["kernel"].as_str().unwrap(),
                            "{what}"
                        );
                        &l["kwargs"]
                    } else {
                        l
                    };
                    assert_eq!(u64::from(p.block_m), u(&kwargs["BLOCK_SIZE_M"]), "{what}");
                    assert_eq!(
                        i64::from(p.num_programs),
                        kwargs["NUM_PROGRAMS"].as_i64().unwrap_or(-1),
                        "{what}"
                    );
                }
            }
        }
    }
}

#[test]
fn bad_inputs_fail_as_the_cli_does() {
    for (family, shape, dtype) in [
        ("triton-tma", ["4096", "4096", "4100"], "fp16"),
        ("triton", ["0", "4096", "4096"], "fp16"),
        ("triton", ["4096", "4096", "4096"], "int3"),
    ] {
        let out = cli(&[
            &shape[..],
            &["--family", family, "--gpu", GPU, "--dtype", dtype],
        ]
        .concat());
        let stderr = String::from_utf8(out.stderr).unwrap();
        let cli_msg = stderr
            .lines()
            .find_map(|l| l.strip_prefix("origami-select: error: "))
            .unwrap_or_else(|| panic!("no error line in {stderr}"));
        let [m, n, k] = shape.map(|s| s.parse::<u64>().unwrap());
        let (code, msg) = select(&selector(family), m, n, k, dtype).unwrap_err();
        assert_eq!(Some(code), out.status.code(), "{family} {shape:?} {dtype}");
        assert_eq!(msg, cli_msg, "{family} {shape:?} {dtype}");
    }
}
