#!/usr/bin/env bash
# Brute force of the hopper family over a shape list on the device, with the project's
# runner: `origami-bench sweep --family hopper` (every feasible config, swapped launches
# included where the family allows them), a time budget, no plots (made later on the CPU
# with `origami-bench report`). origami-bench carried as target/devbin/origami-bench.xz;
# the run's folder comes back tarred ($OUT/sweep-LIST[-DTYPE].tgz, with gpu.txt and an
# `nvidia-smi dmon` log). Usage: scripts/hopper/sweep_list.sh [BUDGET_S] [LIST] [DTYPE]
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
list=${2:-seed}
dtype=${3:-fp16}
name="sweep-$list"
[ "$dtype" = fp16 ] || name="$name-$dtype"
run_folder "$name"
target/devbin/origami-bench sweep --shapes "data/${list}_shapes.csv" --family hopper \
    --dtype "$dtype" --out "$OUT/$name" --time-budget-s "${1:-480}" --no-plots --seed 20261126 \
    2>&1 | tee "$OUT/$name/log.txt"
close_folder "$name"
ls -la "$OUT"
