#!/usr/bin/env bash
# Score the triton-tma model and its learned correction (fitted on the dense seed sweep, as
# scripts/correction/fit.sh triton-tma does, not embedded) on the held-out LLM list against
# three references (CPU only): the committed single pass (sweep-llm), the three-pass sweep
# (llm-passes3: `tma_sweep.py --passes 3`, each launch's median) and the median of all four
# passes (scripts/triton/passes_reference.py). Model alone: `origami-bench refit --rounds 0`
# per type (bf16 beside the seed sweep that has bf16 rows); corrected: `origami-bench
# fit-correction` on the dense seed sweep plus each reference. Report:
# results/h100/correction/triton-tma-passes.txt.
# Usage: scripts/correction/score_tma_passes.sh   (after cargo build --release)
set -euo pipefail
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "score_tma_passes.sh: no $bench (cargo build --release)" >&2; exit 2; }
tma=results/h100/triton-tma
work=target/correction/tma-passes
rm -rf "$work"
mkdir -p "$work" results/h100/correction
report=results/h100/correction/triton-tma-passes.txt
{
  echo "# scripts/correction/score_tma_passes.sh: held-out references for the triton-tma family"
  python3 scripts/triton/passes_reference.py "$tma/sweep-llm" "$tma/llm-passes3" "$work"
} >"$report"
llm_rows() { # REF: the reference's LLM rows without a header
  case $1 in
    first) zcat "$tma/sweep-llm/configs.csv.gz" | tail -n +2 ;;
    *) tail -n +2 "$work/$1.csv" ;;
  esac
}
export TRITONBLAS_HW_PARAMS=calibrations/fitted/h100-triton-tma.json
for ref in first passes all; do
  echo "## held-out reference: $ref" >>"$report"
  for dt in fp16 bf16; do
    d=$work/model-$ref-$dt
    mkdir -p "$d"
    seed=$tma/dense-seed
    [[ $dt == bf16 ]] && seed=$tma/sweep-seed
    { zcat "$seed/configs.csv.gz"; llm_rows "$ref"; } >"$d/configs.csv"
    echo "model alone, $dt: $("$bench" refit --out "$d" --fit-set seed_shapes --family triton-tma \
      --gpu h100-sxm --rounds 0 --dtype "$dt" 2>&1 | grep -m1 'held out, before  ')" >>"$report"
  done
  d=$work/corrected-$ref
  mkdir -p "$d"
  { zcat "$tma/dense-seed/configs.csv.gz"; llm_rows "$ref"; } >"$d/configs.csv"
  env -u TRITONBLAS_HW_PARAMS "$bench" fit-correction --out "$d" --fit-set seed_shapes \
    --family triton-tma --gpu h100-sxm 2>/dev/null | grep -E "^chosen|shapes (fp16|bf16) \(" >>"$report"
done
cat "$report"
