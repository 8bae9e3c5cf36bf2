//! `origami-bench energy`'s text: one line per shape (configs, median predicted/measured
//! energy, Kendall tau of energy and of sustained time, the energy and sustained-time
//! picks among the configs measured), then the summary.

use std::fmt::Write as _;

use crate::gemm::energy_check::EnergyCheck;

fn num(v: Option<f64>, digits: usize) -> String {
    v.filter(|x| x.is_finite())
        .map_or_else(|| "-".into(), |x| format!("{x:.digits$}"))
}

/// The report for people.
pub fn energy_text(c: &EnergyCheck) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<14} {:>7} {:>7} {:>7} {:>4} {:>7} {:>7} {:>7} {:>7}",
        "set", "M", "N", "K", "n", "pred/ms", "tau_E", "tau_t", "E_pick"
    );
    for s in &c.shapes {
        let _ = writeln!(
            o,
            "{:<14} {:>7} {:>7} {:>7} {:>4} {:>7.3} {:>7} {:>7} {:>7.3}",
            s.set,
            s.m,
            s.n,
            s.k,
            s.configs,
            s.median_ratio,
            num(s.tau_energy, 3),
            num(s.tau_sustained, 3),
            s.energy_pick
        );
    }
    let _ = writeln!(
        o,
        "{} configs on {} shapes ({} not priced): predicted/measured energy median {} (median |error| {}); Kendall tau over configs median {} (energy), {} (sustained time); energy pick among the configs measured: median {}, min {}; sustained-time pick: median {}, min {}",
        c.rows.len(),
        c.shapes.len(),
        c.unpriced,
        num(c.median_ratio, 3),
        num(c.median_abs_error, 3),
        num(c.tau_energy_median, 3),
        num(c.tau_sustained_median, 3),
        num(c.energy_pick_median, 3),
        num(c.energy_pick_min, 3),
        num(c.sustained_pick_median, 3),
        num(c.sustained_pick_min, 3),
    );
    o
}
