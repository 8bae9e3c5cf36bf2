#!/usr/bin/env bash
# The fitted tiers of the triton and origami families (calibrations/fitted/h200-triton-
# throughput.json, h200-origami.json) with and without the measured L2 share of 32-byte rows
# (tp_l2_row_efficiency_32b, origami-calibrate --only l2-rows), lookups with `origami-bench
# refit --rounds 0` on the H200 sweeps they were fitted on (seed list; LLM list held out)
# and on the H100 sweeps nothing was fitted on (CPU only). "without" is the committed file
# less that one constant.
# Usage: scripts/calib_only/score_fitted_rows.sh   (after cargo build --release)
set -euo pipefail
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "score_fitted_rows.sh: no $bench (cargo build --release)" >&2; exit 2; }
work=target/fitted-rows
rm -rf "$work"
. scripts/calib_only/h100_sweeps.sh
h100_sweep_configs "$work/h100-triton" "$work/h100-origami"
for fam in triton origami; do
  file=calibrations/fitted/h200-$fam.json
  [[ $fam == triton ]] && file=calibrations/fitted/h200-triton-throughput.json
  h200=results/h200/bench
  [[ $fam == triton ]] && h200=results/h200/triton-table/fit
  set_h100=check_shapes
  [[ $fam == triton ]] && set_h100=llm_shapes_shapes
  python3 - "$file" "$work/$fam-without.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["constants"].pop("tp_l2_row_efficiency_32b", None)
json.dump(d, open(sys.argv[2], "w"))
PY
  for which in with without; do
    f=$file
    [[ $which == without ]] && f=$work/$fam-without.json
    echo "# $fam, $which the row share ($f)"
    TRITONBLAS_HW_PARAMS=$f "$bench" refit --out "$h200" --fit-set seed_shapes --family "$fam" \
      --gpu h200 --rounds 0 2>&1 | grep -E '^(fit set|held out), before  ' | grep -v oracle |
      sed 's/^/H200 /'
    TRITONBLAS_HW_PARAMS=$f "$bench" refit --out "$work/h100-$fam" --fit-set "$set_h100" \
      --family "$fam" --gpu h100-sxm --rounds 0 2>&1 | grep -m1 'fit set, before  ' |
      sed 's/^fit set/H100 (held out)/'
  done
done
