#!/usr/bin/env bash
# Brute force of the hopper family over a shape list on the device, with the project's
# runner: `origami-bench sweep --family hopper`, a time budget, no plots (made later on the
# CPU with `origami-bench report`), into $OUT/sweep-LIST (fp16) or $OUT/sweep-LIST-DTYPE.
# origami-bench carried as target/devbin/origami-bench.xz.
# Usage: scripts/hopper/sweep_seed.sh [BUDGET_S] [LIST (seed)] [DTYPE (fp16)]
# SWEEP_SEED sets the inputs' random seed (default 20261126; another pass of the same
# launches takes another seed: fresh inputs).
set -u
[ -x target/devbin/origami-bench ] || (cd target/devbin && xz -d -f origami-bench.xz && chmod +x origami-bench)
name="sweep-${2:-seed}"
[ "${3:-fp16}" = fp16 ] || name="$name-$3"
target/devbin/origami-bench sweep --shapes "data/${2:-seed}_shapes.csv" --family hopper \
    --dtype "${3:-fp16}" --out "$OUT/$name" --time-budget-s "${1:-480}" --no-plots --seed "${SWEEP_SEED:-20261126}"
ls -la "$OUT/$name"
