#!/usr/bin/env bash
# Brute force of the hopper family over the seed shapes on the device (fp16), with the
# project's runner: `origami-bench sweep --family hopper`, a time budget, no plots (made
# later on the CPU with `origami-bench report`). origami-bench carried as
# target/devbin/origami-bench.xz. Usage: scripts/hopper/sweep_seed.sh [BUDGET_S]
set -u
[ -x target/devbin/origami-bench ] || (cd target/devbin && xz -d -f origami-bench.xz && chmod +x origami-bench)
target/devbin/origami-bench sweep --shapes "data/${2:-seed}_shapes.csv" --family hopper \
    --dtype fp16 --out "$OUT/sweep-${2:-seed}" --time-budget-s "${1:-480}" --no-plots --seed 20261126
ls -la "$OUT/sweep-${2:-seed}"
