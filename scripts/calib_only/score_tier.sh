#!/usr/bin/env bash
# The calibration-only tier (--calibration-only) of the triton and origami families on the
# H100 sweeps that nothing was fitted on (CPU only): results/h100/triton-auto/classic2 (16 LLM
# shapes, triton) and results/h100/device-check/whole (6 shapes, origami), lookups with
# `origami-bench refit --rounds 0 --calibration-only` under each calibration document given
# (TRITONBLAS_HW_PARAMS), and under the same document without its l2-rows and dram-rows
# curves (the row efficiencies at 1), so that the curves' own effect reads off beside it.
# GPU=h200 scores the H200 sweeps instead (results/h200/triton-table/fit, 23 seed and 12 LLM
# shapes, and results/h200/bench, 23 seed and 49 LLM shapes: the fitted tiers' fit sets, on
# which the tier, fitting nothing, is as held out as on the others).
# Usage: [GPU=h200] scripts/calib_only/score_tier.sh DOC.json...   (after cargo build --release)
set -euo pipefail
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "score_tier.sh: no $bench (cargo build --release)" >&2; exit 2; }
[[ $# -ge 1 ]] || { echo "usage: scripts/calib_only/score_tier.sh DOC.json..." >&2; exit 2; }
for doc in "$@"; do
  [[ -f $doc ]] || { echo "score_tier.sh: no $doc" >&2; exit 2; }
done
work=target/calib-only-tier
rm -rf "$work"
. scripts/calib_only/h100_sweeps.sh
h100_sweep_configs "$work/triton" "$work/origami"
score() { # DOC: one line per family (and list)
  if [[ ${GPU:-h100} == h200 ]]; then
    for fam in "triton results/h200/triton-table/fit" "origami results/h200/bench"; do
      set -- $fam
      TRITONBLAS_HW_PARAMS=$doc "$bench" refit --out "$2" --fit-set seed_shapes --family "$1" \
        --gpu h200 --rounds 0 --calibration-only 2>&1 | grep -E '^(fit set|held out), before  ' |
        grep -v oracle | sed -e "s/^fit set, before */$1 seed /" -e "s/^held out, before */$1 LLM  /"
    done
    return
  fi
  for fam in "triton llm_shapes_shapes" "origami check_shapes"; do
    set -- $fam
    printf '%-8s ' "$1"
    TRITONBLAS_HW_PARAMS=$doc "$bench" refit --out "$work/$1" --fit-set "$2" --family "$1" \
      --gpu h100-sxm --rounds 0 --calibration-only 2>&1 | grep -m1 'fit set, before  ' |
      sed 's/fit set, before *//'
  done
}
for doc in "$@"; do
  echo "# $doc"
  score
  python3 - "$doc" "$work/norows.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
curves = d.get("curves", {})
had = [c for c in ("l2_read_gbps_vs_row_bytes", "dram_read_gbps_vs_row_bytes")
       if curves.pop(c, None) is not None]
json.dump(d, open(sys.argv[2], "w"))
print(f"# the same without its {' and '.join(had)} curve(s)" if had
      else "# (no row curve in it: the same)")
PY
  doc=$work/norows.json score
done
