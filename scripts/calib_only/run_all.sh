#!/usr/bin/env bash
# Issue 14: every score of the calibration-only study, with the command that printed it
# (results/calib-only/scores.txt). Needs `cargo build --release` (origami-bench) and the
# H100 calibration (default: the shared 2026-11-23 file; results/h100/device-check/
# calibrate.json gives the same constants within 0.6 %).
set -euo pipefail
cd "$(dirname "$0")/../.."
H100_CAL=${H100_CAL:-results/h100/calibrate-2026-11-23.json}
S="python3 scripts/calib_only/score_sweeps.py"
R=results/calib-only
run() { echo "\$ $*"; "$@"; echo; }
run $S "A. published latency model (presets; no override)"
run $S "B. published latency model, H100 measured parameters" --h100 "$H100_CAL" --only h100
run $S "C. fitted tier (embedded H200 fits; presets)" \
    --triton calibrations/fitted/h200-triton-throughput.json --origami calibrations/fitted/h200-origami.json
run $S "D. fitted tier, H100 measured parameters" --h100 "$H100_CAL" \
    --triton calibrations/fitted/h200-triton-throughput.json --origami calibrations/fitted/h200-origami.json --only h100
run $S "E. calibration-only, bounds by their largest (max)" --h100 $R/h100-max.json --h200 $R/h200-max.json
run $S "F. calibration-only, max, + kernel/timing context (masked rows; L2-resident for the triton sweeps)" \
    --h100 $R/h100-max.json --h200 $R/h200-max.json --triton $R/triton-sweep-context.json --origami $R/origami-bench-context.json
run $S "G. calibration-only, bounds summed (no overlap)" --h100 $R/h100-sum.json --h200 $R/h200-sum.json
run $S "H. calibration-only, summed, + kernel/timing context" \
    --h100 $R/h100-sum.json --h200 $R/h200-sum.json --triton $R/triton-sweep-context.json --origami $R/origami-bench-context.json
