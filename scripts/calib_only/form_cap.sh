#!/usr/bin/env bash
# Issue 14: how far the calibration-only tier's form can go (results/calib-only/form-cap.txt).
# NOT calibration-only: the tier of the H100's full calibration (both row curves) is scored
# on the H100 sweeps with hand-set values for the three terms a K iteration's fixed cost
# and the stage round trip are made of (tp_iter_cycles, tp_iter_latency_cycles,
# tp_load_latency_cycles; the document's `constants` win over the derived ones), then with
# the bounds combined by their 2- and 4-norm instead of their sum. A grid of round values
# set before scoring: the best cell says what any measurement of those terms could buy
# the tier as its bounds are combined today, not a value to adopt.
# Usage: scripts/calib_only/form_cap.sh   (after cargo build --release; CPU only, about 20 s)
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "form_cap.sh: no $bench (cargo build --release)" >&2; exit 2; }
doc=results/h100/calibrate-rows-2026-11-27.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. scripts/calib_only/h100_sweeps.sh
h100_sweep_configs "$work/triton" "$work/origami"
cell() { # JSON of constants -> "triton min tau | origami min tau"
  python3 - "$doc" "$work/doc.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["constants"] = json.loads(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
  local out=""
  for fam in "triton llm_shapes_shapes" "origami check_shapes"; do
    set -- $fam
    out+=$(TRITONBLAS_HW_PARAMS=$work/doc.json "$bench" refit --out "$work/$1" --fit-set "$2" \
      --family "$1" --gpu h100-sxm --rounds 0 --calibration-only 2>&1 |
      grep -m1 'fit set, before  ' | sed -E 's/.*min ([0-9.]+)%.*tau mean ([0-9.]+)/\1 % \2/')
    out+="   "
  done
  echo "$out"
}
echo "# scripts/calib_only/form_cap.sh: the calibration-only tier of $doc on the H100 sweeps"
echo "# (triton: results/h100/triton-auto/classic2, 16 shapes; origami: results/h100/device-check/whole, 6)"
echo "# with hand-set values (NOT calibration-only). Columns: A/BF minimum and tau mean, triton then origami."
printf '%-10s %-10s %-10s %-6s  %s\n' iter_cyc iter_lat load_lat norm "triton: min tau    origami: min tau"
for p in 1 2 4; do
  for it in 0 50 100; do
    for il in 24 150 300; do
      for ll in 698 1000 1500 2383; do
        [[ $p != 1 && $it != 0 ]] && continue
        c="{\"tp_smooth_exponent\": $p, \"tp_iter_cycles\": $it, \"tp_iter_latency_cycles\": $il, \"tp_load_latency_cycles\": $ll}"
        printf '%-10s %-10s %-10s %-6s  %s\n' "$it" "$il" "$ll" "p$p" "$(cell "$c")"
      done
    done
  done
done
