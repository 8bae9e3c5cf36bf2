//! The C interface called as C calls it (the extern functions, raw pointers): picks equal
//! the engine's for the seed shapes in every family and set, bad input gives BAD_INPUT
//! with origami-select's message, a batch equals the single picks, NULL pointers and
//! strings that are not UTF-8 are refused, and one selector serves many threads.

mod common;

use std::ffi::CStr;
use std::ptr;

use common::{cstr, last_error, shapes, Sel};
use origami_c::*;
use origami_core::engine::{Engine, EngineError, EngineRequest};
use origami_core::exit::ToExit;
use origami_core::model::family_set::set_names;

const GPU: &str = "h100-sxm";

fn engine(family: &str) -> Engine {
    Engine::new(&EngineRequest {
        gpu: Some(GPU.into()),
        family: family.into(),
        ..Default::default()
    })
    .unwrap()
}

/// The engine's answer as the C interface should give it.
fn expected(
    r: &Result<origami_core::engine::Pick, EngineError>,
) -> Result<OrigamiPick, (OrigamiStatus, String)> {
    match r {
        Ok(p) => {
            let c = &p.config;
            let mut want = OrigamiPick::ZERO;
            want.m = p.m;
            want.n = p.n;
            want.k = p.k;
            want.block_m = c.block_m;
            want.block_n = c.block_n;
            want.block_k = c.block_k;
            want.group_m = c.group_m;
            want.num_warps = c.num_warps;
            want.num_stages = c.num_stages;
            want.flatten = c.switches.flatten;
            want.warp_specialize = c.switches.warp_specialize;
            want.epilogue_subtile = c.switches.epilogue_subtile;
            want.split_k = c.split_k as u8;
            want.stream_k = c.stream_k;
            want.swap = c.switches.swap;
            want.num_programs = p.num_programs.map_or(-1, |n| n as i32);
            want.grid = p.grid;
            want.smem_bytes = p.smem_bytes;
            want.registers = p.registers.map_or(-1, |r| r as i32);
            want.predicted_us = p.predicted_us;
            want.predicted_cycles = p.predicted_cycles;
            let put = |dst: &mut [std::os::raw::c_char], s: &str| {
                for (d, b) in dst.iter_mut().zip(s.bytes()) {
                    *d = b as std::os::raw::c_char;
                }
            };
            put(&mut want.dtype, &p.dtype.to_string());
            put(&mut want.family, p.family);
            put(&mut want.kernel, p.kernel.unwrap_or(""));
            put(&mut want.config, &p.config_text);
            Ok(want)
        }
        Err(e) => Err((e.exit_code().into(), e.to_string())),
    }
}

#[test]
fn picks_equal_the_engine_for_the_seed_shapes_in_every_family() {
    let seed = shapes("data/seed_shapes.csv");
    assert!(seed.len() >= 20);
    for family in set_names() {
        let sel = Sel::new(Some(GPU), family).unwrap();
        let name = unsafe { CStr::from_ptr(origami_selector_family(sel.0)) };
        assert_eq!(name.to_str().unwrap(), family);
        let e = engine(family);
        for dtype in ["fp16", "bf16"] {
            for &(m, n, k) in &seed {
                let got = sel.select(m, n, k, dtype);
                let want = expected(&e.select(m, n, k, dtype));
                assert_eq!(got, want, "{family} {m}x{n}x{k} {dtype}");
                if let Ok(p) = got {
                    assert!(!field_text(&p.family).is_empty());
                    assert_eq!(
                        field_text(&p.config),
                        e.select(m, n, k, dtype).unwrap().config_text
                    );
                }
            }
        }
    }
}

#[test]
fn top_is_the_engine_ranking_and_its_head_is_the_pick() {
    let sel = Sel::new(Some(GPU), "triton-tma").unwrap();
    let e = engine("triton-tma");
    let top = sel.top(4096, 4096, 4096, "fp16", 3).unwrap();
    let want: Vec<_> = e.rank(4096, 4096, 4096, "fp16", 3).unwrap();
    assert_eq!(top.len(), 3);
    for (t, w) in top.iter().zip(&want) {
        assert_eq!(Ok(*t), expected(&Ok(w.clone())));
    }
    assert_eq!(top[0], sel.select(4096, 4096, 4096, "fp16").unwrap());
    // More room than configs: only the feasible ones are written.
    // In the engine's order (the model's, and with the family's learned correction on an
    // H100 the launches within its guard first: not sorted by predicted time alone).
    let all = sel.top(64, 64, 64, "fp16", 100_000).unwrap();
    assert!(!all.is_empty() && all.len() < 100_000);
    let want_all = e.rank(64, 64, 64, "fp16", 100_000).unwrap();
    assert_eq!(all.len(), want_all.len());
    for (t, w) in all.iter().zip(&want_all) {
        assert_eq!(Ok(*t), expected(&Ok(w.clone())));
    }
    // --top 0 is bad input, with the CLI's message.
    let (status, msg) = sel.top(4096, 4096, 4096, "fp16", 0).unwrap_err();
    assert_eq!(status, OrigamiStatus::BadInput);
    assert_eq!(
        msg,
        e.rank(4096, 4096, 4096, "fp16", 0).unwrap_err().to_string()
    );
}

#[test]
fn bad_inputs_are_bad_input_with_the_cli_message() {
    let (status, msg) = Sel::new(Some(GPU), "nope").err().unwrap();
    assert_eq!(status, OrigamiStatus::BadInput);
    assert!(msg.starts_with("--family: unknown family 'nope'"), "{msg}");
    let (status, msg) = Sel::new(Some("x999"), "triton").err().unwrap();
    assert_eq!(status, OrigamiStatus::BadInput);
    assert!(msg.starts_with("--gpu: "), "{msg}");

    let sel = Sel::new(Some(GPU), "triton-tma").unwrap();
    let e = engine("triton-tma");
    for (m, n, k, dtype) in [
        (4096, 4096, 4100, "fp16"),
        (0, 4096, 4096, "fp16"),
        (4096, 4096, 4096, "int3"),
        (4096, 4096, 4096, ""),
    ] {
        let want = e.select(m, n, k, dtype).unwrap_err();
        assert_eq!(
            sel.select(m, n, k, dtype).unwrap_err(),
            (OrigamiStatus::BadInput, want.to_string()),
            "{m}x{n}x{k} {dtype}"
        );
        assert_eq!(want.exit_code().code(), 2);
    }
    // The message stays until the next call on this thread, which empties it.
    assert!(last_error().starts_with("--dtype: "));
    sel.select(4096, 4096, 4096, "fp16").unwrap();
    assert_eq!(last_error(), "");

    let (status, msg) = sel.score(4096, 4096, 4096, "fp16", "7x7x7").unwrap_err();
    assert_eq!(status, OrigamiStatus::BadInput);
    assert!(msg.starts_with("config '7x7x7': "), "{msg}");
    let pick = sel.select(4096, 4096, 4096, "fp16").unwrap();
    let us = sel
        .score(4096, 4096, 4096, "fp16", &field_text(&pick.config))
        .unwrap();
    assert_eq!(
        us,
        e.score(4096, 4096, 4096, "fp16", &field_text(&pick.config))
            .unwrap()
    );
}

#[test]
fn a_batch_equals_the_single_picks_and_keeps_bad_rows_apart() {
    for family in ["triton", "triton-auto"] {
        let sel = Sel::new(Some(GPU), family).unwrap();
        let mut list = shapes("data/seed_shapes.csv");
        list.insert(3, (0, 1, 1));
        list.push((4096, 4096, 4100));
        let (r, picks, statuses) = sel.batch(&list, "bf16");
        let (status, msg) = r.unwrap_err();
        assert_eq!(status, OrigamiStatus::BadInput);
        let first_bad = sel.select(0, 1, 1, "bf16").unwrap_err().1;
        assert_eq!(msg, format!("shape 3 (0x1x1): {first_bad}"));
        for (i, &(m, n, k)) in list.iter().enumerate() {
            match sel.select(m, n, k, "bf16") {
                Ok(p) => {
                    assert_eq!(picks[i], p, "{family} row {i}");
                    assert_eq!(statuses[i], 0);
                }
                Err((s, _)) => {
                    assert_eq!(picks[i], OrigamiPick::ZERO);
                    assert_eq!(statuses[i], s.code());
                }
            }
        }
        let good: Vec<_> = list
            .iter()
            .copied()
            .filter(|s| s.0 > 0 && s.2 != 4100)
            .collect();
        let (r, _, statuses) = sel.batch(&good, "bf16");
        if family == "triton" {
            r.unwrap();
            assert!(statuses.iter().all(|s| *s == 0));
        }
        let (r, picks, _) = sel.batch(&[], "bf16");
        assert!(r.is_ok() && picks.is_empty());
    }
}

#[test]
fn null_pointers_and_bad_utf8_are_refused() {
    let sel = Sel::new(Some(GPU), "triton").unwrap();
    let fp16 = cstr("fp16");
    let mut pick = OrigamiPick::ZERO;
    let mut n = 0usize;
    let mut us = 0.0;
    let null = OrigamiStatus::NullArgument;
    unsafe {
        assert_eq!(
            origami_select(ptr::null(), 1, 1, 1, fp16.as_ptr(), &mut pick),
            null
        );
        assert_eq!(last_error(), "selector: NULL pointer");
        assert_eq!(origami_select(sel.0, 1, 1, 1, ptr::null(), &mut pick), null);
        assert_eq!(last_error(), "dtype: NULL pointer");
        assert_eq!(
            origami_select(sel.0, 1, 1, 1, fp16.as_ptr(), ptr::null_mut()),
            null
        );
        assert_eq!(last_error(), "out: NULL pointer");
        assert_eq!(
            origami_select_top(sel.0, 64, 64, 64, fp16.as_ptr(), ptr::null_mut(), 3, &mut n),
            null
        );
        assert_eq!(
            origami_select_top(
                sel.0,
                64,
                64,
                64,
                fp16.as_ptr(),
                &mut pick,
                1,
                ptr::null_mut()
            ),
            null
        );
        assert_eq!(
            origami_select_batch(
                sel.0,
                ptr::null(),
                2,
                fp16.as_ptr(),
                &mut pick,
                ptr::null_mut()
            ),
            null
        );
        assert_eq!(last_error(), "shapes: NULL pointer");
        let shape = OrigamiShape {
            m: 64,
            n: 64,
            k: 64,
        };
        assert_eq!(
            origami_select_batch(
                sel.0,
                &shape,
                1,
                fp16.as_ptr(),
                ptr::null_mut(),
                ptr::null_mut()
            ),
            null
        );
        // statuses may be NULL.
        assert_eq!(
            origami_select_batch(sel.0, &shape, 1, fp16.as_ptr(), &mut pick, ptr::null_mut()),
            OrigamiStatus::Ok
        );
        assert_eq!(pick.m, 64);
        assert_eq!(
            origami_score(sel.0, 64, 64, 64, fp16.as_ptr(), ptr::null(), &mut us),
            null
        );
        assert_eq!(last_error(), "config: NULL pointer");
        assert_eq!(
            origami_explain(
                sel.0,
                64,
                64,
                64,
                fp16.as_ptr(),
                ptr::null_mut(),
                0,
                ptr::null_mut()
            ),
            null
        );
        let mut out = ptr::null_mut();
        assert_eq!(
            origami_selector_new(ptr::null(), ptr::null(), ptr::null(), &mut out),
            null
        );
        assert_eq!(last_error(), "family: NULL pointer");
        assert!(out.is_null());
        let triton = cstr("triton");
        assert_eq!(
            origami_selector_new(ptr::null(), ptr::null(), triton.as_ptr(), ptr::null_mut()),
            null
        );
        assert_eq!(origami_selector_new_with(ptr::null(), &mut out), null);
        assert_eq!(origami_options_init(ptr::null_mut()), null);
        origami_selector_free(ptr::null_mut());
        assert!(origami_selector_family(ptr::null()).is_null());
        assert!(origami_selector_notice(ptr::null()).is_null());

        // Bytes that are not UTF-8: bad input, no crash.
        let bad = b"tri\xffton\0";
        assert_eq!(
            origami_selector_new(ptr::null(), ptr::null(), bad.as_ptr().cast(), &mut out),
            OrigamiStatus::BadInput
        );
        assert_eq!(last_error(), "family: not UTF-8 (invalid byte at offset 3)");
        assert_eq!(
            origami_select(sel.0, 64, 64, 64, bad.as_ptr().cast(), &mut pick),
            OrigamiStatus::BadInput
        );
        assert_eq!(last_error(), "dtype: not UTF-8 (invalid byte at offset 3)");
    }
}

#[test]
fn options_carry_model_fitted_and_cache() {
    let (gpu, family, model) = (cstr(GPU), cstr("origami"), cstr("seed"));
    let mut o = OrigamiOptions::DEFAULT;
    o.struct_size = 0;
    unsafe {
        assert_eq!(origami_options_init(&mut o), OrigamiStatus::Ok);
    }
    assert_eq!(o.struct_size, std::mem::size_of::<OrigamiOptions>());
    o.gpu = gpu.as_ptr();
    o.family = family.as_ptr();
    o.model = model.as_ptr();
    o.no_fitted = true;
    o.cache_entries = 0;
    let mut out = ptr::null_mut();
    unsafe {
        assert_eq!(origami_selector_new_with(&o, &mut out), OrigamiStatus::Ok);
    }
    let sel = common::Sel(out);
    let e = Engine::new(&EngineRequest {
        gpu: Some(GPU.into()),
        family: "origami".into(),
        model: "seed".into(),
        no_fitted: true,
        cache_entries: Some(0),
        ..Default::default()
    })
    .unwrap();
    for &(m, n, k) in &shapes("data/seed_shapes.csv") {
        assert_eq!(
            sel.select(m, n, k, "fp16"),
            expected(&e.select(m, n, k, "fp16"))
        );
    }
    let bad_model = cstr("nope");
    o.model = bad_model.as_ptr();
    let status = unsafe { origami_selector_new_with(&o, &mut out) };
    assert_eq!(status, OrigamiStatus::BadInput);
    assert!(last_error().starts_with("--model"), "{}", last_error());
    assert!(out.is_null());
}

#[test]
fn options_can_leave_the_learned_correction_out_and_older_callers_keep_it() {
    // 128x4096x14336 on an H100: the hopper model picks 128x128x64,k4, its learned
    // correction 64x128x64,k2 (results/h100/correction/)
    let (gpu, family) = (cstr(GPU), cstr("hopper"));
    let make = |no_correction: bool, struct_size: usize| {
        let mut o = OrigamiOptions::DEFAULT;
        o.struct_size = struct_size;
        o.gpu = gpu.as_ptr();
        o.family = family.as_ptr();
        o.no_correction = no_correction;
        let mut out = ptr::null_mut();
        unsafe {
            assert_eq!(origami_selector_new_with(&o, &mut out), OrigamiStatus::Ok);
        }
        let pick = common::Sel(out).select(128, 4096, 14336, "fp16").unwrap();
        (pick.block_m, pick.split_k)
    };
    let full = std::mem::size_of::<OrigamiOptions>();
    assert_eq!(make(false, full), (64, 2));
    assert_eq!(make(true, full), (128, 4));
    // a caller compiled before the field: its struct ends before it, the default holds
    let before = std::mem::offset_of!(OrigamiOptions, no_correction);
    assert_eq!(make(true, before), (64, 2));
}

#[test]
fn a_selector_without_preset_says_which_hardware_it_took() {
    let sel = Sel::new(None, "").unwrap();
    let family = unsafe { CStr::from_ptr(origami_selector_family(sel.0)) };
    assert_eq!(family.to_str().unwrap(), "triton");
    let notice = unsafe { origami_selector_notice(sel.0) };
    assert!(!notice.is_null());
    let notice = unsafe { CStr::from_ptr(notice) }.to_str().unwrap();
    assert!(
        notice.starts_with("no GPU found; using the embedded preset"),
        "{notice}"
    );
    let with_preset = Sel::new(Some(GPU), "triton").unwrap();
    assert!(unsafe { origami_selector_notice(with_preset.0) }.is_null());
}

#[test]
fn explain_is_the_engine_document_and_errors_copy_out() {
    let sel = Sel::new(Some(GPU), "triton-auto").unwrap();
    let e = engine("triton-auto");
    assert_eq!(
        sel.explain(1, 6144, 4096, "fp16").unwrap(),
        e.explain(1, 6144, 4096, "fp16").unwrap()
    );
    let (status, _) = sel.select(1, 1, 1, "int3").unwrap_err();
    assert_eq!(status, OrigamiStatus::BadInput);
    let msg = last_error();
    let mut needed = 0usize;
    let mut small = [0 as std::os::raw::c_char; 4];
    unsafe {
        assert_eq!(
            origami_last_error_copy(small.as_mut_ptr(), small.len(), &mut needed),
            OrigamiStatus::BufferTooSmall
        );
        assert_eq!(needed, msg.len() + 1);
        assert_eq!(small, [0; 4], "nothing written when it does not fit");
        let mut buf = vec![0 as std::os::raw::c_char; needed];
        assert_eq!(
            origami_last_error_copy(buf.as_mut_ptr(), buf.len(), &mut needed),
            OrigamiStatus::Ok
        );
        assert_eq!(field_text(&buf), msg);
    }
    // Copying leaves the message in place.
    assert_eq!(last_error(), msg);
}

#[test]
fn one_selector_serves_many_threads_with_their_own_last_errors() {
    let sel = std::sync::Arc::new(Sel::new(Some(GPU), "triton-auto").unwrap());
    let list = shapes("data/seed_shapes.csv");
    let want: Vec<_> = list
        .iter()
        .map(|&(m, n, k)| sel.select(m, n, k, "fp16"))
        .collect();
    sel.select(1, 1, 1, "int3").unwrap_err();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let sel = sel.clone();
            let list = list.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                for round in 0..3 {
                    for (i, &(m, n, k)) in list.iter().enumerate() {
                        if (i + t + round) % 2 == 0 {
                            // A failure on this thread only.
                            let (s, msg) = sel.select(m, n, k, "int3").unwrap_err();
                            assert_eq!(s, OrigamiStatus::BadInput);
                            assert_eq!(last_error(), msg);
                        }
                        got.push((i, sel.select(m, n, k, "fp16")));
                        assert_eq!(last_error(), "");
                    }
                    let (r, picks, _) = sel.batch(&list, "fp16");
                    assert!(r.is_ok());
                    for (i, p) in picks.into_iter().enumerate() {
                        got.push((i, Ok(p)));
                    }
                }
                got
            })
        })
        .collect();
    for t in threads {
        for (i, got) in t.join().unwrap() {
            assert_eq!(got, want[i], "row {i}");
        }
    }
    // The main thread's error is its own, untouched by the others.
    assert!(last_error().starts_with("--dtype: "), "{}", last_error());
}

#[test]
fn version_and_status_names() {
    let v = unsafe { CStr::from_ptr(origami_version()) }
        .to_str()
        .unwrap();
    assert_eq!(v, env!("CARGO_PKG_VERSION"));
    assert_eq!(origami_abi_version(), ORIGAMI_ABI_VERSION);
    let name = |c: i32| {
        unsafe { CStr::from_ptr(origami_status_name(c)) }
            .to_str()
            .unwrap()
    };
    assert_eq!(name(0), "OK");
    assert_eq!(name(2), "BAD_INPUT");
    assert_eq!(name(16), "NULL_ARGUMENT");
    assert_eq!(name(18), "INTERNAL");
    assert_eq!(name(5), "UNKNOWN");
    assert_eq!(name(-1), "UNKNOWN");
}

#[test]
fn a_hardware_file_is_read_as_the_cli_reads_tritonblas_hw_params() {
    let root = common::repo_root();
    let file = root.join("calibrations/h200.json");
    let path = cstr(file.to_str().unwrap());
    let family = cstr("triton");
    let mut out = ptr::null_mut();
    let status =
        unsafe { origami_selector_new(path.as_ptr(), ptr::null(), family.as_ptr(), &mut out) };
    assert_eq!(status, OrigamiStatus::Ok, "{}", last_error());
    let sel = Sel(out);
    let e = Engine::new(&EngineRequest {
        hw_file: Some(file.clone()),
        family: "triton".into(),
        ..Default::default()
    })
    .unwrap();
    let notice = unsafe { CStr::from_ptr(origami_selector_notice(sel.0)) };
    assert_eq!(notice.to_str().unwrap(), e.notice().unwrap());
    for &(m, n, k) in &shapes("data/seed_shapes.csv") {
        assert_eq!(
            sel.select(m, n, k, "fp16"),
            expected(&e.select(m, n, k, "fp16"))
        );
    }
    // A file that is not there fails as the engine does, with its message.
    let missing = root.join("calibrations/no-such-file.json");
    let cmissing = cstr(missing.to_str().unwrap());
    let status =
        unsafe { origami_selector_new(cmissing.as_ptr(), ptr::null(), family.as_ptr(), &mut out) };
    let want = Engine::new(&EngineRequest {
        hw_file: Some(missing),
        family: "triton".into(),
        ..Default::default()
    })
    .err()
    .unwrap();
    assert_eq!(status, OrigamiStatus::from(want.exit_code()));
    assert_eq!(status, OrigamiStatus::BadInput, "as origami-select exits 2");
    assert_eq!(last_error(), want.to_string());
    assert!(out.is_null());
}

#[test]
fn extreme_inputs_fail_cleanly_on_one_line() {
    let big = u64::MAX;
    for family in set_names() {
        let sel = Sel::new(Some(GPU), family).unwrap();
        for (m, n, k) in [
            (big, big, big),
            (big, 1, 1),
            (1, big, 1),
            (1, 1, big),
            (1 << 40, 1 << 40, 1 << 40),
            (0, 0, 0),
            (1, 1, 1),
            (7, 13, 4099),
        ] {
            for dtype in ["fp16", "fp8", "fp32", "nvfp4", "f\np16", " BF16 "] {
                let results = [
                    sel.select(m, n, k, dtype).map(|_| ()),
                    sel.top(m, n, k, dtype, 4).map(|_| ()),
                    sel.score(m, n, k, dtype, "64x64x64,g8,w4,s3").map(|_| ()),
                    sel.batch(&[(m, n, k), (64, 64, 64)], dtype).0,
                ];
                for r in results {
                    if let Err((status, msg)) = r {
                        assert_ne!(
                            status,
                            OrigamiStatus::Internal,
                            "{family} {m}x{n}x{k}: {msg}"
                        );
                        assert!(
                            !msg.is_empty() && !msg.contains(char::is_control),
                            "{msg:?}"
                        );
                    }
                }
            }
        }
    }
    let (status, msg) = Sel::new(Some("h100\nsxm"), "tri\nton").err().unwrap();
    assert_eq!(status, OrigamiStatus::BadInput);
    assert!(!msg.contains('\n') && msg.contains("\\n"), "{msg}");
}
