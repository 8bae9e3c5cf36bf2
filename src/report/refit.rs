//! The text of `origami-bench refit`: the scores before and after on the fitting and the
//! held-out shapes, the tile-oracle line, the learned launch preference and its scores,
//! the accepted moves and the override; and the override file's text.

use crate::gemm::fit::Score;
use crate::gemm::refit::{RefitReport, ScaleStep};

fn score_line(name: &str, s: &Score) -> String {
    format!(
        "{name:<28} shapes {:>3}  A/BF median {:.1}% min {:.1}% mean {:.1}%  tau mean {:.3}\n",
        s.shapes,
        100.0 * s.abf_median,
        100.0
            * if s.abf_min.is_finite() {
                s.abf_min
            } else {
                0.0
            },
        100.0 * s.abf_mean,
        s.tau_mean
    )
}

fn oracle_line(name: &str, s: &Score) -> String {
    format!(
        "{name:<28} tile-oracle A/BF (picked tile at its best launch) median {:.1}% mean {:.1}%\n",
        100.0 * s.abf_tile_oracle_median,
        100.0 * s.abf_tile_oracle_mean
    )
}

/// What `refit` prints on stdout.
pub fn refit_text(r: &RefitReport) -> String {
    let held = if r.held_sets.is_empty() {
        "-".to_string()
    } else {
        r.held_sets.join(", ")
    };
    let mut t = format!("fit on: {}; held out: {held}\n", r.fit_sets.join(", "));
    t.push_str(&score_line("fit set, before", &r.before_fit));
    t.push_str(&score_line("fit set, after", &r.after_fit));
    if let Some((before, after)) = &r.held {
        t.push_str(&score_line("held out, before", before));
        t.push_str(&score_line("held out, after", after));
    }
    t.push_str(&oracle_line("fit set, before", &r.before_fit));
    if let Some((before, _)) = &r.held {
        t.push_str(&oracle_line("held out, before", before));
    }
    t.push_str("launch preference learned on the fit set (fastest launch per tile, counted):\n");
    t.push_str(&r.launch_table.text());
    for (name, s) in &r.with_table {
        t.push_str(&score_line(name, s));
    }
    t.push_str("moves:\n");
    for s in &r.steps {
        t.push_str(&format!(
            "  {:<22} {:>12.4} -> {:>12.4}   objective {:.4} (A/BF mean {:.1}%, tau {:.3})\n",
            s.knob,
            s.from,
            s.to,
            s.score.objective(),
            100.0 * s.score.abf_mean,
            s.score.tau_mean
        ));
    }
    t.push_str(&format!(
        "override: {}\n",
        serde_json::to_string(&r.override_json).expect("a JSON value prints")
    ));
    t
}

/// The stderr line of the absolute-scale step.
pub fn scale_step_line(s: &ScaleStep) -> String {
    format!(
        "tp_time_scale {:.4} -> {:.4} (median measured/predicted {:.4})",
        s.from, s.to, s.ratio
    )
}

/// The override file (`--write`): pretty JSON and a newline.
pub fn override_file_text(r: &RefitReport) -> String {
    serde_json::to_string_pretty(&r.override_json).expect("a JSON value prints") + "\n"
}

/// The fitted model's predictions beside the measured times (`refit --predictions`), as
/// CSV: one row per timed launch that the model ranks.
pub fn predictions_csv(r: &RefitReport) -> String {
    let mut out = String::from("set,m,n,k,dtype,config,predicted_us,measured_us,picked\n");
    for (kind, row) in &r.predictions {
        let p = &row.problem;
        out.push_str(&format!(
            "{kind},{},{},{},{},\"{}\",{:.4},{:.4},{}\n",
            p.m, p.n, p.k, p.dtype, row.config, row.predicted_us, row.measured_us, row.picked
        ));
    }
    out
}
