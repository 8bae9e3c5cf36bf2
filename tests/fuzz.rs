//! Fuzz harness: every parser of the project (hardware JSON, full and flat; shape lists;
//! the model CSV; perf descriptions; sweep folders, and two passes of one joined) and
//! `Selector::select` with random constants, fed mutated real files and made-up text.
//! What must hold for every input: no panic, an answer within a deadline (no hang),
//! memory under a cap (the allocator of this test binary refuses to go above it, which
//! aborts the run), and every rejection a one-line message. Accepted inputs go on
//! through the tools' next step (a selection, a prediction, a report with plots), which
//! must hold the same.
//!
//! Cases per property: `ORIGAMI_FUZZ_CASES` (default 256, what CI runs). Run with
//! `--nocapture` to see the tally of inputs and outcomes per property.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use origami::constants::CONSTANT_NAMES;
use origami::dtype::Dtype;
use origami::hw::load::parse_str;
use origami::model::shapes::parse_shapes;
use origami::model::{ModelConstants, Problem, Selector, Variant};
use origami::perf::table::{parse_input, predict_rows, Model};
use origami::perf::{GpuPerf, L2Mode, Pair};
use origami::pick::PickRequest;
use origami::report::selection::{CsvWriter, JsonWriter, SelectionWriter};
use origami::setup::{setup, SetupRequest};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ---------------------------------------------------------------- bounded memory

/// Live heap bytes above which an allocation fails (and the test binary aborts).
const HEAP_CAP: usize = 2 << 30;

struct CappedAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let size = layout.size();
        let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
        if live > HEAP_CAP {
            LIVE.fetch_sub(size, Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        PEAK.fetch_max(live, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: CappedAlloc = CappedAlloc;

// ---------------------------------------------------------------- harness

fn cases() -> u32 {
    std::env::var("ORIGAMI_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Longest a single case may take (a hang fails the case instead of stalling CI).
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `f` on its own thread; a panic or a run past the deadline fails the case.
fn within_deadline<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TestCaseError> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(what.into())
        .spawn(move || {
            let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
        })
        .expect("spawn");
    match rx.recv_timeout(DEADLINE) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(_)) => Err(TestCaseError::fail(format!("{what}: panicked"))),
        Err(_) => Err(TestCaseError::fail(format!(
            "{what}: no answer within {DEADLINE:?}"
        ))),
    }
}

/// A rejection must be one non-empty line.
fn one_line(what: &str, msg: &str) -> Result<(), TestCaseError> {
    if msg.trim().is_empty() || msg.contains('\n') {
        return Err(TestCaseError::fail(format!(
            "{what}: rejection is not one line: {msg:?}"
        )));
    }
    Ok(())
}

static TALLY: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

/// Counts one outcome of a property ("property: outcome"); after the property's last
/// case, prints its tally (seen under `--nocapture`).
fn tally(key: &str) {
    let mut t = TALLY.lock().unwrap();
    *t.entry(key.to_string()).or_default() += 1;
    let property = key.split(':').next().unwrap_or(key);
    let prefix = format!("{property}:");
    let done: u64 = t
        .iter()
        .filter(|(k, _)| k.starts_with(&prefix))
        .map(|(_, v)| *v)
        .sum();
    if done == u64::from(cases()) {
        let counts: Vec<String> = t
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .map(|(k, v)| format!("{}: {v}", &k[prefix.len()..].trim()))
            .collect();
        eprintln!(
            "fuzz {property}: {done} inputs; {}; peak heap {:.1} MiB",
            counts.join(", "),
            PEAK.load(Ordering::Relaxed) as f64 / (1 << 20) as f64
        );
    }
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo(rel)).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("origami-fuzz-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ---------------------------------------------------------------- mutations

/// Values that break parsers and models: extremes, wrong types, invalid JSON.
const NASTY: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1",
    "0.5",
    "2",
    "5",
    "7",
    "1e308",
    "-1e308",
    "1e-308",
    "1e400",
    "NaN",
    "inf",
    "-inf",
    "4294967296",
    "2147483648",
    "2147483649",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "\"x\"",
    "\"\"",
    "null",
    "true",
    "[]",
    "{}",
    "[1,2,3]",
    "",
    "0x10",
    "1,5",
    "\u{0}",
];

fn nasty() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(NASTY).prop_map(str::to_string),
        1 => any::<f64>().prop_map(|v| format!("{v}")),
        1 => (0u32..40).prop_map(|e| format!("{}", 1u64 << e.min(63))),
    ]
}

/// Numbers a real file could hold: positive, of any magnitude.
fn plausible() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..=100_000).prop_map(|v| v.to_string()),
        (-6i32..=6, 1.0..10.0f64).prop_map(|(e, m)| format!("{m}e{e}")),
    ]
}

/// Spans of numbers in a text (digits with sign, dot and exponent).
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let s = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b"+-.eE".contains(&b[i])) {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

/// One edit of a text.
#[derive(Debug, Clone)]
enum Edit {
    /// Replace the i-th number (mod count) with a nasty value.
    Number(usize, String),
    /// Replace the i-th quoted string (mod count) with a nasty value.
    Quoted(usize, String),
    /// Cut the text at a fraction of its length.
    Truncate(f64),
    /// Insert text at a fraction of its length.
    Insert(f64, String),
    /// Delete the i-th line (mod count).
    DeleteLine(usize),
    /// Repeat the i-th line (mod count).
    RepeatLine(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => (any::<usize>(), nasty()).prop_map(|(i, v)| Edit::Number(i, v)),
        6 => (any::<usize>(), plausible()).prop_map(|(i, v)| Edit::Number(i, v)),
        2 => (any::<usize>(), nasty()).prop_map(|(i, v)| Edit::Quoted(i, v)),
        1 => (0.0..1.0f64).prop_map(Edit::Truncate),
        1 => (0.0..1.0f64, prop_oneof![nasty(), "[,:{}\\[\\]\"#\n\r\t ]{1,4}".prop_map(|s| s)])
            .prop_map(|(f, s)| Edit::Insert(f, s)),
        1 => any::<usize>().prop_map(Edit::DeleteLine),
        1 => (any::<usize>(), 1usize..4).prop_map(|(i, n)| Edit::RepeatLine(i, n)),
    ]
}

fn at_char(text: &str, f: f64) -> usize {
    let mut i = ((text.len() as f64) * f) as usize;
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i.min(text.len())
}

fn apply(text: &str, e: &Edit) -> String {
    match e {
        Edit::Number(i, v) => {
            let spans = number_spans(text);
            if spans.is_empty() {
                return text.to_string();
            }
            let (s, t) = spans[i % spans.len()];
            format!("{}{v}{}", &text[..s], &text[t..])
        }
        Edit::Quoted(i, v) => {
            let quotes: Vec<usize> = text.match_indices('"').map(|(p, _)| p).collect();
            if quotes.len() < 2 {
                return text.to_string();
            }
            let k = (i % (quotes.len() / 2)) * 2;
            let (s, t) = (quotes[k], quotes[k + 1] + 1);
            format!("{}{v}{}", &text[..s], &text[t..])
        }
        Edit::Truncate(f) => text[..at_char(text, *f)].to_string(),
        Edit::Insert(f, v) => {
            let p = at_char(text, *f);
            format!("{}{v}{}", &text[..p], &text[p..])
        }
        Edit::DeleteLine(i) => {
            let lines: Vec<&str> = text.lines().collect();
            if lines.is_empty() {
                return String::new();
            }
            let k = i % lines.len();
            let kept: Vec<&str> = lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, l)| *l)
                .collect();
            kept.join("\n")
        }
        Edit::RepeatLine(i, n) => {
            let lines: Vec<&str> = text.lines().collect();
            if lines.is_empty() {
                return String::new();
            }
            let k = i % lines.len();
            let mut out = Vec::new();
            for (j, l) in lines.iter().enumerate() {
                out.push(*l);
                if j == k {
                    out.extend(std::iter::repeat(*l).take(*n));
                }
            }
            out.join("\n")
        }
    }
}

fn mutated(base: &str, edits: &[Edit]) -> String {
    edits.iter().fold(base.to_string(), |t, e| apply(&t, e))
}

// ---------------------------------------------------------------- hardware documents

const HW_FILES: &[&str] = &[
    "calibrations/h200.json",
    "calibrations/h100-sxm.json",
    "calibrations/a100.json",
    "calibrations/b200.json",
    "calibrations/rtx4090.json",
];

const PARAMS: &[&str] = &[
    "l2_perf_ratio",
    "dram_perf_ratio",
    "dram_bw_coeff",
    "hbm_latency_penalty",
    "mma_latency",
];

/// A flat override: some parameters, some constants (known names and others).
fn flat_override() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        3 => proptest::sample::select(CONSTANT_NAMES.to_vec()).prop_map(str::to_string),
        1 => "[a-z_]{1,12}",
    ];
    (
        proptest::collection::vec((proptest::sample::select(PARAMS), nasty()), 0..3),
        proptest::collection::vec((key, nasty()), 0..5),
    )
        .prop_map(|(params, constants)| {
            let mut fields: Vec<String> = params
                .into_iter()
                .map(|(k, v)| format!("\"{k}\": {v}"))
                .collect();
            let c: Vec<String> = constants
                .into_iter()
                .map(|(k, v)| format!("\"{k}\": {v}"))
                .collect();
            fields.push(format!("\"constants\": {{{}}}", c.join(", ")));
            format!("{{{}}}", fields.join(", "))
        })
}

fn hw_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0..HW_FILES.len(), proptest::collection::vec(edit(), 1..4))
            .prop_map(|(f, e)| mutated(&read(HW_FILES[f]), &e)),
        2 => flat_override(),
        1 => ".{0,64}",
    ]
}

const FAMILIES: &[&str] = &["triton", "origami", "seed"];
const DTYPES: &[Dtype] = &[
    Dtype::Fp16,
    Dtype::Bf16,
    Dtype::Fp8E4m3,
    Dtype::Fp32,
    Dtype::Tf32,
];

/// Sizes that are multiples of 8 more often than not (TMA's rule for N and K), and the
/// rest of `dim()`.
fn aligned_dim() -> impl Strategy<Value = u64> {
    prop_oneof![2 => (1u64..=4096).prop_map(|x| x * 8), 1 => dim()]
}

/// The CSV row (fields) of `origami-select M N K --family FAMILY --gpu GPU --top 1
/// --format csv`, through the library, or the one-line error.
fn pick_row(family: &str, gpu: &str, dtype: Dtype, sizes: [u64; 3]) -> Result<Vec<String>, String> {
    let text = pick_output(family, gpu, dtype, sizes, &mut CsvWriter)?;
    let row = text.lines().nth(1).ok_or("no row")?;
    Ok(row.split(',').map(str::to_string).collect())
}

/// The times a family set compared (its JSON's `auto.entrants[].compared_us`, in member
/// order; `None` where a member did not enter) and the member chosen.
fn compared_times(
    family: &str,
    gpu: &str,
    dtype: Dtype,
    sizes: [u64; 3],
) -> Result<(String, Vec<Option<f64>>), String> {
    let text = pick_output(family, gpu, dtype, sizes, &mut JsonWriter::default())?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let auto = &v["auto"];
    let chosen = auto["chosen"].as_str().ok_or("no chosen")?.to_string();
    let entrants = auto["entrants"].as_array().ok_or("no entrants")?;
    Ok((
        chosen,
        entrants.iter().map(|e| e["compared_us"].as_f64()).collect(),
    ))
}

/// `origami-select M N K --family FAMILY --gpu GPU --top 1` through the library in the
/// writer's format, or the one-line error.
fn pick_output(
    family: &str,
    gpu: &str,
    dtype: Dtype,
    [m, n, k]: [u64; 3],
    writer: &mut dyn SelectionWriter,
) -> Result<String, String> {
    let req = PickRequest {
        sizes: [m, n, k].map(|x| Some(x.to_string())),
        shapes: None,
        dtype: dtype.name().into(),
        gpu: Some(gpu.into()),
        override_file: None,
        family: family.into(),
        model: "origami".into(),
        no_fitted: false,
        no_correction: false,
        calibration_only: false,
        top: Some(1),
        all: false,
        explain: false,
        energy: Default::default(),
    };
    let job = req.prepare(|| None, |_| {}).map_err(|e| e.to_string())?;
    let (mut out, mut diag) = (Vec::new(), Vec::new());
    job.write(writer, &mut out, &mut diag)
        .map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn dim() -> impl Strategy<Value = u64> {
    prop_oneof![
        1u64..=64,
        1u64..=16_384,
        Just(1u64 << 31),
        (0u32..=31).prop_map(|e| 1u64 << e)
    ]
}

proptest! {
    #![proptest_config(config())]

    /// A hardware file (`TRITONBLAS_HW_PARAMS`), full or flat, through the loader and,
    /// when accepted, through setup and a selection.
    #[test]
    fn hardware_documents(
        text in hw_text(),
        fam in proptest::sample::select(FAMILIES),
        dtype in proptest::sample::select(DTYPES),
        (m, n, k) in (dim(), dim(), dim()),
        case in any::<u64>(),
    ) {
        let dir = scratch("hw");
        let path = dir.join(format!("{case}.json"));
        std::fs::write(&path, &text).unwrap();
        let p2 = path.clone();
        let outcome = within_deadline("hardware document", move || -> Result<String, String> {
            parse_str(&text, &p2).map_err(|e| e.to_string())?;
            let s = setup(&SetupRequest {
                device: None,
                gpu_name: None,
                override_file: Some(p2.clone()),
                family: fam.to_string(),
                model: "origami".into(),
                no_fitted: false,
                calibration_only: false,
            })
            .map_err(|e| e.to_string())?;
            let sel = s.selector(dtype).map_err(|e| e.to_string())?;
            let p = Problem::new(m, n, k, dtype).map_err(|e| e.to_string())?;
            let pick = sel.select(&p, false).map_err(|e| e.to_string())?;
            let c = pick.pick.latency_cycles;
            if !(c.is_finite() && c > 0.0) {
                return Ok(format!("BAD pick latency {c}"));
            }
            Ok("selected".into())
        })?;
        let _ = std::fs::remove_file(&path);
        match outcome {
            Ok(s) => {
                prop_assert!(!s.starts_with("BAD"), "{}", s);
                tally("hardware_documents: accepted and selected");
            }
            Err(e) => {
                one_line("hardware document", &e)?;
                tally("hardware_documents: rejected");
            }
        }
    }

    /// `origami-calibrate --check` and `origami-select` judge a file by one validator:
    /// a file the check passes is one every family can set up a selector from.
    #[test]
    fn check_passes_only_what_select_accepts(
        text in hw_text(),
        fam in proptest::sample::select(FAMILIES),
        case in any::<u64>(),
    ) {
        let dir = scratch("agree");
        let path = dir.join(format!("{case}.json"));
        std::fs::write(&path, &text).unwrap();
        let p2 = path.clone();
        let (checked, set_up) = within_deadline("check and select", move || {
            let opts = origami::calibrate::check::CheckOptions {
                max_cov: 0.01,
                require_measured: false,
            };
            let checked = origami::calibrate::check::check_file(&p2, &opts).map_err(|e| e.to_string());
            let set_up = setup(&SetupRequest {
                device: None,
                gpu_name: None,
                override_file: Some(p2.clone()),
                family: fam.to_string(),
                model: "origami".into(),
                no_fitted: false,
                calibration_only: false,
            })
            .map_err(|e| e.to_string())
            .and_then(|s| s.selector(Dtype::Fp16).map(|_| ()).map_err(|e| e.to_string()));
            (checked, set_up)
        })?;
        let _ = std::fs::remove_file(&path);
        if let Err(e) = &checked {
            one_line("--check", e)?;
        }
        if checked.is_ok() {
            prop_assert!(set_up.is_ok(), "--check passed, origami-select refused: {:?}", set_up);
            tally("check_passes_only_what_select_accepts: both accept");
        } else if set_up.is_ok() {
            tally("check_passes_only_what_select_accepts: check refuses (provenance, CoV), select accepts");
        } else {
            tally("check_passes_only_what_select_accepts: both refuse");
        }
    }

    /// `Selector::select` with random finite constants, in and out of their ranges
    /// (set directly, past the validation a file goes through).
    #[test]
    fn selector_with_random_constants(
        values in proptest::collection::vec(
            prop_oneof![
                4 => 0.0..4.0f64,
                2 => 0.0..100_000.0f64,
                1 => -1e6..1e6f64,
                1 => prop_oneof![Just(1e308), Just(-1e308), Just(1e-308), Just(0.0), Just(f64::MAX), Just(f64::MIN_POSITIVE)],
            ],
            CONSTANT_NAMES.len(),
        ),
        fam in proptest::sample::select(FAMILIES),
        dtype in proptest::sample::select(DTYPES),
        gpu in proptest::sample::select(&["h100-sxm", "h200", "a100", "b200", "rtx4090"][..]),
        seed_variant in any::<bool>(),
        (m, n, k) in (dim(), dim(), dim()),
    ) {
        let outcome = within_deadline("selector", move || -> Result<String, String> {
            let mut c = ModelConstants::default();
            for (name, v) in CONSTANT_NAMES.iter().zip(&values) {
                set_unchecked(&mut c, name, *v);
            }
            let doc = origami::hw::presets::preset(gpu).map_err(|e| e.to_string())?;
            let f = origami::model::family::family(fam).ok_or("unknown family")?;
            let v = if seed_variant { Variant::Seed } else { Variant::Origami };
            let s = Selector::new(f, &doc.gpu, &doc.params, &c, v, dtype).map_err(|e| e.to_string())?;
            let p = Problem::new(m, n, k, dtype).map_err(|e| e.to_string())?;
            let sel = s.select(&p, true).map_err(|e| e.to_string())?;
            let l = sel.pick.latency_cycles;
            if !(l.is_finite() && l > 0.0) {
                return Ok(format!("BAD pick latency {l}"));
            }
            for r in s.ranked(&sel, usize::MAX) {
                if !r.latency_cycles.is_finite() {
                    return Ok(format!("BAD ranked {} at {}", r.config, r.latency_cycles));
                }
            }
            Ok("selected".into())
        })?;
        match outcome {
            Ok(s) => {
                prop_assert!(!s.starts_with("BAD"), "{}", s);
                tally("selector_with_random_constants: selected");
            }
            Err(e) => {
                one_line("selector", &e)?;
                tally("selector_with_random_constants: rejected");
            }
        }
    }

    /// `origami-select --family triton-auto` through the library, on any shape, input type
    /// and GPU: no panic; its pick is the pick of the family it names, run alone, at the
    /// same predicted time, and no faster than the other family's pick; when it refuses,
    /// both families refuse, in one line.
    #[test]
    fn triton_auto_picks_one_of_the_two_families_picks(
        dtype in proptest::sample::select(DTYPES),
        gpu in proptest::sample::select(&["h100-sxm", "h200", "a100", "b200", "rtx4090"][..]),
        (m, n, k) in (dim(), aligned_dim(), aligned_dim()),
    ) {
        let (outcome, compared) = within_deadline("triton-auto", move || {
            (
                ["triton-auto", "triton", "triton-tma"].map(|f| pick_row(f, gpu, dtype, [m, n, k])),
                compared_times("triton-auto", gpu, dtype, [m, n, k]),
            )
        })?;
        let [auto, classic, tma] = outcome;
        match auto {
            Ok(row) => {
                let (fam, cfg, us) = (row[0].clone(), &row[2..11], &row[12]);
                let (own, other) = match fam.as_str() {
                    "triton" => (&classic, &tma),
                    "triton-tma" => (&tma, &classic),
                    f => return Err(TestCaseError::fail(format!("family {f}"))),
                };
                let own = own.as_ref().map_err(|e| TestCaseError::fail(format!("{fam} alone: {e}")))?;
                // the family's own row: rank, the six launch fields, [switches], cycles, us
                let switches = fam == "triton-tma";
                prop_assert_eq!(&own[1..7], &cfg[..6], "{:?} / {:?}", own, row);
                if switches {
                    prop_assert_eq!(&own[7..10], &cfg[6..9]);
                } else {
                    prop_assert!(cfg[6..9].iter().all(|s| s == "false"), "{:?}", row);
                }
                prop_assert_eq!(&own[if switches { 11 } else { 8 }], us);
                // the set compared each entrant's pick through its family's time map
                // (`hw::time_map`): the chosen one's compared time is the lowest
                let (chosen, times) = compared.map_err(TestCaseError::fail)?;
                prop_assert_eq!(&chosen, &fam);
                let mine = times[if switches { 1 } else { 0 }];
                let theirs = times[if switches { 0 } else { 1 }];
                prop_assert!(mine.is_some());
                prop_assert_eq!(theirs.is_some(), other.is_ok(), "{:?}", times);
                if let (Some(a), Some(b)) = (mine, theirs) {
                    prop_assert!(a <= b, "{:?} chose {}: {:?}", row, fam, times);
                }
                tally(&format!("triton_auto: {fam}"));
            }
            Err(e) => {
                one_line("triton-auto", &e)?;
                prop_assert!(classic.is_err() && tma.is_err(), "auto refused ({}) but a family ran", e);
                tally("triton_auto: refused");
            }
        }
    }

    /// Shape lists (`--shapes`): made-up rows and mutated seed lists.
    #[test]
    fn shape_lists(text in shape_text()) {
        let outcome = within_deadline("shape list", move || {
            parse_shapes(&text, "fuzz.csv", Dtype::Fp16).map_err(|e| e.to_string())
        })?;
        match outcome {
            Ok(shapes) => {
                for p in &shapes {
                    prop_assert!(p.m >= 1 && p.n >= 1 && p.k >= 1 && p.m <= 1 << 31 && p.n <= 1 << 31 && p.k <= 1 << 31);
                }
                tally("shape_lists: accepted");
            }
            Err(e) => {
                one_line("shape list", &e)?;
                prop_assert!(e.starts_with("fuzz.csv: "), "{}", e);
                tally("shape_lists: rejected");
            }
        }
    }

    /// The model CSV of `origami-predict model`, then the ws and SOL models on every row.
    #[test]
    fn model_csv(
        text in model_csv_text(),
        need_tile in any::<bool>(),
        gpu in proptest::sample::select(&["h100-sxm", "h200", "b200", "a100", "rtx4090"][..]),
        l2 in 0usize..4,
        swizzle in prop_oneof![1u64..=8, Just(64u64), Just(65u64), Just(0u64)],
    ) {
        let outcome = within_deadline("model csv", move || -> Result<usize, String> {
            let rows = parse_input(&text, "fuzz.csv", need_tile).map_err(|e| e.to_string())?;
            let g = GpuPerf::by_name(gpu).map_err(|e| e.to_string())?;
            let model = match l2 {
                0 => Model::Sol,
                1 => Model::Ws(L2Mode::None),
                2 => Model::Ws(L2Mode::HitRate(g.ws.l2_hit_rate)),
                _ => Model::Ws(L2Mode::Raster { order: None, swizzle }),
            };
            let out = predict_rows(&rows, &g, model, "fuzz.csv").map_err(|e| e.to_string())?;
            Ok(out.len())
        })?;
        match outcome {
            Ok(_) => tally("model_csv: predicted"),
            Err(e) => {
                one_line("model csv", &e)?;
                tally("model_csv: rejected");
            }
        }
    }

    /// Perf descriptions (`--gpu-file`), then the ws model and the roofline on them.
    #[test]
    fn perf_descriptions(
        f in 0..HW_FILES.len(),
        edits in proptest::collection::vec(edit(), 1..4),
        (m, n, k) in (dim(), dim(), dim()),
        tile in (1u32..=512, 1u32..=512),
        cluster in (1u32..=4, 1u32..=4),
        raster in any::<bool>(),
    ) {
        let base = read(&HW_FILES[f].replace("calibrations/", "calibrations/perf/"));
        let text = mutated(&base, &edits);
        let outcome = within_deadline("perf description", move || -> Result<(), String> {
            let g = GpuPerf::from_json(&text, "fuzz.json").map_err(|e| e.to_string())?;
            let p = origami::perf::Problem::new(m, n, k, Dtype::Fp16).map_err(|e| e.to_string())?;
            let o = origami::perf::WsOptions {
                tile: Pair { m: tile.0, n: tile.1 },
                cluster: Pair { m: cluster.0, n: cluster.1 },
                two_cta: None,
                l2: if raster { L2Mode::Raster { order: None, swizzle: 4 } } else { L2Mode::None },
            };
            let b = origami::perf::ws_predict(&p, &g, &o).map_err(|e| e.to_string())?;
            let _ = b.predicted_us;
            let r = origami::perf::roofline(&g, &origami::perf::RooflineOptions {
                m_list: vec![m],
                n,
                k,
                dtype: Dtype::Fp16,
                out: origami::perf::OutDtype::Fp16,
                acc16: false,
                dram_gbps: None,
            }).map_err(|e| e.to_string())?;
            let _ = r.text();
            Ok(())
        })?;
        match outcome {
            Ok(()) => tally("perf_descriptions: predicted"),
            Err(e) => {
                one_line("perf description", &e)?;
                tally("perf_descriptions: rejected");
            }
        }
    }

    /// A sweep folder (`configs.csv`, `shapes.csv`) through `origami-bench report`'s
    /// summary and plots.
    #[test]
    fn sweep_folders(
        config_edits in proptest::collection::vec(edit(), 0..4),
        shape_edits in proptest::collection::vec(edit(), 0..2),
        case in any::<u64>(),
    ) {
        let configs = mutated(&small_configs(), &config_edits);
        let shapes = mutated(&read("results/h100/device-check/shard0/shapes.csv"), &shape_edits);
        let dir = scratch(&format!("sweep-{case}"));
        std::fs::write(dir.join("configs.csv"), configs).unwrap();
        std::fs::write(dir.join("shapes.csv"), shapes).unwrap();
        let d2 = dir.clone();
        let outcome = within_deadline("sweep folder", move || -> Result<(), String> {
            let rows = origami::gemm::sweep_files::summarize_folder(&d2, None)
                .map_err(|e| e.to_string())?;
            origami::report::plots::sweep_plots(&d2, &rows).map_err(|e| e.to_string())?;
            Ok(())
        })?;
        let _ = std::fs::remove_dir_all(&dir);
        match outcome {
            Ok(()) => tally("sweep_folders: reported"),
            Err(e) => {
                one_line("sweep folder", &e)?;
                tally("sweep_folders: rejected");
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// Two passes of one sweep (a committed shard folder and a mutated copy of its
    /// `configs.csv`, `shapes.csv` and `summary.json`) through `origami-bench passes`:
    /// joined and summarized, or one line.
    #[test]
    fn sweep_passes(
        config_edits in proptest::collection::vec(edit(), 0..4),
        shape_edits in proptest::collection::vec(edit(), 0..2),
        meta_edits in proptest::collection::vec(edit(), 0..2),
        allow_partial in any::<bool>(),
        case in any::<u64>(),
    ) {
        let base = "results/h100/device-check/shard0";
        let dir = scratch(&format!("passes-{case}"));
        let (p1, p2, out) = (dir.join("p1"), dir.join("p2"), dir.join("out"));
        for (name, edits) in [
            ("configs.csv", &config_edits),
            ("shapes.csv", &shape_edits),
            ("summary.json", &meta_edits),
        ] {
            let text = read(&format!("{base}/{name}"));
            for (d, t) in [(&p1, text.clone()), (&p2, mutated(&text, edits))] {
                std::fs::create_dir_all(d).unwrap();
                std::fs::write(d.join(name), t).unwrap();
            }
        }
        let outcome = within_deadline("sweep passes", move || -> Result<(), String> {
            let o = origami::gemm::passes::join_passes(&origami::gemm::passes::PassesRequest {
                dirs: vec![p1, p2],
                dest: out.clone(),
                allow_partial,
                command: "fuzz".into(),
            })
            .map_err(|e| e.to_string())?;
            origami::gemm::sweep_files::summarize_folder(&out, Some(o.meta.to_value()))
                .map_err(|e| e.to_string())?;
            Ok(())
        })?;
        let _ = std::fs::remove_dir_all(&dir);
        match outcome {
            Ok(()) => tally("sweep_passes: joined"),
            Err(e) => {
                one_line("sweep passes", &e)?;
                tally("sweep_passes: rejected");
            }
        }
    }

    /// A learned-correction file (`model::correction`: the file, its tree ensemble) then,
    /// when accepted, its factor on random launches: a positive finite number.
    #[test]
    fn correction_files(
        edits in proptest::collection::vec(edit(), 1..4),
        (m, n, k) in (dim(), dim(), dim()),
        us in prop_oneof![Just(f64::NAN), Just(0.0), Just(-1.0), 1e-6f64..1e6],
        pick_one in 0usize..64,
    ) {
        let text = mutated(small_correction(), &edits);
        let outcome = within_deadline("correction file", move || -> Result<(), String> {
            let c = origami::model::correction::Correction::from_text("fuzz.json", &text)
                .map_err(|e| e.to_string())?;
            let gpu = origami::hw::presets::preset("h100-sxm").map_err(|e| e.to_string())?.gpu;
            let p = Problem::new(m, n, k, Dtype::Fp16).map_err(|e| e.to_string())?;
            let configs = ["64x16x64,g1,w8,s8", "128x256x64,g8,w12,s4,k2", "256x128x64,g1,w12,s4,swap"];
            let cfg = origami::model::problem::parse_config(configs[pick_one % configs.len()])
                .map_err(|e| e.to_string())?;
            let f = c.factor(&p, &cfg, &gpu, us);
            if !(f.is_finite() && f > 0.0) {
                return Err(format!("factor {f} is not a positive finite number"));
            }
            let (lo, hi) = c.factor_bounds();
            if !(lo <= f && f <= hi) {
                return Err(format!("factor {f} outside its bounds {lo}..{hi}"));
            }
            Ok(())
        })?;
        match outcome {
            Ok(()) => tally("correction_files: applied"),
            Err(e) if e.starts_with("factor") => {
                return Err(TestCaseError::fail(e));
            }
            Err(e) => {
                one_line("correction file", &e)?;
                tally("correction_files: rejected");
            }
        }
    }
}

/// A small correction file: a few trees fitted on made-up rows (the committed one is too
/// large to mutate quickly).
fn small_correction() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        use origami::model::correction::features::{FEATURES, FEATURE_COUNT};
        let rows: Vec<Vec<f64>> = (0..200)
            .map(|i| {
                (0..FEATURE_COUNT)
                    .map(|j| ((i * 31 + j * 17) % 23) as f64)
                    .collect()
            })
            .collect();
        let y: Vec<f64> = rows
            .iter()
            .map(|r| (r[0] - 11.0) * 0.01 + (r[3] > 10.0) as u8 as f64 * 0.05)
            .collect();
        let names = FEATURES.iter().map(|s| s.to_string()).collect();
        let params = origami::model::correction::fit::FitParams {
            trees: 4,
            max_leaves: 4,
            min_samples_leaf: 5,
            ..Default::default()
        };
        let e = origami::model::correction::fit::fit(names, &rows, &y, &params).unwrap();
        origami::model::correction::Correction::new(
            "hopper",
            9,
            "calibrations/fitted/h200-hopper.json",
            0.05,
            Default::default(),
            e,
        )
        .file_text()
    })
}

/// Sets a constant by name past its range check (the fuzz wants out-of-range values too).
fn set_unchecked(c: &mut ModelConstants, name: &str, v: f64) {
    assert!(c.set_unvalidated(name, v), "{name} is a constant");
}

/// The first shape of a real sweep's `configs.csv` (a few hundred rows).
fn small_configs() -> String {
    read("results/h100/device-check/shard0/configs.csv")
        .lines()
        .take(120)
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn shape_text() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        4 => (1u64..=65_536).prop_map(|v| v.to_string()),
        2 => nasty(),
        1 => "[ a-zA-Z0-9#.,-]{0,6}",
    ];
    let messy = proptest::collection::vec(field, 0..6).prop_map(|f| f.join(","));
    // A good row fits the header: `{d}` becomes ",dtype" where the header has that column.
    let good = (
        1u64..=65_536,
        1u64..=65_536,
        1u64..=65_536,
        proptest::sample::select(&["", "fp16", "bf16", "fp8", "fp32"][..]),
    )
        .prop_map(|(m, n, k, d)| format!("{m},{n},{k}{{d:{d}}}"));
    let line = prop_oneof![
        40 => good,
        1 => messy,
        2 => Just("# comment".to_string()),
        2 => Just(String::new()),
        1 => proptest::sample::select(&["M,N,K", "m,n,k,DTYPE", "K,N,M", "M,N", "a,b,c"][..])
            .prop_map(str::to_string),
    ];
    let header = prop_oneof![
        8 => proptest::sample::select(&["M,N,K", "M,N,K,dtype", "m,n,k,DTYPE"][..]),
        1 => proptest::sample::select(&["M,K", "", "K,N,M,dtype,extra"][..]),
    ];
    prop_oneof![
        6 => (header, proptest::collection::vec(line, 0..10)).prop_map(|(h, lines)| {
            let with_dtype = h.to_ascii_lowercase().contains("dtype");
            let body: Vec<String> = lines
                .iter()
                .map(|l| match l.find("{d:") {
                    Some(p) => {
                        let d = &l[p + 3..l.len() - 1];
                        let tail = if with_dtype { format!(",{d}") } else { String::new() };
                        format!("{}{tail}", &l[..p])
                    }
                    None => l.clone(),
                })
                .collect();
            format!("{h}\n{}", body.join("\n"))
        }),
        1 => proptest::collection::vec(edit(), 1..4)
            .prop_map(|e| mutated(&read("data/seed_shapes.csv"), &e)),
    ]
}

fn model_csv_text() -> impl Strategy<Value = String> {
    let size = prop_oneof![
        24 => (1u64..=16_384).prop_map(|v| v.to_string()),
        2 => Just("2147483648".to_string()),
        1 => nasty(),
    ];
    let dtype = proptest::sample::select(
        &[
            "fp16", "bf16", "fp8", "nvfp4", "mxfp8", "fp32", "int8", "fp16", "x", "",
        ][..],
    );
    let tile = prop_oneof![
        12 => (1u32..=256, 1u32..=256).prop_map(|(a, b)| format!("{a}x{b}")),
        1 => nasty(),
    ];
    let cluster = prop_oneof![
        12 => (1u32..=4, 1u32..=4).prop_map(|(a, b)| format!("{a}x{b}")),
        2 => Just(String::new()),
        1 => nasty(),
    ];
    let measured = prop_oneof![
        8 => (0.1..1e5f64).prop_map(|v| v.to_string()),
        4 => Just(String::new()),
        1 => nasty(),
    ];
    let row = (
        size.clone(),
        size.clone(),
        size,
        dtype,
        tile,
        cluster,
        measured,
    )
        .prop_map(|(m, n, k, d, t, c, meas)| format!("{m},{n},{k},{d},{t},{c},{meas}"));
    prop_oneof![
        5 => proptest::collection::vec(row, 1..6)
            .prop_map(|r| format!("M,N,K,dtype,tile,cluster,measured_us\n{}", r.join("\n"))),
        1 => ".{0,80}",
    ]
}

// ---------------------------------------------------------------- the tools themselves

/// Arguments a user (or an attacker) might type (no NUL: no OS passes one).
fn arg() -> impl Strategy<Value = String> {
    arg_with_nul().prop_map(|a| a.replace('\0', "\u{1}"))
}

fn arg_with_nul() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (1u64..=16_384).prop_map(|v| v.to_string()),
        2 => nasty(),
        2 => proptest::sample::select(&[
            "--family", "triton", "origami", "seed", "--gpu", "h100-sxm", "a100", "nope",
            "--format", "json", "csv", "text", "--top", "--all", "--explain", "--dtype", "fp16",
            "bf16", "fp8", "--model", "--no-fitted", "--tile", "128x64", "--cluster", "2x1",
            "--l2", "raster", "hit-rate", "--swizzle", "--groups", "--describe", "--help",
            "--version", "-x", "--", "", "hopper", "auto", "--objective", "energy", "edp",
            "sustained", "--power-limit", "--pareto", "--energy-costs",
        ][..])
        .prop_map(str::to_string),
    ]
}

#[derive(Clone)]
enum Invocation {
    Select {
        args: Vec<String>,
        hw: Option<String>,
    },
    Check {
        doc: String,
    },
    Predict {
        sub: &'static str,
        args: Vec<String>,
    },
}

impl std::fmt::Debug for Invocation {
    /// Short: a failing case names its arguments and the head of its file.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head = |t: &str| t.chars().take(200).collect::<String>();
        match self {
            Invocation::Select { args, hw } => write!(
                f,
                "origami-select {args:?} with file {:?}",
                hw.as_deref().map(head)
            ),
            Invocation::Check { doc } => write!(f, "--check of {:?}", head(doc)),
            Invocation::Predict { sub, args } => write!(f, "origami-predict {sub} {args:?}"),
        }
    }
}

fn invocation() -> impl Strategy<Value = Invocation> {
    prop_oneof![
        3 => (proptest::collection::vec(arg(), 0..7), proptest::option::of(hw_text()))
            .prop_map(|(args, hw)| Invocation::Select { args, hw }),
        2 => hw_text().prop_map(|doc| Invocation::Check { doc }),
        3 => (
            proptest::sample::select(&["ws", "roofline", "model", "nope"][..]),
            proptest::collection::vec(arg(), 0..9),
        )
            .prop_map(|(sub, args)| Invocation::Predict { sub, args }),
    ]
}

proptest! {
    #![proptest_config(config())]

    /// The four tools as processes: any exit is 0 or a documented code (never a panic's
    /// 101 or a signal), in time, and a failure says why on one `error:` line.
    #[test]
    fn tools_as_processes(inv in invocation(), case in any::<u64>()) {
        let dir = scratch("cli");
        let file = dir.join(format!("{case}.json"));
        let mut cmd = match &inv {
            Invocation::Select { args, hw } => {
                let mut c = assert_cmd::Command::cargo_bin("origami-select").unwrap();
                c.args(args);
                match hw {
                    Some(text) => {
                        std::fs::write(&file, text).unwrap();
                        c.env("TRITONBLAS_HW_PARAMS", &file);
                    }
                    None => {
                        c.env_remove("TRITONBLAS_HW_PARAMS");
                    }
                }
                c
            }
            Invocation::Check { doc } => {
                std::fs::write(&file, doc).unwrap();
                let mut c = assert_cmd::Command::cargo_bin("origami-calibrate").unwrap();
                c.arg("--check").arg(&file);
                c
            }
            Invocation::Predict { sub, args } => {
                let mut c = assert_cmd::Command::cargo_bin("origami-predict").unwrap();
                c.arg(sub).args(args);
                c
            }
        };
        let tool = match &inv {
            Invocation::Select { .. } => "origami-select",
            Invocation::Check { .. } => "origami-calibrate --check",
            Invocation::Predict { .. } => "origami-predict",
        };
        let out = cmd
            .env("ORIGAMI_NO_GPU", "1")
            .current_dir(&dir)
            .timeout(DEADLINE)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&file);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        let inv: String = format!("{inv:?}").chars().take(300).collect();
        prop_assert!(code.is_some(), "{tool} {inv:?}: killed (timeout or signal): {stderr}");
        let code = code.unwrap_or(-1);
        prop_assert!(!stderr.contains("panicked"), "{tool} {inv:?}: {stderr}");
        // origami-calibrate --check adds 3: measurements too unstable.
        let documented: &[i32] = if tool.starts_with("origami-calibrate") { &[0, 1, 2, 3] } else { &[0, 1, 2] };
        prop_assert!(documented.contains(&code), "{tool} {inv:?}: exit {code}: {stderr}");
        if code != 0 {
            // Notices may come first; the reason is one line, with nothing after it
            // (no usage block, no hint lines).
            let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            let reasons = lines
                .iter()
                .filter(|l| {
                    let l = l.to_ascii_lowercase();
                    l.contains("error") || l.contains("failed")
                })
                .count();
            prop_assert_eq!(reasons, 1, "{} {:?}: {}", tool, inv, stderr);
            prop_assert!(
                lines.iter().all(|l| !l.starts_with(char::is_whitespace)
                    && !l.starts_with("Usage")
                    && !l.starts_with("For more information")),
                "{} {:?}: {}", tool, inv, stderr
            );
        }
        tally(&format!("tools_as_processes: {tool} exit {code}"));
    }
}
