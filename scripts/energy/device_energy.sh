#!/usr/bin/env bash
# Device only (issue 15). Stage `calib`: the energy costs (`origami-calibrate --only
# clock,energy`), then `origami-bench run --energy-s` checks of the queued energy window
# (4096^3 and 8192^3, the hopper pick and cuBLAS; 8192^3 again with a 5 s window, the
# power-capped regime). Stage `seed` / `llm`: a sweep of 8 configs spread over the hopper
# family's order per shape (`--spread 8`, no screen, every config fully timed) with
# `--energy-s 0.5`. `nvidia-smi dmon` logs power and clocks alongside. Binaries carried as
# target/devbin/*.xz; everything goes to $OUT. Usage: device_energy.sh STAGE [BUDGET_S];
# ENERGY_S sets the sweep's window (default 0.5 s), SHARD=I/N runs one shard of the list,
# RESUME_FROM=DIR (a committed folder of the same sweep, cut by its budget) resumes it: its
# configs.csv, shapes.csv and summary.json are copied into the output folder first.
set -u
STAGE=${1:?stage: calib, seed or llm}
BUDGET=${2:-480}
(cd target/devbin && for b in origami-bench origami-calibrate; do
    [ -x "$b" ] || { xz -d -f -k "$b.xz" && chmod +x "$b"; }
done)
B=target/devbin/origami-bench
C=target/devbin/origami-calibrate
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,enforced.power.limit,power.default_limit --format=csv > "$OUT/gpu-$STAGE.txt"
(nvidia-smi dmon -s pc -d 1 > "$OUT/dmon-$STAGE.txt" 2>&1 &)
case "$STAGE" in
calib)
    timeout 200 $C --only clock,energy --allow-unstable > "$OUT/calibrate-energy.json" 2> "$OUT/calibrate-energy.stderr.txt"
    echo "calibrate exit $?" >> "$OUT/calibrate-energy.stderr.txt"
    tail -5 "$OUT/calibrate-energy.stderr.txt"
    for s in 4096 8192; do
        timeout 120 $B run $s $s $s --family hopper --pick --energy-s 1 > "$OUT/run-$s.txt" 2>&1 || echo "exit $?" >> "$OUT/run-$s.txt"
        cat "$OUT/run-$s.txt"
    done
    timeout 150 $B run 8192 8192 8192 --family hopper --pick --energy-s 5 --format json > "$OUT/run-8192-5s.json" 2> "$OUT/run-8192-5s.stderr.txt"
    echo "5 s run exit $?"
    ;;
seed | llm)
    if [ -n "${RESUME_FROM:-}" ]; then
        mkdir -p "$OUT/energy-$STAGE"
        cp "$RESUME_FROM"/configs.csv "$RESUME_FROM"/shapes.csv "$RESUME_FROM"/summary.json "$OUT/energy-$STAGE"/ ||
            { echo "device_energy.sh: RESUME_FROM=$RESUME_FROM: not a sweep folder" >&2; exit 2; }
    fi
    timeout $((BUDGET + 60)) $B sweep --shapes data/${STAGE}_shapes.csv --family hopper --dtype fp16 \
        --spread 8 --screen-cut 0 --energy-s "${ENERGY_S:-0.5}" --out "$OUT/energy-$STAGE" \
        ${SHARD:+--shard "$SHARD"} \
        --time-budget-s "$BUDGET" --no-plots --seed 20261127 > "$OUT/sweep-$STAGE.log" 2>&1
    echo "sweep exit $?"
    tail -3 "$OUT/sweep-$STAGE.log"
    ;;
esac
pkill -f "nvidia-smi dmon" || true
cd "$OUT" && tar czf "energy-$STAGE.tgz" --exclude "energy-$STAGE.tgz" . && echo packed
