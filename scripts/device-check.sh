#!/usr/bin/env bash
# End-to-end check of every GPU path on a device machine, after a change that moves code:
# calibrate, a run of the model's pick, and a small sweep done once whole and once as two
# shards merged back. Binaries come from $BIN (default .device-bin, built here with
# `cargo build --release`); everything lands in $1 (default ./device-check).
#   scripts/device-check.sh OUTDIR
set -uo pipefail
BIN=${BIN:-.device-bin}
OUT=${1:-device-check}
mkdir -p "$OUT"
export ORIGAMI_CACHE_DIR=${ORIGAMI_CACHE_DIR:-/tmp/origami-cache}
shapes="$OUT/check_shapes.csv"
printf 'M,N,K\n512,512,512\n1024,1024,1024\n4096,4096,4096\n1,6144,4096\n4100,576,7168\n8192,8192,8192\n' > "$shapes"
step() { echo "== $*"; "$@"; echo "exit $?"; }
{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv
  step "$BIN/origami-calibrate" --runs 3 --output "$OUT/calibrate.json"
  step "$BIN/origami-bench" run 4096 4096 4096 --pick
  step "$BIN/origami-bench" run 4096 4096 4096 --top 3 --format json
  step "$BIN/origami-bench" sweep --shapes "$shapes" --seed 7 --out "$OUT/whole"
  step "$BIN/origami-bench" sweep --shapes "$shapes" --seed 7 --shard 0/2 --out "$OUT/shard0"
  step "$BIN/origami-bench" sweep --shapes "$shapes" --seed 7 --shard 1/2 --out "$OUT/shard1"
  step "$BIN/origami-bench" merge --out "$OUT/merged" "$OUT/shard1" "$OUT/shard0"
  for d in whole merged; do
    echo "== $d: shapes in order, pick, best"
    cut -d, -f1-8 "$OUT/$d/shapes.csv"
  done
} 2>&1 | tee "$OUT/log.txt"
