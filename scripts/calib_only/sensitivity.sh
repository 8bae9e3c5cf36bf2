#!/usr/bin/env bash
# Issue 14: sensitivity of the calibration-only tier to the terms no calibration measures
# yet (results/calib-only/sensitivity.txt). NOT calibration-only: each run adds one
# hand-set value to results/calib-only/{h100,h200}-{max,sum}.json plus the kernel/timing
# context, to show what a measurement of that term could buy. Values are round numbers
# or other measured latencies, chosen before scoring, never searched.
set -euo pipefail
cd "$(dirname "$0")/../.."
R=results/calib-only
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
with() {  # with BASE NAME KEY=VALUE...: $T/{h100,h200}-NAME.json
    local base=$1 name=$2; shift 2
    for g in h100 h200; do
        python3 - "$R/$g-$base.json" "$T/$g-$name.json" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cal = {m["name"]: m["median"] for m in json.load(open(
    "results/h100/calibrate-2026-11-23.json" if "h100" in sys.argv[1] else "calibrations/h200.json"))["measurements"]}
for kv in sys.argv[3:]:
    k, v = kv.split("=")
    d["constants"][k] = cal[v] if v in cal else float(v)
json.dump(d, open(sys.argv[2], "w"))
PY
    done
}
score() {
    echo "\$ score_sweeps.py '$1' (overrides: $2)"
    python3 scripts/calib_only/score_sweeps.py "$1" --h100 "$T/h100-$2.json" --h200 "$T/h200-$2.json" \
        --triton $R/triton-sweep-context.json --origami $R/origami-bench-context.json
    echo
}
with max lat_l2 tp_load_latency_cycles=l2_hit_latency_cycles
score "max, load round trip = L2 hit latency" lat_l2
with max wg1 wgmma_speedup=1
score "max, wgmma_speedup 1 (no wgmma advantage)" wg1
with max p2 tp_smooth_exponent=2
score "p-norm 2 (between max and sum)" p2
with max p4 tp_smooth_exponent=4
score "p-norm 4" p4
with sum il_l2 tp_iter_latency_cycles=l2_hit_latency_cycles
score "sum, per-iteration latency = L2 hit latency" il_l2
with sum il100 tp_iter_latency_cycles=100
score "sum, per-iteration latency 100 cycles" il100
with sum il300 tp_iter_latency_cycles=300
score "sum, per-iteration latency 300 cycles" il300
with sum ic100 tp_iter_cycles=100
score "sum, per-iteration shared issue cost 100 cycles" ic100
with sum ic300 tp_iter_cycles=300
score "sum, per-iteration shared issue cost 300 cycles" ic300
