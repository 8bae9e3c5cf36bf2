//! Cost of one full selection (whole config space, both phases) and of a 10000-shape batch
//! through the library, for the README's speed figures (this project's goal: 5 us per
//! selection on one core), with the latency model and with the throughput model at the
//! constants fitted for Hopper (`hw::fitted`); and Triton's persistent TMA kernel
//! (`triton-tma`) and the choice between the two Triton kernels (`triton-auto`: both
//! families select, the faster pick wins), each with its family's fitted constants where
//! there are some. `pick/...`: the pick alone as the library makes it (`Scope::Pick`: tiles
//! whose lower bound cannot reach the tie band are not scored; the same pick). The hopper
//! and triton-tma families are also timed with their learned corrections
//! (`hopper-corrected`, `triton-tma-corrected`).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use origami::dtype::Dtype;
use origami::hw::presets::preset;
use origami::model::family::{family, mma_sync_atom};
use origami::model::latency::{predict, ModelInputs};
use origami::model::{FamilySet, ModelConstants, Problem, Scope, Selector, Variant};

fn bench_selection(c: &mut Criterion) {
    let doc = preset("h100-sxm").unwrap();
    for (fam, variant) in [("triton", Variant::Origami), ("seed", Variant::Seed)] {
        let s = Selector::new(
            family(fam).unwrap(),
            &doc.gpu,
            &doc.params,
            &ModelConstants::default(),
            variant,
            Dtype::Fp16,
        )
        .unwrap();
        for (m, n, k) in [
            (4096u64, 4096u64, 4096u64),
            (128, 14336, 4096),
            (8192, 53248, 16384),
        ] {
            let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
            c.bench_function(
                &format!("select/{fam}-{}/{m}x{n}x{k}", variant.name()),
                |b| b.iter(|| black_box(s.select(black_box(&p), false).unwrap())),
            );
        }
    }
    // Selectors as origami-select sets them up (each family's fitted tier, if any).
    let fitted_selector = |fam: &str| {
        let kc = match origami::hw::fitted::fitted_constants(fam, &doc.gpu) {
            Some((_, fitted)) => {
                ModelConstants::with_overrides(fitted.iter().map(|(k, v)| (k.as_str(), *v)))
                    .unwrap()
            }
            None => ModelConstants::default(),
        };
        Selector::new(
            family(fam).unwrap(),
            &doc.gpu,
            &doc.params,
            &kc,
            Variant::Origami,
            Dtype::Fp16,
        )
        .unwrap()
    };
    for fam in ["triton", "origami", "hopper"] {
        let s = fitted_selector(fam);
        for (m, n, k) in [(4096u64, 4096u64, 4096u64), (128, 14336, 4096)] {
            let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
            c.bench_function(&format!("select/{fam}-throughput/{m}x{n}x{k}"), |b| {
                b.iter(|| black_box(s.select(black_box(&p), false).unwrap()))
            });
        }
    }
    let tma = fitted_selector("triton-tma");
    let auto = FamilySet::named("triton-auto").unwrap();
    let members = [fitted_selector("triton"), fitted_selector("triton-tma")];
    for (m, n, k) in [
        (4096u64, 4096u64, 4096u64),
        (128, 14336, 4096),
        (4096, 4096, 4095),
    ] {
        let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
        if tma.family.problem_violation(&p).is_none() {
            c.bench_function(&format!("select/triton-tma/{m}x{n}x{k}"), |b| {
                b.iter(|| black_box(tma.select(black_box(&p), false).unwrap()))
            });
        }
        c.bench_function(&format!("select/triton-auto/{m}x{n}x{k}"), |b| {
            b.iter(|| {
                black_box(
                    auto.choose(black_box(&p), |i| Ok(&members[i]), false)
                        .unwrap(),
                )
            })
        });
    }
    // What a pick costs through the library (`Engine::select` uncached, `select_batch`):
    // the same pick, tiles whose lower bound cannot reach the tie band skipped
    // (`Scope::Pick`).
    for (fam, label) in [
        ("triton", "triton-throughput"),
        ("origami", "origami-throughput"),
        ("hopper", "hopper-throughput"),
        ("triton-tma", "triton-tma"),
    ] {
        let s = fitted_selector(fam);
        for (m, n, k) in [(4096u64, 4096u64, 4096u64), (128, 14336, 4096)] {
            let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
            c.bench_function(&format!("pick/{label}/{m}x{n}x{k}"), |b| {
                b.iter(|| black_box(s.select_scoped(black_box(&p), Scope::Pick).unwrap()))
            });
        }
    }
    // The hopper and triton-tma families with their learned corrections
    // (`model::correction`), as origami-select sets them up on an H100: the full ranking
    // corrects every launch, the pick alone only those it scores.
    for fam in ["hopper", "triton-tma"] {
        let corrected =
            origami::setup::setup(&origami::setup::SetupRequest::on_preset("h100-sxm", fam))
                .unwrap();
        assert!(corrected.correction.is_some());
        let hc = corrected.selector(Dtype::Fp16).unwrap();
        for (m, n, k) in [(4096u64, 4096u64, 4096u64), (128, 14336, 4096)] {
            let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
            c.bench_function(&format!("select/{fam}-corrected/{m}x{n}x{k}"), |b| {
                b.iter(|| black_box(hc.select(black_box(&p), false).unwrap()))
            });
            c.bench_function(&format!("pick/{fam}-corrected/{m}x{n}x{k}"), |b| {
                b.iter(|| black_box(hc.select_scoped(black_box(&p), Scope::Pick).unwrap()))
            });
        }
    }
    for (m, n, k) in [(4096u64, 4096u64, 4096u64), (128, 14336, 4096)] {
        let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
        c.bench_function(&format!("pick/triton-auto/{m}x{n}x{k}"), |b| {
            b.iter(|| {
                black_box(
                    auto.choose_scoped(black_box(&p), |i| Ok(&members[i]), Scope::Pick)
                        .unwrap(),
                )
            })
        });
    }
    let k = ModelConstants::default();
    let hw = ModelInputs {
        gpu: &doc.gpu,
        params: &doc.params,
        constants: &k,
        variant: Variant::Origami,
    };
    let p = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
    let atom = mma_sync_atom(Dtype::Fp16);
    c.bench_function("predict/one_tile_with_breakdown", |b| {
        b.iter(|| black_box(predict(black_box(&p), (128, 128, 64), 12, atom, &hw)))
    });
    c.bench_function("selector_setup/triton", |b| {
        b.iter(|| {
            black_box(
                Selector::new(
                    family("triton").unwrap(),
                    &doc.gpu,
                    &doc.params,
                    &ModelConstants::default(),
                    Variant::Origami,
                    Dtype::Fp16,
                )
                .unwrap(),
            )
        })
    });
}

criterion_group!(benches, bench_selection);
criterion_main!(benches);
