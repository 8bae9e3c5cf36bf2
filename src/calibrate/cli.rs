//! `origami-calibrate`'s command line, validated into a run (ripgrep style: raw flags ->
//! config), and the whole program as a function returning the exit code, so that CLI
//! parsing and every error exit is unit-testable without a GPU.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use clap::{Parser, ValueEnum};
use serde_json::json;

use super::assemble::{assemble, iso8601_utc, RunInfo};
use super::bench::{Bench, BenchConfig};
use super::check::{check_file, CheckOptions};
use super::stability::Policy;
use super::{run_on, text, CalibError};
use crate::exit::{help_line, Exit, ToExit};
use crate::gpu::{self, Gpu};
use crate::hw::schema::HwDoc;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Json,
    Text,
}

/// Calibrate an NVIDIA GPU with CUDA microbenchmarks and print the five Origami model
/// parameters as JSON (the schema of `TRITONBLAS_HW_PARAMS`); or check calibration files
/// (--check) and list the CUDA libraries and GPUs present (--probe) with no GPU needed.
#[derive(Debug, Parser)]
#[command(
    name = "origami-calibrate",
    version,
    long_about = None,
    after_help = calibrate_help()
)]
pub struct Args {
    /// Minimum samples per metric.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// CoV threshold per metric, in percent ("1" or "1%").
    #[arg(long, default_value = "1", value_parser = parse_percent)]
    pub max_cov: f64,
    /// Most samples per metric before it is declared unstable [default: max(5 x runs, 30)].
    #[arg(long)]
    pub max_samples: Option<usize>,
    /// Warm-up samples discarded per metric.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Device ordinal, or "all".
    #[arg(long, default_value = "0")]
    pub device: String,
    /// Run only these benchmarks (comma separated); the clock is added when a bandwidth is.
    /// smem-bw, sync-cost and kloop-cost (on-chip costs), l2-sms (L2 bandwidth against the
    /// SMs that read), l2-rows and dram-rows (L2 and DRAM bandwidth against the length of
    /// the rows read), tc-rate
    /// (tensor-core throughput per SM) and tma (TMA load latency
    /// and throughput, compute capability 9.0) feed the calibration-only tier
    /// (docs/calibration-only.md), not the five parameters, and run only when named here.
    /// energy (idle and static power,
    /// pJ per tensor-core FLOP and per byte from shared memory, L2 and DRAM, and the power
    /// limit, from NVML's energy counter; on compute capability 9.0 also per wgmma FLOP
    /// and per TMA byte; ~30-40 s) runs only when named here. topology (where the block
    /// scheduler places the blocks of one-block-per-SM launches and which SMs share a GPC,
    /// measurement sm_topology) runs only when named here.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Bench>,
    /// With --only energy: the shortest window of NVML's energy counter per sample,
    /// seconds (0.5 to 60; one sample is one window).
    #[arg(long, value_name = "SECONDS", default_value_t = super::bench::energy::DEFAULT_WINDOW_S)]
    pub energy_s: f64,
    /// Fewer footprints, fewer SM counts, shorter kernels.
    #[arg(long)]
    pub quick: bool,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
    /// Write the JSON here (through a temporary file; nothing is left if interrupted).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Write the results even when a metric stays above the CoV threshold.
    #[arg(long)]
    pub allow_unstable: bool,
    /// Seed for the random data and permutations [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Validate calibration files (schema, ranges, CoV, provenance) without a GPU.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["output", "only", "quick", "device", "seed", "energy_s"])]
    pub check: Vec<PathBuf>,
    /// With --check: fail files that were estimated rather than measured.
    #[arg(long, requires = "check")]
    pub require_measured: bool,
    /// Print what CUDA libraries and GPUs are present (JSON) and exit (4 without a GPU).
    #[arg(long, conflicts_with = "check")]
    pub probe: bool,
}

/// What `--help` prints after the options: every exit code the tool can return (3 when a
/// metric stays unstable or a checked file's CoV is above the limit, 4 without a GPU or
/// a CUDA library) and examples.
fn calibrate_help() -> String {
    format!(
        "{}\n\
         Examples:\n  \
         origami-calibrate --quick --format text\n  \
         origami-calibrate --runs 10 --max-cov 0.5% --output h200.json\n  \
         origami-calibrate --only smem-bw,sync-cost,kloop-cost --format text\n  \
         origami-calibrate --only tc-rate,tma --format text   (tensor cores, TMA; opt-in)\n  \
         origami-calibrate --only energy --format text   (pJ per FLOP and per byte; ~30-40 s)\n  \
         origami-calibrate --only topology --output topology.json   (block placement, GPCs)\n  \
         origami-calibrate --check calibrations/h200.json\n  \
         origami-calibrate --probe",
        help_line(&Exit::ALL)
    )
}

/// "1", "1%", "0.5 %" -> 0.01, 0.01, 0.005.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%').trim();
    let v: f64 = t
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage like 1 or 0.5%"))?;
    if !(v > 0.0 && v <= 100.0) {
        return Err(format!("--max-cov must be in (0, 100] percent, got {v}"));
    }
    Ok(v / 100.0)
}

/// Which devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSel {
    One(usize),
    All,
}

/// A validated run configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub policy: Policy,
    pub devices: DeviceSel,
    pub benches: Vec<Bench>,
    pub partial: bool,
    pub quick: bool,
    pub format: Format,
    pub output: Option<PathBuf>,
    pub allow_unstable: bool,
    pub seed: u64,
    /// The energy benchmark's counter window, seconds.
    pub energy_window_s: f64,
}

impl Args {
    /// Validate the flags of a calibration run.
    pub fn config(&self) -> Result<Config, CalibError> {
        if self.runs < 2 {
            return Err(CalibError::Usage(format!(
                "--runs must be at least 2 (a CoV needs two samples), got {}",
                self.runs
            )));
        }
        let cap = self
            .max_samples
            .unwrap_or_else(|| Policy::default_cap(self.runs));
        if cap < self.runs {
            return Err(CalibError::Usage(format!(
                "--max-samples ({cap}) must be at least --runs ({})",
                self.runs
            )));
        }
        let energy_window_s =
            crate::gemm::energy::check_window(self.energy_s).map_err(CalibError::Usage)?;
        let devices = match self.device.trim() {
            "all" => DeviceSel::All,
            d => DeviceSel::One(d.parse().map_err(|_| {
                CalibError::Usage(format!("--device takes an ordinal or 'all', got '{d}'"))
            })?),
        };
        let mut benches: Vec<Bench> = if self.only.is_empty() {
            Bench::DEFAULT.to_vec()
        } else {
            self.only.clone()
        };
        if benches
            .iter()
            .any(|b| matches!(b, Bench::L2 | Bench::Dram | Bench::DramSms))
            && !benches.contains(&Bench::Clock)
        {
            benches.push(Bench::Clock);
        }
        benches.sort_by_key(|b| Bench::ALL.iter().position(|x| x == b));
        benches.dedup();
        let seed = self.seed.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
        Ok(Config {
            policy: Policy {
                warmup: self.warmup,
                min_samples: self.runs,
                max_cov: self.max_cov,
                max_samples: cap,
            },
            devices,
            // every parameter measured when the default set is in (tc-rate and tma add
            // measurements, no parameter)
            partial: !Bench::DEFAULT.iter().all(|b| benches.contains(b)),
            benches,
            quick: self.quick,
            format: self.format,
            output: self.output.clone(),
            allow_unstable: self.allow_unstable,
            seed,
            energy_window_s,
        })
    }
}

/// The program: parse `argv`, run, print; returns the exit code.
pub fn main_with(argv: Vec<OsString>) -> Exit {
    let args = match crate::usage::parse_args_from::<Args, _, _>("origami-calibrate", &argv) {
        Ok(a) => a,
        Err(exit) => return exit,
    };
    let command = command_line(&argv);
    match run(&args, &command) {
        Ok(code) => code,
        Err(e) => {
            crate::exit::eprint_error("origami-calibrate", &e);
            e.exit_code()
        }
    }
}

fn command_line(argv: &[OsString]) -> String {
    let mut parts: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(first) = parts.first_mut() {
        if let Some(name) = Path::new(first.as_str()).file_name() {
            *first = name.to_string_lossy().into_owned();
        }
    }
    parts.join(" ")
}

/// Run with parsed arguments.
pub fn run(args: &Args, command: &str) -> Result<Exit, CalibError> {
    if !args.check.is_empty() {
        return run_check(args);
    }
    if args.probe {
        let r = gpu::probe::probe_all();
        let text = serde_json::to_string_pretty(&r).unwrap_or_default();
        stdout(&format!("{text}\n"))?;
        return Ok(if r.devices.is_empty() {
            Exit::NoGpu
        } else {
            Exit::Ok
        });
    }
    let cfg = args.config()?;
    let ordinals: Vec<usize> = match cfg.devices {
        DeviceSel::One(i) => vec![i],
        DeviceSel::All => (0..gpu::probe::device_count()?).collect(),
    };
    let t0 = Instant::now();
    let mut docs: Vec<HwDoc> = Vec::new();
    for &ord in &ordinals {
        let dev = Gpu::open(ord)?;
        eprintln!(
            "origami-calibrate: device {ord}: {} (sm_{}, {} SMs, L2 {} bytes); benchmarks: {:?}",
            dev.props().name,
            dev.arch(),
            dev.props().sm_count,
            dev.props().l2_bytes,
            cfg.benches
        );
        let bcfg = BenchConfig {
            policy: cfg.policy,
            quick: cfg.quick,
            seed: cfg.seed.wrapping_add(ord as u64),
            energy_window_s: cfg.energy_window_s,
        };
        let mut res = run_on(&dev, &cfg.benches, bcfg)?;
        res.observed
            .insert("wall_s".into(), json!(t0.elapsed().as_secs_f64()));
        res.observed.insert("device_ordinal".into(), json!(ord));
        if let Ok((a, b)) = gpu::probe::nvrtc_version() {
            res.observed
                .insert("nvrtc".into(), json!(format!("{a}.{b}")));
        }
        let nvcc = gpu::module::nvcc_version();
        if !nvcc.is_empty() {
            res.observed.insert("nvcc_build".into(), json!(nvcc));
        }
        let fallback = cfg.partial.then(|| {
            match crate::hw::presets::preset_for_device(&dev.props().name)
                .and_then(|n| crate::hw::presets::preset(n).ok().map(|d| (n, d)))
            {
                Some((n, d)) => (format!("preset:{n}"), d.params),
                None => (
                    "derived".to_string(),
                    crate::hw::derive::derive_params(dev.props()),
                ),
            }
        });
        let info = RunInfo {
            command: command.to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            date: iso8601_utc(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
            ),
            driver: dev.driver_version().ok(),
            cuda: gpu::probe::driver_cuda_version()
                .ok()
                .map(|(a, b)| format!("{a}.{b}")),
            runs: cfg.policy.min_samples as u32,
            max_cov: cfg.policy.max_cov,
            allow_unstable: cfg.allow_unstable,
            fallback,
        };
        let unstable = res.unstable();
        let doc = assemble(&res, &info)?;
        if !unstable.is_empty() && !cfg.allow_unstable {
            eprint!("{}", text::summary(&doc));
            return Err(CalibError::Unstable {
                max_cov_pct: 100.0 * cfg.policy.max_cov,
                metrics: unstable,
            });
        }
        if !unstable.is_empty() {
            eprintln!(
                "warning: writing UNSTABLE measurements (--allow-unstable): {}",
                unstable.join(", ")
            );
        }
        docs.push(doc);
    }
    emit(&docs, &ordinals, &cfg)?;
    eprintln!(
        "origami-calibrate: done in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    Ok(Exit::Ok)
}

/// The output file of device `ordinal` when several are calibrated: `stem-<ordinal>.ext`.
pub fn per_device_path(path: &Path, ordinal: usize, several: bool) -> PathBuf {
    if !several {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(e) => format!("{stem}-{ordinal}.{}", e.to_string_lossy()),
        None => format!("{stem}-{ordinal}"),
    };
    path.with_file_name(name)
}

fn emit(docs: &[HwDoc], ordinals: &[usize], cfg: &Config) -> Result<(), CalibError> {
    let several = docs.len() > 1;
    let io = |context: String| move |source| CalibError::Io { context, source };
    if let Some(path) = &cfg.output {
        for (doc, &ord) in docs.iter().zip(ordinals) {
            let p = per_device_path(path, ord, several);
            let mut text = serde_json::to_string_pretty(doc).expect("serializable");
            text.push('\n');
            crate::gpu::module::write_atomic(&p, text.as_bytes())
                .map_err(io(format!("writing {}", p.display())))?;
            eprintln!("origami-calibrate: wrote {}", p.display());
        }
    }
    let mut out = std::io::stdout().lock();
    match cfg.format {
        Format::Text => {
            for doc in docs {
                write!(out, "{}", text::summary(doc)).map_err(io("writing stdout".into()))?;
            }
        }
        Format::Json if cfg.output.is_none() => {
            let text = if several {
                serde_json::to_string_pretty(docs)
            } else {
                serde_json::to_string_pretty(&docs[0])
            }
            .expect("serializable");
            writeln!(out, "{text}").map_err(io("writing stdout".into()))?;
        }
        Format::Json => {}
    }
    out.flush().map_err(io("writing stdout".into()))
}

/// Write `text` to stdout; a closed or full stream is a run-time failure.
fn stdout(text: &str) -> Result<(), CalibError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| CalibError::Io {
            context: "writing stdout".into(),
            source,
        })
}

/// Check every file; the exit code of the worst failure (`Ok` when all pass), or a failed
/// write to stdout.
fn run_check(args: &Args) -> Result<Exit, CalibError> {
    let opts = CheckOptions {
        max_cov: args.max_cov,
        require_measured: args.require_measured,
    };
    let mut worst = Exit::Ok;
    for f in &args.check {
        match check_file(f, &opts) {
            Ok(rep) => {
                let kind = match rep.kind {
                    crate::hw::schema::ProvenanceKind::Measured => "measured",
                    crate::hw::schema::ProvenanceKind::Estimated => "estimated",
                };
                let mut out = format!(
                    "ok: {}: {kind}, {}, {} measurements\n",
                    f.display(),
                    rep.gpu,
                    rep.measurements
                );
                for n in rep.notes {
                    out.push_str(&format!("  note: {n}\n"));
                }
                if args.format == Format::Text {
                    if let Ok(crate::hw::load::HwFile::Full(doc)) = crate::hw::load::load_file(f) {
                        out.push_str(&text::summary(&doc));
                    }
                }
                stdout(&out)?;
            }
            Err(e) => {
                crate::exit::eprint_error("origami-calibrate", &format!("check failed: {e}"));
                let code = e.exit_code();
                if code.code() > worst.code() {
                    worst = code;
                }
            }
        }
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Args {
        let mut v = vec!["origami-calibrate"];
        v.extend_from_slice(a);
        Args::try_parse_from(v).unwrap()
    }

    #[test]
    fn defaults() {
        let c = parse(&[]).config().unwrap();
        assert_eq!(c.policy.min_samples, 5);
        assert_eq!(c.policy.max_cov, 0.01);
        assert_eq!(c.policy.max_samples, 30);
        assert_eq!(c.devices, DeviceSel::One(0));
        assert_eq!(c.benches, Bench::DEFAULT.to_vec());
        assert!(!c.partial);
        assert_eq!(c.format, Format::Json);
    }

    #[test]
    fn percent_parsing() {
        assert_eq!(parse_percent("1").unwrap(), 0.01);
        assert_eq!(parse_percent("0.5%").unwrap(), 0.005);
        assert!(parse_percent("0").is_err());
        assert!(parse_percent("abc").is_err());
        assert!(parse_percent("150").is_err());
    }

    #[test]
    fn only_adds_the_clock_for_bandwidths() {
        let c = parse(&["--only", "dram-sms,l2"]).config().unwrap();
        assert_eq!(c.benches, vec![Bench::Clock, Bench::L2, Bench::DramSms]);
        assert!(c.partial);
        let c = parse(&["--only", "mma"]).config().unwrap();
        assert_eq!(c.benches, vec![Bench::Mma]);
        // the on-chip cost benchmarks read clock64 cycles: no clock added; run order kept
        let c = parse(&["--only", "kloop-cost,smem-bw,sync-cost"])
            .config()
            .unwrap();
        assert_eq!(
            c.benches,
            vec![Bench::SmemBw, Bench::SyncCost, Bench::KloopCost]
        );
        assert!(c.partial);
        // and they are not in a run without --only
        let c = parse(&[]).config().unwrap();
        assert!(!c.benches.contains(&Bench::KloopCost));
    }

    #[test]
    fn the_tensor_core_and_tma_benchmarks_are_opt_in() {
        let c = parse(&[]).config().unwrap();
        assert!(!c.benches.contains(&Bench::TcRate) && !c.benches.contains(&Bench::Tma));
        let c = parse(&["--only", "tma,tc-rate"]).config().unwrap();
        assert_eq!(c.benches, vec![Bench::TcRate, Bench::Tma]);
        assert!(c.partial);
        // the default set plus both: every parameter measured, in run order
        let c = parse(&["--only", "tma,clock,mma,latency,l2,dram,dram-sms,tc-rate"])
            .config()
            .unwrap();
        let want: Vec<Bench> = Bench::ALL
            .into_iter()
            .filter(|b| Bench::DEFAULT.contains(b) || [Bench::TcRate, Bench::Tma].contains(b))
            .collect();
        assert_eq!(c.benches, want);
        assert!(!c.partial);
    }

    #[test]
    fn the_topology_benchmark_is_opt_in() {
        let c = parse(&[]).config().unwrap();
        assert!(!c.benches.contains(&Bench::Topology));
        let c = parse(&["--only", "topology"]).config().unwrap();
        assert_eq!(c.benches, vec![Bench::Topology]);
        assert!(c.partial);
        // before energy in run order
        let c = parse(&["--only", "energy,topology,tma"]).config().unwrap();
        assert_eq!(c.benches, vec![Bench::Tma, Bench::Topology, Bench::Energy]);
    }

    #[test]
    fn the_energy_benchmark_is_opt_in_and_its_window_checked() {
        let c = parse(&[]).config().unwrap();
        assert!(!c.benches.contains(&Bench::Energy));
        assert!(!Bench::DEFAULT.contains(&Bench::Energy));
        assert_eq!(c.energy_window_s, 0.5);
        let c = parse(&["--only", "energy"]).config().unwrap();
        assert_eq!(c.benches, vec![Bench::Energy]);
        assert!(c.partial);
        // last in run order, after everything it could warm the GPU for
        assert_eq!(Bench::ALL.last(), Some(&Bench::Energy));
        let c = parse(&["--only", "energy,mma", "--energy-s", "2"])
            .config()
            .unwrap();
        assert_eq!(c.benches, vec![Bench::Mma, Bench::Energy]);
        assert_eq!(c.energy_window_s, 2.0);
        for bad in ["0.1", "61", "NaN"] {
            let e = parse(&["--only", "energy", "--energy-s", bad])
                .config()
                .unwrap_err();
            assert_eq!(e.exit_code(), Exit::BadInput, "{bad}");
            assert!(e.to_string().starts_with("--energy-s: "), "{e}");
        }
    }

    #[test]
    fn usage_errors_exit_2() {
        assert_eq!(
            parse(&["--runs", "1"]).config().unwrap_err().exit_code(),
            Exit::BadInput
        );
        assert_eq!(
            parse(&["--device", "x"]).config().unwrap_err().exit_code(),
            Exit::BadInput
        );
        assert_eq!(
            parse(&["--runs", "10", "--max-samples", "5"])
                .config()
                .unwrap_err()
                .exit_code(),
            Exit::BadInput
        );
        assert_eq!(
            parse(&["--device", "all"]).config().unwrap().devices,
            DeviceSel::All
        );
        let argv = |a: &[&str]| {
            std::iter::once("origami-calibrate")
                .chain(a.iter().copied())
                .map(OsString::from)
                .collect()
        };
        assert_eq!(main_with(argv(&["--only", "bogus"])), Exit::BadInput);
        assert_eq!(
            main_with(argv(&["--check", "x.json", "--quick"])),
            Exit::BadInput
        );
        assert_eq!(main_with(argv(&["--runs", "1"])), Exit::BadInput);
        assert_eq!(main_with(argv(&["--help"])), Exit::Ok);
    }

    #[test]
    fn help_has_its_own_summary_every_exit_code_and_every_description() {
        use clap::CommandFactory;
        let mut cmd = Args::command();
        let help = cmd.render_long_help().to_string();
        assert!(help.starts_with("Calibrate an NVIDIA GPU"), "{help}");
        assert!(!help.contains(env!("CARGO_PKG_DESCRIPTION")), "{help}");
        for e in Exit::ALL {
            assert!(
                help.contains(&format!("{} {}", e.code(), e.meaning())),
                "exit {} missing: {help}",
                e.code()
            );
        }
        assert!(help.contains("Examples:"), "{help}");
        assert!(help.contains("--only energy"), "{help}");
        assert!(help.contains("--energy-s"), "{help}");
        assert_eq!(crate::usage::undocumented(&cmd), Vec::<String>::new());
    }

    #[test]
    fn per_device_names() {
        let p = Path::new("out/h200.json");
        assert_eq!(per_device_path(p, 1, false), PathBuf::from("out/h200.json"));
        assert_eq!(
            per_device_path(p, 1, true),
            PathBuf::from("out/h200-1.json")
        );
        assert_eq!(
            per_device_path(Path::new("x"), 0, true),
            PathBuf::from("x-0")
        );
    }

    #[test]
    fn command_line_drops_the_directory() {
        let argv: Vec<OsString> = ["/some/dir/origami-calibrate", "--runs", "5"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(command_line(&argv), "origami-calibrate --runs 5");
    }
}
