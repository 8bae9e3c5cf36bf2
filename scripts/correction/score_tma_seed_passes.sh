#!/usr/bin/env bash
# Fit the triton-tma family on a steadier seed reference and score it against the four-pass
# held-out reference (CPU only). The seed list's times are the median of the single-pass
# sweep (sweep-seed), three more passes (seed-passes3: `tma_sweep.py --passes 3`) and, where
# it timed the launch, the dense seed sweep (dense-seed): five timings of 2200 launches,
# four of the rest. The held-out times are the median of sweep-llm and llm-passes3. Scored:
# the model alone (`origami-bench refit --rounds 0`), its constants refitted on that seed
# reference (`--rounds 3 --tau-weight 1`, as the committed fit), the learned correction
# fitted on it (`origami-bench fit-correction`), and the correction fitted on the four-pass
# seed reference without the dense sweep. Nothing is written under calibrations/.
# Report: results/h100/correction/triton-tma-seed-passes.txt.
# Usage: scripts/correction/score_tma_seed_passes.sh   (after cargo build --release)
set -euo pipefail
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "score_tma_seed_passes.sh: no $bench (cargo build --release)" >&2; exit 2; }
tma=results/h100/triton-tma
work=target/correction/tma-seed-passes
rm -rf "$work"
mkdir -p "$work"/{five,four,refit} results/h100/correction
report=results/h100/correction/triton-tma-seed-passes.txt
{
  echo "# scripts/correction/score_tma_seed_passes.sh: the triton-tma family on a steadier seed reference"
  echo "## references (the single pass against the three-pass median)"
  python3 scripts/triton/passes_reference.py "$tma/sweep-seed" "$tma/seed-passes3" "$work/seed5" \
    "$tma/dense-seed"
  python3 scripts/triton/passes_reference.py "$tma/sweep-seed" "$tma/seed-passes3" "$work/seed4"
  python3 scripts/triton/passes_reference.py "$tma/sweep-llm" "$tma/llm-passes3" "$work/llm"
} >"$report"
{ cat "$work/seed5/all.csv"; tail -n +2 "$work/llm/all.csv"; } >"$work/five/configs.csv"
{ cat "$work/seed4/all.csv"; tail -n +2 "$work/llm/all.csv"; } >"$work/four/configs.csv"
cp "$work/five/configs.csv" "$work/refit/configs.csv"
{
  echo "## the model alone, and refitted on the seed reference (fp16)"
  TRITONBLAS_HW_PARAMS=calibrations/fitted/h100-triton-tma.json "$bench" refit --out "$work/refit" \
    --fit-set seed_shapes --family triton-tma --gpu h100-sxm --rounds 3 --tau-weight 1 2>&1 |
    grep -E '^(fit set|held out), (before|after) '
  echo "## the learned correction fitted on the five-timing seed reference"
  "$bench" fit-correction --out "$work/five" --fit-set seed_shapes --family triton-tma \
    --gpu h100-sxm 2>/dev/null | grep -E "^chosen|shapes (fp16|bf16) \("
  echo "## the learned correction fitted on the four-pass seed reference (no dense sweep)"
  "$bench" fit-correction --out "$work/four" --fit-set seed_shapes --family triton-tma \
    --gpu h100-sxm 2>/dev/null | grep -E "^chosen|shapes (fp16|bf16) \("
} >>"$report"
cat "$report"
