//! `origami-bench merge`: join the folders of a sharded sweep (`sweep --shard I/N`, one per
//! machine) into the files one unsharded run of the same plan writes. Shard I holds the
//! shapes at positions I, I+N, I+2N, ... of the union of the lists, in order, so the
//! shape at position g is row g / N of shard g % N; its config rows are its `n_configs`
//! rows of that shard's `configs.csv`. Shards must share the plan of their meta
//! ([`super::sweep_meta::SweepPlan`]) and the shard count; two folders of one shard, a
//! missing shard or an unfinished one (time budget, interrupted) are refused unless
//! partial merges are allowed. A complete merge is checked against the lists' digests.

use std::path::{Path, PathBuf};

use crate::exit::Failure;

use super::sweep::{ConfigRow, ShapeRow};
use super::sweep_files::{self as files, check_fresh_dest, read_rows, read_sources};
use super::sweep_meta::{list_digest, RunRecord, Shard, ShardRun, SweepMeta};

/// What to merge.
#[derive(Debug, Clone)]
pub struct MergeRequest {
    /// The shard folders, in any order.
    pub dirs: Vec<PathBuf>,
    /// The merged folder (created; must not hold a sweep).
    pub dest: PathBuf,
    /// Merge what there is when shards are missing or unfinished.
    pub allow_partial: bool,
    /// The command line (recorded in the meta).
    pub command: String,
}

/// What a merge did.
#[derive(Debug, Clone)]
pub struct MergeOutcome {
    /// The merged folder's meta (for `summary.json`).
    pub meta: SweepMeta,
    pub shards: usize,
    pub shapes: usize,
    /// Shards not given (partial merges only).
    pub missing: Vec<Shard>,
    /// Shards given but unfinished: (shard, shapes done, shapes of the shard).
    pub unfinished: Vec<(Shard, usize, usize)>,
}

impl MergeOutcome {
    /// One line per shard a partial merge left out or took unfinished.
    pub fn warnings(&self) -> Vec<String> {
        let missing = self
            .missing
            .iter()
            .map(|s| format!("shard {s} missing (--allow-partial)"));
        let unfinished = self.unfinished.iter().map(|(s, done, share)| {
            format!("shard {s} unfinished: {done} of {share} shapes (--allow-partial)")
        });
        missing.chain(unfinished).collect()
    }
}

/// One shard folder, read.
struct ShardFolder {
    dir: PathBuf,
    meta: SweepMeta,
    shard: Shard,
    shapes: Vec<ShapeRow>,
    configs: Vec<Vec<ConfigRow>>,
}

fn read_shard(dir: &Path) -> Result<ShardFolder, Failure> {
    let f = read_rows(dir)?;
    let Some(shard) = f.meta.shard else {
        return Err(Failure::bad(format!(
            "{}: not a shard folder (its sweep ran without --shard)",
            dir.display()
        )));
    };
    Ok(ShardFolder {
        dir: f.dir,
        meta: f.meta,
        shard,
        shapes: f.shapes,
        configs: f.configs,
    })
}

/// Check that the shards are of one sweep, one folder per shard.
fn check_shards(shards: &[ShardFolder]) -> Result<(), Failure> {
    let first = &shards[0];
    for s in &shards[1..] {
        if s.shard.count != first.shard.count {
            return Err(Failure::bad(format!(
                "{} is shard {}, {} is shard {}: the shard counts differ",
                s.dir.display(),
                s.shard,
                first.dir.display(),
                first.shard
            )));
        }
        if let Some(key) = s.meta.plan.first_difference(&first.meta.plan) {
            return Err(Failure::bad(format!(
                "{}: its sweep differs from that of {} in meta.{key} (shards of one sweep share the lists, the model, the device and the options)",
                s.dir.display(),
                first.dir.display()
            )));
        }
    }
    for (i, a) in shards.iter().enumerate() {
        if let Some(b) = shards[i + 1..].iter().find(|b| b.shard == a.shard) {
            return Err(Failure::bad(format!(
                "{} and {} are both shard {} (overlapping shards)",
                a.dir.display(),
                b.dir.display(),
                a.shard
            )));
        }
    }
    Ok(())
}

/// The value every shard's run agrees on, if they do.
fn common<T: PartialEq>(shards: &[ShardFolder], f: impl Fn(&RunRecord) -> Option<T>) -> Option<T> {
    let first = f(&shards[0].meta.run);
    shards[1..]
        .iter()
        .all(|s| f(&s.meta.run) == first)
        .then_some(first)
        .flatten()
}

/// The merged run record: the common seed and driver when the shards agree, the shapes
/// not merged, the merge's command line; the shards' own records go to `shard_runs`.
fn merged_run(shards: &[ShardFolder], shapes_left: usize, command: String) -> RunRecord {
    RunRecord {
        base_seed: common(shards, |r| r.base_seed),
        clocks_start: None,
        clocks_end: None,
        driver: common(shards, |r| r.driver.clone()),
        shapes_left,
        command,
    }
}

/// Merge shard folders into `req.dest` (`configs.csv` and `shapes.csv`; the caller
/// writes `summary.json` with the returned meta, [`super::sweep_files::summarize_folder`],
/// and draws the plots).
pub fn merge_shards(req: &MergeRequest) -> Result<MergeOutcome, Failure> {
    if req.dirs.is_empty() {
        return Err(Failure::bad("give the shard folders to merge"));
    }
    let mut shards = read_sources(&req.dirs, &req.dest, "shard", "merge", read_shard)?;
    check_shards(&shards)?;
    shards.sort_by_key(|s| s.shard.index);
    let count = shards[0].shard.count;
    let plan = shards[0].meta.plan.clone();
    let total = plan.total_shapes();
    let missing: Vec<Shard> = (0..count)
        .map(|index| Shard { index, count })
        .filter(|s| !shards.iter().any(|f| f.shard == *s))
        .collect();
    let mut unfinished = Vec::new();
    for s in &shards {
        let share = s.shard.share_of(total);
        if s.shapes.len() > share {
            return Err(Failure::bad(format!(
                "{}: {} shapes, but shard {} of {total} shapes has {share}",
                s.dir.display(),
                s.shapes.len(),
                s.shard
            )));
        }
        if s.shapes.len() < share {
            unfinished.push((s.shard, s.shapes.len(), share));
        }
    }
    let complete = missing.is_empty() && unfinished.is_empty();
    if !complete && !req.allow_partial {
        let mut why: Vec<String> = missing
            .iter()
            .map(|s| format!("shard {s} missing"))
            .collect();
        why.extend(unfinished.iter().map(|(s, done, share)| {
            format!("shard {s} unfinished ({done} of {share} shapes: resume it)")
        }));
        return Err(Failure::bad(format!(
            "{}; give every shard's folder, or --allow-partial to merge what there is",
            why.join(", ")
        )));
    }
    check_fresh_dest(&req.dest, "merge")?;
    // Position g of the union is row g / N of shard g % N.
    let mut merged: Vec<(ShapeRow, Vec<ConfigRow>)> = Vec::new();
    let mut positions = Vec::new();
    for g in 0..total {
        let Some(s) = shards.iter_mut().find(|s| s.shard.takes(g)) else {
            continue;
        };
        let row = g / count;
        if row < s.shapes.len() {
            let configs = std::mem::take(&mut s.configs[row]);
            merged.push((s.shapes[row].clone(), configs));
            positions.push(g);
        }
    }
    check_against_lists(&plan.shape_lists, &merged, &positions, total)?;
    std::fs::create_dir_all(&req.dest)
        .map_err(|e| Failure::runtime(format!("--out {}: {e}", req.dest.display())))?;
    let configs: Vec<ConfigRow> = merged.iter().flat_map(|m| m.1.iter().cloned()).collect();
    let shapes: Vec<ShapeRow> = merged.into_iter().map(|m| m.0).collect();
    let write_err =
        |p: PathBuf| move |e: std::io::Error| Failure::runtime(format!("{}: {e}", p.display()));
    let cfg = req.dest.join(files::CONFIGS_CSV);
    files::write_csv(&cfg, &configs).map_err(write_err(cfg.clone()))?;
    let shp = req.dest.join(files::SHAPES_CSV);
    files::write_csv(&shp, &shapes).map_err(write_err(shp.clone()))?;
    let meta = SweepMeta {
        plan,
        run: merged_run(&shards, total - shapes.len(), req.command.clone()),
        shard: None,
        shard_runs: shards
            .iter()
            .map(|s| ShardRun {
                shard: s.shard,
                run: s.meta.run.clone(),
            })
            .collect(),
        pass_runs: Vec::new(),
    };
    Ok(MergeOutcome {
        meta,
        shards: shards.len(),
        shapes: shapes.len(),
        missing,
        unfinished,
    })
}

/// Each merged shape belongs to the list its position falls in; a complete merge matches
/// every list's digest.
fn check_against_lists(
    lists: &[super::sweep_meta::ListMeta],
    merged: &[(ShapeRow, Vec<ConfigRow>)],
    positions: &[usize],
    total: usize,
) -> Result<(), Failure> {
    let mismatch = |what: String| {
        Failure::bad(format!(
            "the merged shapes do not match the sweep's shape lists ({what}): the shard folders are not of one sweep"
        ))
    };
    let mut start = 0;
    for list in lists {
        let end = start + list.shapes;
        let rows: Vec<&ShapeRow> = positions
            .iter()
            .zip(merged)
            .filter(|(g, _)| (start..end).contains(*g))
            .map(|(_, m)| &m.0)
            .collect();
        if let Some(r) = rows.iter().find(|r| r.set != list.set) {
            return Err(mismatch(format!("set {} where {} stands", r.set, list.set)));
        }
        if positions.len() == total {
            let digest = list_digest(
                rows.iter()
                    .map(|r| (r.m, r.n, r.k, r.dtype.as_str(), r.label.as_str())),
            );
            if digest != list.digest {
                return Err(mismatch(format!("digest of {}", list.set)));
            }
        }
        start = end;
    }
    Ok(())
}
