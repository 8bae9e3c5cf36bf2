//! The sweep's progress on a terminal: a bar while compiling, a bar over every config to
//! measure (both hidden when stderr is not a terminal), and one line per shape, per resume
//! and per stop of the time budget on stderr regardless.

use std::path::Path;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use crate::gemm::bench::CompileOutcome;
use crate::gemm::sweep::ShapeRow;
use crate::gemm::sweep_run::SweepObserver;
use crate::model::Problem;

/// Progress bars and lines on stderr, each line starting with `tool: `.
pub struct ConsoleProgress {
    tool: &'static str,
    bar: Mutex<ProgressBar>,
}

impl ConsoleProgress {
    pub fn new(tool: &'static str) -> ConsoleProgress {
        ConsoleProgress {
            tool,
            bar: Mutex::new(ProgressBar::hidden()),
        }
    }

    fn bar(&self) -> ProgressBar {
        self.bar
            .lock()
            .expect("no thread panics holding the bar")
            .clone()
    }

    fn replace_bar(&self, bar: ProgressBar) {
        let old = std::mem::replace(&mut *self.bar.lock().expect("no panics"), bar);
        old.finish_and_clear();
    }
}

fn or_dash(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or("-".into(), f)
}

impl SweepObserver for ConsoleProgress {
    fn resumed(&self, dir: &Path, shapes_done: usize) {
        eprintln!(
            "{}: resuming in {}: {shapes_done} shapes already done",
            self.tool,
            dir.display()
        );
    }

    fn compiling(&self, configs: usize) {
        let bar = ProgressBar::new(configs as u64);
        bar.set_message("compiling");
        self.replace_bar(bar);
    }

    fn compiled_one(&self) {
        self.bar().inc(1);
    }

    fn compiled(&self, instances: usize, configs: usize, seconds: f64, o: &CompileOutcome) {
        self.replace_bar(ProgressBar::hidden());
        eprintln!(
            "{}: {instances} kernel instances ({configs} planned configs with their group sizes) compiled and loaded in {seconds:.1} s ({} threads), {} failed",
            self.tool,
            o.threads,
            o.failures.len()
        );
        for f in o.failures.iter().take(10) {
            eprintln!("{}:   {f}", self.tool);
        }
    }

    fn measuring(&self, configs: u64) {
        let bar = ProgressBar::new(configs);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} configs {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        self.replace_bar(bar);
    }

    fn shape_started(&self, set: &str, p: &Problem) {
        self.bar()
            .set_message(format!("{set} {}x{}x{}", p.m, p.n, p.k));
    }

    fn config_done(&self) {
        self.bar().inc(1);
    }

    fn shape_done(&self, done: usize, of: usize, s: &ShapeRow) {
        self.bar().suspend(|| {
            eprintln!(
                "{}: [{done}/{of}] {} {}x{}x{}: pick {} {} TF, best {} {} TF, cuBLAS {:.1} TF, A/BF {}, tau {}, {:.1} s",
                self.tool,
                s.set,
                s.m,
                s.n,
                s.k,
                s.pick,
                or_dash(s.pick_tflops, |v| format!("{v:.1}")),
                s.bf_config,
                or_dash(s.bf_tflops, |v| format!("{v:.1}")),
                s.cublas_tflops.unwrap_or(0.0),
                or_dash(s.a_bf, |v| format!("{:.1}%", 100.0 * v)),
                or_dash(s.kendall_tau, |v| format!("{v:.3}")),
                s.seconds
            )
        });
    }

    fn budget_stop(&self, p: &Problem, shapes_left: usize) {
        eprintln!(
            "{}: time budget: stopping before {}x{}x{} ({shapes_left} shapes left; run again with the same --out to resume)",
            self.tool, p.m, p.n, p.k
        );
    }

    fn finished(&self) {
        self.replace_bar(ProgressBar::hidden());
    }
}
