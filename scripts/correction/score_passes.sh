#!/usr/bin/env bash
# Score the embedded hopper correction on the held-out LLM list against each pass of the
# committed stmatrix sweep and against their per-launch median (CPU only): the two passes of
# each type joined by `origami-bench passes` under target/correction/hopper-passes, then
# `origami-bench fit-correction --score embedded` on the seed sweep plus pass 1, pass 2 and
# the joined passes. Report: results/h100/correction/hopper-passes.txt, the joined
# reference's per-shape scores: results/h100/correction/hopper-passes-per-shape.csv.
# Usage: scripts/correction/score_passes.sh   (after cargo build --release)
set -euo pipefail
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "score_passes.sh: no $bench (cargo build --release)" >&2; exit 2; }
sweeps=results/h100/hopper/sweep-stmatrix
work=target/correction/hopper-passes
rm -rf "$work"
mkdir -p "$work" results/h100/correction
unpack() { # FOLDER DEST: a committed sweep folder with its configs.csv unzipped
  mkdir -p "$2"
  cp "$1"/{shapes.csv,summary.json} "$2"/
  zcat "$1/configs.csv.gz" >"$2/configs.csv"
}
for t in llm llm-bf16; do
  unpack "$sweeps/$t" "$work/pass1-$t"
  unpack "$sweeps/$t-pass2" "$work/pass2-$t"
  "$bench" passes --no-plots --out "$work/joined-$t" "$work/pass1-$t" "$work/pass2-$t" \
    >/dev/null 2>"$work/joined-$t.log"
done
report=results/h100/correction/hopper-passes.txt
{
  echo "# scripts/correction/score_passes.sh: the embedded correction against each held-out reference"
  for t in llm llm-bf16; do grep "joined 2 passes" "$work/joined-$t.log" | sed "s|$work/||"; done
} >"$report"
for ref in pass1 pass2 joined; do
  d=$work/score-$ref
  mkdir -p "$d"
  zcat "$sweeps/seed/configs.csv.gz" >"$d/configs.csv"
  for t in llm llm-bf16; do tail -n +2 "$work/$ref-$t/configs.csv" >>"$d/configs.csv"; done
  per_shape=()
  [[ $ref == joined ]] && per_shape=(--per-shape results/h100/correction/hopper-passes-per-shape.csv)
  echo "## held-out reference: $ref" >>"$report"
  "$bench" fit-correction --out "$d" --fit-set seed_shapes --family hopper --gpu h100-sxm \
    --score embedded "${per_shape[@]}" | sed "s|$d/||" >>"$report"
done
cat "$report"
