#!/usr/bin/env bash
# Scores a brute force of the triton-tma family (scripts/triton/device_brute_force.sh's seed,
# llm and unaligned folders under DIR) against issue 11's goals, CPU only: the family's best
# over cuBLAS (scripts/triton/tma_best_vs_cublas.py), and the picks of the family's file
# (calibrations/fitted/h100-triton-tma.json, fitted on the H100's seed list; the learned
# correction is the H100's and is not applied) by lookup in the sweep, A/BF and Kendall tau
# (`origami-bench refit --rounds 0`), fp16 and bf16: the seed and LLM lists, then the
# unaligned shapes. Writes DIR/score.txt; then a learned correction fitted on this sweep's seed
# list (fp16) by the H100's recipe (`origami-bench fit-correction`, cross-validation over the seed
# shapes; not written, not embedded) and scored on the rest: DIR/correction.txt.
# Usage: scripts/triton/score_brute_force.sh DIR GPU   (GPU: h200 or h100-sxm; after cargo build --release)
set -euo pipefail
dir=${1:-}
gpu=${2:-}
if [[ -z $dir || -z $gpu ]]; then
  echo "usage: scripts/triton/score_brute_force.sh DIR GPU (h200 or h100-sxm)" >&2; exit 2
fi
for list in seed llm unaligned; do
  [[ -f $dir/$list/run/configs.csv.gz ]] || { echo "score_brute_force.sh: no $dir/$list/run/configs.csv.gz" >&2; exit 2; }
done
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "score_brute_force.sh: no $bench (cargo build --release)" >&2; exit 2; }
work=target/tma-brute-force
rm -rf "$work"
mkdir -p "$work/lists" "$work/unaligned"
{ zcat "$dir/seed/run/configs.csv.gz"; zcat "$dir/llm/run/configs.csv.gz" | tail -n +2; } >"$work/lists/configs.csv"
zcat "$dir/unaligned/run/configs.csv.gz" >"$work/unaligned/configs.csv"
export TRITONBLAS_HW_PARAMS=calibrations/fitted/h100-triton-tma.json
{
  for list in llm seed unaligned; do
    echo "# python3 scripts/triton/tma_best_vs_cublas.py $dir/$list/run --min-m 1024 --min-m 1"
    python3 scripts/triton/tma_best_vs_cublas.py "$dir/$list/run" --min-m 1024 --min-m 1
  done
  for dt in fp16 bf16; do
    echo "# the picks, $dt: origami-bench refit --fit-set seed_shapes --family triton-tma --gpu $gpu --rounds 0 --dtype $dt"
    "$bench" refit --out "$work/lists" --fit-set seed_shapes --family triton-tma --gpu "$gpu" \
      --rounds 0 --dtype "$dt" 2>&1 | grep -E '^(fit set|held out), before  ' | grep -v oracle |
      sed -e 's/^fit set, before */seed (fit set on the H100)  /' -e 's/^held out, before */LLM (held out)  /'
    echo "# the picks, $dt, unaligned shapes: the same with --fit-set listed"
    "$bench" refit --out "$work/unaligned" --fit-set listed --family triton-tma --gpu "$gpu" \
      --rounds 0 --dtype "$dt" 2>&1 | grep -m1 '^fit set, before  ' | sed 's/^fit set, before */unaligned  /'
  done
} | tee "$dir/score.txt"
"$bench" fit-correction --out "$work/lists" --fit-set seed_shapes --family triton-tma --gpu "$gpu" \
  2>/dev/null >"$dir/correction.txt"
grep -E '^(chosen|seed_shapes|llm_shapes)' "$dir/correction.txt"
