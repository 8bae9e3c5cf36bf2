//! Property tests of the model (this project's invariants): predictions finite and
//! positive, the pick always feasible, more K never predicts less time for a fixed config,
//! same input same answer.
//!
//! "More K" is tested as more whole K iterations: K -> K + j x BLOCK_K with K a multiple
//! of BLOCK_K. The published formulas are not monotone otherwise, and the tests below pin
//! why: num_iter = max(ceil(K/BK) - 1, 1) clamps K <= 2 BK to one iteration, so the
//! utilization penalty of a small K dominates (K = 1 -> 17 with BK 16 predicts less); and
//! the K-padding penalty (K mod BK)/K x 50000 shrinks as K grows with the same remainder
//! (K = 82 -> 114 with BK 32 on a 21 x 9 output predicts less: the penalty falls by more
//! than one cheap iteration costs), and drops to 0 at a multiple of BK:
//! the K-padding penalty (K mod BK)/K x 50000 drops to 0 when K reaches a multiple of BK
//! (K = 127 -> 128 with BK 64), and the utilization penalty likewise; the test
//! `k_padding_makes_partial_iterations_costlier` pins that.

use origami::dtype::Dtype;
use origami::hw::presets::preset;
use origami::model::family::{family, mma_sync_atom};
use origami::model::latency::{predict, ModelInputs, Variant};
use origami::model::{ModelConstants, Problem, Selector};
use proptest::prelude::*;

const GPUS: [&str; 5] = ["rtx4090", "h100-sxm", "h200", "a100", "b200"];
const DTYPES: [Dtype; 4] = [Dtype::Fp16, Dtype::Bf16, Dtype::Fp8E4m3, Dtype::Fp32];

fn dim() -> impl Strategy<Value = u64> {
    prop_oneof![1u64..=256, 1u64..=20_000, Just(1u64 << 31)]
}

fn variant() -> impl Strategy<Value = Variant> {
    prop_oneof![Just(Variant::Seed), Just(Variant::Origami)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn pick_is_feasible_finite_positive_and_deterministic(
        m in dim(), n in dim(), k in dim(), g in 0usize..5, d in 0usize..4, fam in prop_oneof![Just("triton"), Just("seed"), Just("origami")], v in variant()
    ) {
        let doc = preset(GPUS[g]).unwrap();
        let f = family(fam).unwrap();
        // The origami kernel takes 16-bit inputs only.
        prop_assume!(fam != "origami" || matches!(DTYPES[d], Dtype::Fp16 | Dtype::Bf16));
        let s = Selector::new(f, &doc.gpu, &doc.params, &ModelConstants::default(), v, DTYPES[d]).unwrap();
        let p = Problem::new(m, n, k, DTYPES[d]).unwrap();
        let a = s.select(&p, false).unwrap();
        let b = s.select(&p, false).unwrap();
        let pick = a.pick.config;
        prop_assert_eq!(pick, b.pick.config);
        prop_assert_eq!(a.pick.latency_cycles.to_bits(), b.pick.latency_cycles.to_bits());
        // feasible in the compiled kernel that runs the problem (Triton's unaligned variants)
        let runs = f.problem_variant(&p, &doc.gpu).map_or(f, |v| v.family);
        let feasible = runs
            .candidates(DTYPES[d], &doc.gpu)
            .into_iter()
            .any(|c| c.feasible() && c.config.same_tile(&pick) && c.config.num_warps == pick.num_warps && c.config.num_stages == pick.num_stages);
        prop_assert!(feasible, "pick {} infeasible", pick);
        for r in &s.ranked(&a, usize::MAX) {
            prop_assert!(r.latency_cycles.is_finite() && r.latency_cycles > 0.0, "{} -> {}", r.config, r.latency_cycles);
        }
    }

    #[test]
    fn more_k_iterations_never_predict_less_time(
        m in dim(), n in dim(), k in 1u64..100_000, j in 1u64..64, g in 0usize..5, t in 0usize..150, v in variant()
    ) {
        let doc = preset(GPUS[g]).unwrap();
        let tile = family("seed").unwrap().tiles()[t];
        let consts = ModelConstants::default();
        let hw = ModelInputs { gpu: &doc.gpu, params: &doc.params, constants: &consts, variant: v };
        let atom = mma_sync_atom(Dtype::Fp16);
        // K a multiple of BK, at least BK: see the module comment for why the published
        // formulas are not monotone otherwise.
        let bk = u64::from(tile.2);
        let k = (k.max(bk) / bk) * bk;
        let p1 = Problem::new(m, n, k, Dtype::Fp16).unwrap();
        let p2 = Problem::new(m, n, k + j * u64::from(tile.2), Dtype::Fp16).unwrap();
        let a = predict(&p1, tile, 12, atom, &hw).l_total;
        let b = predict(&p2, tile, 12, atom, &hw).l_total;
        prop_assert!(b >= a, "{:?} K {} -> {}: {} -> {}", tile, k, p2.k, a, b);
    }
}

#[test]
fn k_padding_makes_partial_iterations_costlier() {
    let doc = preset("h100-sxm").unwrap();
    let consts = ModelConstants::default();
    for v in [Variant::Seed, Variant::Origami] {
        let hw = ModelInputs {
            gpu: &doc.gpu,
            params: &doc.params,
            constants: &consts,
            variant: v,
        };
        let at = |k| {
            predict(
                &Problem::new(4096, 4096, k, Dtype::Fp16).unwrap(),
                (128, 128, 64),
                12,
                mma_sync_atom(Dtype::Fp16),
                &hw,
            )
        };
        let (a, b) = (at(127), at(128));
        assert!(a.k_pad_penalty > 0.0 && b.k_pad_penalty == 0.0);
        assert!(a.l_total > b.l_total, "{v:?}");
    }
}

#[test]
fn published_formulas_are_not_monotone_in_k_off_multiples_of_bk() {
    let doc = preset("rtx4090").unwrap();
    let consts = ModelConstants::default();
    let hw = ModelInputs {
        gpu: &doc.gpu,
        params: &doc.params,
        constants: &consts,
        variant: Variant::Seed,
    };
    let at = |m, n, k, tile| {
        predict(
            &Problem::new(m, n, k, Dtype::Fp16).unwrap(),
            tile,
            12,
            mma_sync_atom(Dtype::Fp16),
            &hw,
        )
        .l_total
    };
    // The clamp of num_iter: K = 1 and K = 17 both run one iteration with BK 16.
    assert!(at(21, 9, 17, (16, 16, 16)) < at(21, 9, 1, (16, 16, 16)));
    // The K-padding penalty shrinks with K at the same remainder.
    assert!(at(21, 9, 114, (16, 16, 32)) < at(21, 9, 82, (16, 16, 32)));
}

// ---------------------------------------------------------------- the energy model

proptest! {
    /// Any finite costs, counts, time and limit: finite outputs; the sustained time never
    /// below the time at full clock; the power never above the limit when capped (nor
    /// above the full-clock power otherwise); the clock fraction in (0, 1].
    #[test]
    fn energy_predictions_stay_physical(
        static_w in 0.0f64..1000.0,
        active in 0.0f64..1000.0,
        costs in proptest::array::uniform7(0.0f64..200.0),
        counts in proptest::array::uniform5(0.0f64..1e15),
        time_us in 0.0f64..1e7,
        limit in 1.0f64..2000.0,
        dvfs in 1.0f64..4.0,
        paths in proptest::array::uniform3(any::<bool>()),
        share in 0.0f64..1.0,
        busy in 0.0f64..1.0,
    ) {
        use origami::hw::energy::EnergyCosts;
        use origami::model::energy::{predict as energy, Traffic};
        let c = EnergyCosts {
            static_w,
            pj_per_flop: costs[0],
            pj_per_smem_byte: costs[1],
            pj_per_l2_byte: costs[2],
            pj_per_dram_byte: costs[3],
            pj_per_flop_wgmma: Some(costs[4]),
            pj_per_flop_tf32: paths[2].then_some(costs[0] * 2.0),
            pj_per_flop_zero: paths[0].then_some(costs[0] / 4.0),
            pj_per_flop_wgmma_zero: paths[1].then_some(costs[4] / 4.0),
            pj_per_tma_l2_byte: Some(costs[5]),
            pj_per_tma_dram_byte: Some(costs[6]),
            pj_per_tma_zero_byte: paths[1].then_some(costs[5] / 2.0),
            active_w: Some(static_w + active),
            dvfs_exponent: dvfs,
            power_limit_w: limit,
            source: "prop".into(),
        };
        let t = Traffic {
            tensor_flop: counts[0],
            real_flop: counts[0] / 2.0,
            load_bytes: counts[1],
            zero_fill_bytes: counts[1] / 3.0,
            fragment_bytes: counts[2],
            store_bytes: counts[3],
            dram_bytes: counts[4],
            wgmma: paths[0],
            tf32: paths[2],
            tma: paths[1],
            active_sms: share,
            issue_busy: busy,
        };
        let e = energy(&c, &t, time_us, limit);
        for v in [e.energy_mj, e.sustained_us, e.power_w, e.dynamic_mj, e.clock_fraction] {
            prop_assert!(v.is_finite(), "{e:?}");
        }
        prop_assert!(e.sustained_us >= e.time_us * (1.0 - 1e-12), "{e:?}");
        prop_assert!(e.clock_fraction > 0.0 && e.clock_fraction <= 1.0, "{e:?}");
        if e.capped {
            prop_assert!((e.power_w - limit).abs() <= 1e-6 * limit.max(1.0), "{e:?}");
        }
        prop_assert!(e.energy_mj >= 0.0 && e.dynamic_mj >= 0.0, "{e:?}");
    }
}

/// The hopper family set up for an H100 with its fitted constants, as
/// `origami-select --family hopper --gpu h100-sxm` sets it up.
fn hopper_h100() -> origami::setup::Setup {
    origami::setup::setup(&origami::setup::SetupRequest::on_preset(
        "h100-sxm", "hopper",
    ))
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A swapped launch (`swap`: C^T = B A^T) is priced by the model as the plain launch of
    /// the transposed problem (the learned correction, which sees the switch, comes on
    /// top), and a pick swaps only where the user's rows are the fewer.
    #[test]
    fn a_swapped_launch_is_the_plain_launch_of_the_transpose(
        m in 1u64..=20_000, n in 1u64..=20_000, k8 in 1u64..=4096, pick_one in 0usize..2392
    ) {
        let setup = hopper_h100();
        let f = setup.family;
        let s = setup.selector(Dtype::Fp16).unwrap();
        let p = Problem::new(m, n, 8 * k8, Dtype::Fp16).unwrap();
        let feasible: Vec<_> = f
            .candidates(Dtype::Fp16, &setup.resolved.gpu)
            .into_iter()
            .filter(|c| c.feasible() && !c.config.switches.swap)
            .collect();
        let plain = feasible[pick_one % feasible.len()].config;
        let mut swapped = plain;
        swapped.switches.swap = true;
        let a = s.predict_config_uncorrected(&p, &swapped);
        let b = s.predict_config_uncorrected(&p.transposed(), &plain);
        prop_assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "{} on {}x{}", plain, m, n);
        let pick = s.select(&p, false).unwrap().pick.config;
        prop_assert!(!pick.switches.swap || m < n, "{} picked for {}x{}", pick, m, n);
    }
}
