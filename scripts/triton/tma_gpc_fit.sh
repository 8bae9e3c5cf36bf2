#!/usr/bin/env bash
# The triton-tma family's constants refitted with the GPC merge term of the L2 (issue 11;
# docs/throughput.md, "GPC merge"), CPU only. The shares GPC_MERGE_A and GPC_MERGE_B
# (tp_l2_gpc_merge_a, _b) come from Nsight Compute's counters (scripts/triton/gpc_merge_fit.py),
# never from GEMM times (not knobs of the refit); the block placement is the embedded calibrations/topology/h100-sxm.json.
# References: the median of the four timings of every launch, the seed list (sweep-seed and
# seed-passes3) to fit on, the LLM list (sweep-llm and llm-passes3) held out
# (scripts/triton/passes_reference.py). Variants, each refitted from
# $START_FILE (default results/h100/triton-tma/fit/h100-triton-tma-min-n.json, the family's
# file before the neighbour terms; `origami-bench refit --rounds 6 --tau-weight 1`):
#   free      the merge share set, everything else free
#   min_n=0   the same with tp_wgmma_min_n held at 0 (the fitted 154.9 stood for the shared
#             loads: docs/triton-tma.md)
#   min_n=40  held at the H100's measured 40 (origami-calibrate --only tc-rate)
#   control   min_n held at 0 without the merge term
# The seed list's tau chooses among the first three; the held-out list is printed beside it,
# never used to choose.
# The chosen variant's file is written to $OUT_FILE (default target/tma-gpc/h100-triton-tma.json).
# Usage: GPC_MERGE_A=0.357 GPC_MERGE_B=0.756 scripts/triton/tma_gpc_fit.sh   (after cargo build --release)
set -euo pipefail
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "tma_gpc_fit.sh: no $bench (cargo build --release)" >&2; exit 2; }
merge_a=${GPC_MERGE_A:?set GPC_MERGE_A and GPC_MERGE_B to the shares of scripts/triton/gpc_merge_fit.py}
merge_b=${GPC_MERGE_B:?set GPC_MERGE_B}
work=target/tma-gpc
out_file=${OUT_FILE:-$work/h100-triton-tma.json}
. scripts/triton/tma_fit_lib.sh   # sets $base (START_FILE)
rm -rf "$work"
tma_four_reference
start() { # FILE MIN_N (or "free")
  python3 - "$@" "$merge_a" "$merge_b" <<'PY'
import json, os, sys
out, min_n, merge_a, merge_b = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
d = json.load(open(os.environ["TMA_BASE"]))
d["constants"]["tp_l2_gpc_merge_a"] = merge_a
d["constants"]["tp_l2_gpc_merge_b"] = merge_b
if min_n != "free":
    d["constants"]["tp_wgmma_min_n"] = float(min_n)
json.dump(d, open(out, "w"), indent=4)
PY
}
echo "# scripts/triton/tma_gpc_fit.sh: fp16, four-timing references, tp_l2_gpc_merge_a $merge_a, _b $merge_b"
echo "## the committed file (no merge term)"
tma_score "$base" committed
hold=tp_fragment_read_weight,tp_prologue_loads,tp_dram_scale,tp_l2_active_exponent
best=""
best_tau=-1
for v in free 0 40; do
  h=$hold
  [[ $v == free ]] || h=$hold,tp_wgmma_min_n
  start "$work/start-$v.json" "$v"
  lines=$(tma_refit "$work/start-$v.json" "$work/fit-$v.json" "$h")
  echo "## min_n $v"
  echo "$lines"
  seed_tau=$(tma_seed_tau "$lines")
  if python3 -c "import sys; sys.exit(0 if float('$seed_tau') > float('$best_tau') else 1)"; then
    best=$v
    best_tau=$seed_tau
  fi
done
echo "## control: min_n 0 without the merge term (what the term brings back)"
python3 - "$work/start-control.json" <<'PY'
import json, os, sys
d = json.load(open(os.environ["TMA_BASE"]))
d["constants"]["tp_wgmma_min_n"] = 0.0
json.dump(d, open(sys.argv[1], "w"), indent=4)
PY
tma_refit "$work/start-control.json" "$work/fit-control.json" "$hold,tp_wgmma_min_n"
echo "## chosen: min_n $best (seed tau $best_tau)"
cp "$work/fit-$best.json" "$out_file"
tma_score "$out_file" "bf16, not fitted" --dtype bf16
echo "## written: $out_file"
