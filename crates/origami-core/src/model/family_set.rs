//! What `origami-select --family` names: one kernel family, or a set of families the tool
//! chooses among shape by shape. The sets: `triton-auto`, Triton's two matmul kernels
//! on NVIDIA, the tutorial kernel (`triton`, `matmul_kernel`) and the persistent
//! tensor-descriptor kernel (`triton-tma`, `matmul_tma_persistent_kernel`); and `auto`, the
//! project's two CUDA kernels, the Hopper kernel (`hopper`: compute capability 9.x, K a
//! multiple of 8) and the mma.sync kernel (`origami`) for the rest. This module
//! owns the rule: a member enters a shape when its kernel can run the shape
//! (`KernelFamily::problem_violation`: the tutorial kernel's 32-bit offsets, TMA's 16-byte
//! row strides and input types) and it has a feasible config for the input type on the GPU
//! (`Selector::new`); among the entrants the lower time of the pick wins, the predicted time
//! through the member's fitted map (`hw::time_map`: each model ranks well but is off in
//! absolute time, differently per family; the map was fitted on the model's own times, so
//! a member's learned correction, which reorders within a shape, is left out of it), the earlier member on a tie (`triton-auto`: the tutorial kernel, the one with the longer
//! measured record; `auto`: the Hopper kernel, the faster one where both run).
//! A single family is the set of itself, so the tool has one path for both.

use crate::model::family::{
    family, HopperFamily, KernelFamily, OrigamiFamily, TritonFamily, TritonTmaFamily, FAMILY_NAMES,
};
use crate::model::problem::Problem;
use crate::model::select::{Ranked, Scope, Selection, Selector};

/// `--family triton-auto`: the Triton kernel chosen per shape.
pub const TRITON_AUTO: &str = "triton-auto";

/// `--family auto`: the project's CUDA kernel chosen per shape.
pub const AUTO: &str = "auto";

/// The sets by name, with their members in tie-break order.
const SETS: &[(&str, &[&dyn KernelFamily])] = &[
    (TRITON_AUTO, &[&TritonFamily, &TritonTmaFamily]),
    (AUTO, &[&HopperFamily, &OrigamiFamily]),
];

/// Every name `--family` takes in origami-select: the families, then the sets.
pub fn set_names() -> Vec<&'static str> {
    FAMILY_NAMES
        .iter()
        .copied()
        .chain(SETS.iter().map(|(n, _)| *n))
        .collect()
}

/// One family, or a set of them to choose among.
#[derive(Clone)]
pub struct FamilySet {
    /// The name given on the command line (a family's own name for a single family).
    pub name: &'static str,
    /// The members, in tie-break order.
    pub members: Vec<&'static dyn KernelFamily>,
}

/// Why one member takes no part in a shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Out {
    pub family: &'static str,
    pub reason: String,
}

/// No member can select for a shape: every member's reason, in member order.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", no_member_line(.set, .shape, .outs))]
pub struct NoMember {
    pub set: &'static str,
    pub shape: String,
    pub outs: Vec<Out>,
}

/// A single family's reason as it is; a set's as "--family SET: no kernel of the set can
/// run SHAPE: a: why; b: why".
fn no_member_line(set: &str, shape: &str, outs: &[Out]) -> String {
    match outs {
        [one] if one.family == set => one.reason.clone(),
        _ => format!(
            "--family {set}: no kernel of the set can run {shape}: {}",
            outs.iter()
                .map(|o| format!("{}: {}", o.family, o.reason))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// A shape's choice: the winner's selection and selector, and every member's pick or
/// reason.
#[derive(Clone)]
pub struct Choice<'s> {
    /// Index of the winner among the set's members.
    pub chosen: usize,
    /// The winner's selection.
    pub selection: Selection,
    /// The selector that made it (the winner's ranking, its kernel and GPU).
    pub selector: &'s Selector<'s>,
    /// Per member, in member order: its pick (the winner's too), or why it is out.
    pub entrants: Vec<Result<Ranked, Out>>,
    /// Per member, in member order: the time the rule compared (the pick's predicted time
    /// through its selector's `time_map`), for the members that entered.
    pub compared_us: Vec<Option<f64>>,
}

impl FamilySet {
    /// The set or family named (case and surrounding blanks ignored).
    pub fn named(name: &str) -> Option<FamilySet> {
        let wanted = name.trim().to_ascii_lowercase();
        if let Some((n, members)) = SETS.iter().find(|(n, _)| *n == wanted) {
            return Some(FamilySet {
                name: n,
                members: members.to_vec(),
            });
        }
        family(&wanted).map(|f| FamilySet {
            name: f.name(),
            members: vec![f],
        })
    }

    /// Whether the tool chooses among several families (a set, not one family).
    pub fn is_choice(&self) -> bool {
        self.members.len() > 1
    }

    /// Why each member's kernel cannot run `p` (`None` where it can), in member order.
    pub fn violations(&self, p: &Problem) -> Vec<Option<String>> {
        self.members
            .iter()
            .map(|f| f.problem_violation(p))
            .collect()
    }

    /// Why no member's kernel can run `p`, if none can: a single family's own reason; a
    /// set's every reason, on one line.
    pub fn violation(&self, p: &Problem) -> Option<String> {
        let outs: Vec<Out> = self
            .members
            .iter()
            .zip(self.violations(p))
            .map(|(f, why)| {
                why.map(|reason| Out {
                    family: f.name(),
                    reason,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(if self.is_choice() {
            outs.iter()
                .map(|o| format!("{}: {}", o.family, o.reason))
                .collect::<Vec<_>>()
                .join("; ")
        } else {
            outs.into_iter()
                .next()
                .map(|o| o.reason)
                .unwrap_or_default()
        })
    }

    /// Per member, in member order: its selector for `p`, or why it takes no part (its
    /// kernel cannot run `p`, or `selector(i)` has no selector for it).
    pub fn entrants<'s>(
        &self,
        p: &Problem,
        selector: impl Fn(usize) -> Result<&'s Selector<'s>, String>,
    ) -> Vec<Result<&'s Selector<'s>, Out>> {
        self.members
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let out = |reason: String| Out {
                    family: f.name(),
                    reason,
                };
                match f.problem_violation(p) {
                    Some(why) => Err(out(why)),
                    None => selector(i).map_err(out),
                }
            })
            .collect()
    }

    /// No member can select for `p`: every member's reason.
    fn no_member(&self, p: &Problem, outs: Vec<Out>) -> NoMember {
        NoMember {
            set: self.name,
            shape: format!("{}x{}x{} {}", p.m, p.n, p.k, p.dtype),
            outs,
        }
    }

    /// Some member enters `p` (see [`FamilySet::entrants`]); else why none does.
    pub fn check<'s>(
        &self,
        p: &Problem,
        selector: impl Fn(usize) -> Result<&'s Selector<'s>, String>,
    ) -> Result<(), NoMember> {
        let entrants = self.entrants(p, selector);
        if entrants.iter().any(Result::is_ok) {
            return Ok(());
        }
        Err(self.no_member(p, entrants.into_iter().filter_map(Result::err).collect()))
    }

    /// Choose for `p`: each member that enters (see [`FamilySet::entrants`]) selects
    /// (`with_rejected` as `Selector::select`); the lowest compared time wins (the model's
    /// time of the pick, without a learned correction, through the selector's
    /// `time_map`), the earlier member on a tie.
    pub fn choose<'s>(
        &self,
        p: &Problem,
        selector: impl Fn(usize) -> Result<&'s Selector<'s>, String>,
        with_rejected: bool,
    ) -> Result<Choice<'s>, NoMember> {
        let scope = if with_rejected {
            Scope::WithRejected
        } else {
            Scope::All
        };
        self.choose_scoped(p, selector, scope)
    }

    /// [`FamilySet::choose`], each member selecting over `scope` (`Scope::Pick`: the same
    /// winner and picks, fewer configs scored).
    pub fn choose_scoped<'s>(
        &self,
        p: &Problem,
        selector: impl Fn(usize) -> Result<&'s Selector<'s>, String>,
        scope: Scope,
    ) -> Result<Choice<'s>, NoMember> {
        let selections: Vec<Result<(Selection, &'s Selector<'s>), Out>> = self
            .entrants(p, selector)
            .into_iter()
            .map(|e| {
                let s = e?;
                let sel = s.select_scoped(p, scope).map_err(|why| Out {
                    family: s.family.name(),
                    reason: why.to_string(),
                })?;
                Ok((sel, s))
            })
            .collect();
        let compared = |(s, sel): &(Selection, &Selector<'_>)| sel.time_map.apply(s.pick.model_us);
        let winner = fastest(&selections, compared);
        let compared_us: Vec<Option<f64>> = selections
            .iter()
            .map(|e| e.as_ref().ok().map(compared))
            .collect();
        let mut selection = None;
        let mut entrants = Vec::with_capacity(selections.len());
        for (i, e) in selections.into_iter().enumerate() {
            match e {
                Ok((s, selector)) => {
                    entrants.push(Ok(s.pick.clone()));
                    if Some(i) == winner {
                        selection = Some((s, selector));
                    }
                }
                Err(out) => entrants.push(Err(out)),
            }
        }
        match (winner, selection) {
            (Some(chosen), Some((selection, selector))) => Ok(Choice {
                chosen,
                selection,
                selector,
                entrants,
                compared_us,
            }),
            _ => Err(self.no_member(p, entrants.into_iter().filter_map(Result::err).collect())),
        }
    }
}

/// The rule: the index of the entrant with the lowest time (the earlier on a tie); `None`
/// when every member is out.
pub fn fastest<T, E>(entrants: &[Result<T, E>], time: impl Fn(&T) -> f64) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, e) in entrants.iter().enumerate() {
        if let Ok(x) = e {
            let t = time(x);
            if best.map_or(true, |(_, b)| t < b) {
                best = Some((i, t));
            }
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::setup::{setup, Setup, SetupRequest};

    #[test]
    fn names_and_members() {
        assert_eq!(
            set_names(),
            [
                "triton",
                "triton-tma",
                "origami",
                "hopper",
                "seed",
                "triton-auto",
                "auto"
            ]
        );
        let auto = FamilySet::named(" Triton-Auto ").unwrap();
        assert!(auto.is_choice());
        let names: Vec<&str> = auto.members.iter().map(|f| f.name()).collect();
        assert_eq!(names, ["triton", "triton-tma"]);
        let one = FamilySet::named("origami").unwrap();
        assert!(!one.is_choice());
        assert_eq!(one.name, "origami");
        let cuda = FamilySet::named("auto").unwrap();
        let names: Vec<&str> = cuda.members.iter().map(|f| f.name()).collect();
        assert_eq!(names, ["hopper", "origami"]);
        assert!(FamilySet::named("hopper-auto").is_none());
    }

    #[test]
    fn the_rule_takes_the_lowest_time_and_the_first_on_a_tie() {
        let e = |t: Option<f64>| t.ok_or("out");
        assert_eq!(fastest(&[e(Some(2.0)), e(Some(1.0))], |t| *t), Some(1));
        assert_eq!(fastest(&[e(Some(1.0)), e(Some(1.0))], |t| *t), Some(0));
        assert_eq!(fastest(&[e(None), e(Some(5.0))], |t| *t), Some(1));
        assert_eq!(fastest(&[e(Some(5.0)), e(None)], |t| *t), Some(0));
        assert_eq!(fastest(&[e(None), e(None)], |t| *t), None);
    }

    /// Both members set up on a preset, as origami-select does.
    fn setups(gpu: &str, set: &FamilySet) -> Vec<Setup> {
        set.members
            .iter()
            .map(|f| {
                setup(&SetupRequest {
                    device: None,
                    gpu_name: Some(gpu.into()),
                    override_file: None,
                    family: f.name().into(),
                    model: "origami".into(),
                    no_fitted: false,
                    calibration_only: false,
                })
                .unwrap()
            })
            .collect()
    }

    /// What a test reads of a choice.
    #[derive(Debug)]
    struct Picked {
        chosen: usize,
        pick_us: f64,
        entrants: Vec<Result<Ranked, Out>>,
    }

    /// The family `triton-auto` chooses for a shape on `gpu`, with every member's outcome.
    fn auto_choice(gpu: &str, m: u64, n: u64, k: u64, dtype: Dtype) -> Result<Picked, NoMember> {
        let set = FamilySet::named(TRITON_AUTO).unwrap();
        let setups = setups(gpu, &set);
        let selectors: Vec<Result<Selector<'static>, String>> = setups
            .iter()
            .map(|s| s.selector(dtype).map_err(|e| e.to_string()))
            .collect();
        let p = Problem::new(m, n, k, dtype).unwrap();
        let c = set.choose(&p, |i| selectors[i].as_ref().map_err(Clone::clone), false)?;
        assert_eq!(c.selector.family.name(), set.members[c.chosen].name());
        Ok(Picked {
            chosen: c.chosen,
            pick_us: c.selection.pick.latency_us,
            entrants: c.entrants,
        })
    }

    fn family_of(c: &Picked) -> &'static str {
        FamilySet::named(TRITON_AUTO).unwrap().members[c.chosen].name()
    }

    #[test]
    fn auto_takes_the_hopper_kernel_on_hopper_and_the_mma_sync_kernel_elsewhere() {
        let choose = |gpu: &str, m: u64, n: u64, k: u64| {
            let set = FamilySet::named(AUTO).unwrap();
            let setups = setups(gpu, &set);
            let selectors: Vec<Result<Selector<'static>, String>> = setups
                .iter()
                .map(|s| s.selector(Dtype::Fp16).map_err(|e| e.to_string()))
                .collect();
            let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
            set.choose(&p, |i| selectors[i].as_ref().map_err(Clone::clone), false)
                .map(|c| (c.selector.family.name(), c.entrants))
        };
        // an H100 runs both: the fitted Hopper kernel predicts faster at 4096^3
        let (fam, entrants) = choose("h100-sxm", 4096, 4096, 4096).unwrap();
        assert_eq!(fam, "hopper");
        assert!(entrants.iter().all(Result::is_ok));
        // an A100 has no wgmma: the Hopper kernel is out with its reason
        let (fam, entrants) = choose("a100", 4096, 4096, 4096).unwrap();
        assert_eq!(fam, "origami");
        assert!(entrants[0]
            .as_ref()
            .unwrap_err()
            .reason
            .contains("no feasible config"));
        // K not a multiple of 8: neither kernel runs it, each says why
        let e = choose("h100-sxm", 4096, 4096, 4100)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--family auto: no kernel of the set can run"),
            "{e}"
        );
        assert!(
            e.contains("hopper: K = 4100") && e.contains("origami: K = 4100"),
            "{e}"
        );
    }

    #[test]
    fn auto_compares_the_mapped_times_on_an_h100() {
        // Measured on an H100 (results/h100/hopper/fit-auto.txt): the mma.sync pick ran at
        // 0.70 and 0.63 of cuBLAS at 128x4096x4096 and 1024^3, the Hopper pick at 0.94 and
        // 0.88; at 1x7168x2048 the mma.sync pick ran at 1.01, the Hopper pick at 0.75. Raw
        // predicted times chose mma.sync for all three; the mapped times choose as measured.
        // With `swap` in the hopper space, 1x7168x2048's Hopper pick is the swapped
        // 64x16x64 (the one row on wgmma's N), which ran at 0.98-0.99 of the mma.sync pick's
        // speed on an H100 (results/h100/hopper/swap/picks-summary-*.txt): a near tie that
        // the mapped times now give to the Hopper pick; 1x8192x8192 stays with mma.sync.
        let set = FamilySet::named(AUTO).unwrap();
        let setups = setups("h100-sxm", &set);
        let selectors: Vec<Result<Selector<'static>, String>> = setups
            .iter()
            .map(|s| s.selector(Dtype::Fp16).map_err(|e| e.to_string()))
            .collect();
        for (m, n, k, want) in [
            (128, 4096, 4096, "hopper"),
            (1024, 1024, 1024, "hopper"),
            (1, 7168, 2048, "hopper"),
            (1, 8192, 8192, "origami"),
        ] {
            let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
            let c = set
                .choose(&p, |i| selectors[i].as_ref().map_err(Clone::clone), false)
                .unwrap();
            assert_eq!(c.selector.family.name(), want, "{m}x{n}x{k}");
            let compared: Vec<f64> = c.compared_us.iter().map(|t| t.unwrap()).collect();
            let raw: Vec<f64> = c
                .entrants
                .iter()
                .map(|e| e.as_ref().unwrap().latency_us)
                .collect();
            assert!(compared[c.chosen] <= compared[1 - c.chosen], "{m}x{n}x{k}");
            assert!(
                compared.iter().zip(&raw).all(|(a, b)| a != b),
                "maps applied"
            );
        }
    }

    #[test]
    fn aligned_shapes_are_open_to_both_and_the_faster_wins() {
        for (m, n, k) in [(4096, 4096, 4096), (128, 14336, 4096), (8192, 8192, 64)] {
            let c = auto_choice("h100-sxm", m, n, k, Dtype::Fp16).unwrap();
            let times: Vec<f64> = c
                .entrants
                .iter()
                .map(|e| e.as_ref().unwrap().latency_us)
                .collect();
            assert_eq!(c.pick_us, times[c.chosen]);
            let best = times.iter().cloned().fold(f64::INFINITY, f64::min);
            assert_eq!(times[c.chosen], best, "{m}x{n}x{k}: {times:?}");
            assert!(c.chosen == 0 || times[0] > times[1], "ties go to triton");
        }
    }

    #[test]
    fn unaligned_k_or_n_leaves_the_tutorial_kernel() {
        for (m, n, k, what) in [
            (4096, 4096, 4095, "K = 4095"),
            (1000, 7168, 2050, "K = 2050"),
            (4096, 4097, 4096, "N = 4097"),
            (64, 1001, 64, "N = 1001"),
        ] {
            let c = auto_choice("h100-sxm", m, n, k, Dtype::Fp16).unwrap();
            assert_eq!(family_of(&c), "triton", "{m}x{n}x{k}");
            let out = c.entrants[1].as_ref().unwrap_err();
            assert_eq!(out.family, "triton-tma");
            assert!(out.reason.starts_with(what), "{}", out.reason);
        }
        // M is free: TMA clips rows; only the strides count
        let c = auto_choice("h100-sxm", 4097, 4096, 4096, Dtype::Bf16).unwrap();
        assert!(c.entrants.iter().all(Result::is_ok));
    }

    #[test]
    fn fp8_and_fp32_leave_the_tma_kernel() {
        for dtype in [Dtype::Fp8E4m3, Dtype::Fp32] {
            let c = auto_choice("h100-sxm", 4096, 4096, 4096, dtype).unwrap();
            assert_eq!(family_of(&c), "triton", "{dtype}");
            let out = c.entrants[1].as_ref().unwrap_err();
            assert!(out.reason.contains("fp16 or bf16"), "{}", out.reason);
        }
    }

    #[test]
    fn off_hopper_the_tma_kernel_has_no_feasible_config() {
        let c = auto_choice("a100", 4096, 4096, 4096, Dtype::Fp16).unwrap();
        assert_eq!(family_of(&c), "triton");
        let out = c.entrants[1].as_ref().unwrap_err();
        assert!(out.reason.contains("no feasible config"), "{}", out.reason);
    }

    #[test]
    fn huge_operands_leave_the_tutorial_kernel_and_none_left_is_one_line() {
        // 65536 x 32768 elements of A: past the tutorial kernel's 32-bit offsets
        let c = auto_choice("h100-sxm", 1 << 16, 64, 1 << 15, Dtype::Fp16).unwrap();
        assert_eq!(family_of(&c), "triton-tma");
        assert!(c.entrants[0]
            .as_ref()
            .unwrap_err()
            .reason
            .contains("32-bit offsets"));
        // and with K unaligned as well, neither kernel runs it
        let e = auto_choice("h100-sxm", 1 << 16, 64, (1 << 15) + 1, Dtype::Fp16).unwrap_err();
        let line = e.to_string();
        assert!(
            line.starts_with(
                "--family triton-auto: no kernel of the set can run 65536x64x32769 fp16: triton: "
            ),
            "{line}"
        );
        assert!(line.contains("; triton-tma: K = 32769"), "{line}");
        assert!(!line.contains('\n'));
        let set = FamilySet::named(TRITON_AUTO).unwrap();
        let p = Problem::new(1 << 16, 64, (1 << 15) + 1, Dtype::Fp16).unwrap();
        let v = set.violation(&p).unwrap();
        assert!(
            v.starts_with("triton: ") && v.contains("; triton-tma: "),
            "{v}"
        );
        assert_eq!(
            set.violation(&Problem::new(64, 64, 64, Dtype::Fp16).unwrap()),
            None
        );
    }

    #[test]
    fn a_single_family_is_the_set_of_itself() {
        let set = FamilySet::named("triton-tma").unwrap();
        let p = Problem::new(64, 64, 63, Dtype::Fp16).unwrap();
        assert_eq!(
            set.violation(&p),
            crate::model::family::triton_persistent::problem_violation(&p)
        );
        let e = NoMember {
            set: "triton-tma",
            shape: "x".into(),
            outs: vec![Out {
                family: "triton-tma",
                reason: "why".into(),
            }],
        };
        assert_eq!(e.to_string(), "why");
    }
}
