#!/usr/bin/env bash
# Fit the learned correction of a family's model on the H100 seed sweep and score it on the
# held-out LLM sweeps (CPU only): joins the committed sweeps into one configs.csv under
# target/correction/FAMILY, runs `origami-bench fit-correction`, writes the report to
# results/h100/correction/FAMILY.txt and, with --write, the file the selection embeds
# (calibrations/fitted/h100-FAMILY-correction.json).
# FIT_SPACE=compiled fits on every compiled config the seed sweep timed (`--fit-space
# compiled`), its report in results/h100/correction/FAMILY-compiled-space.txt.
# Usage: [FIT_SPACE=compiled] scripts/correction/fit.sh hopper|triton-tma [--write]
# (after cargo build --release)
set -euo pipefail
family=${1:-}
case "$family" in
  hopper) sweeps=(results/h100/hopper/sweep-stmatrix/seed results/h100/hopper/sweep-stmatrix/llm
                  results/h100/hopper/sweep-stmatrix/llm-bf16) ;;
  triton-tma) sweeps=(results/h100/triton-tma/dense-seed results/h100/triton-tma/sweep-llm) ;;
  *) echo "fit.sh: give the family: hopper or triton-tma" >&2; exit 2 ;;
esac
write=()
if [[ "${2:-}" == "--write" ]]; then
  write=(--write "calibrations/fitted/h100-$family-correction.json")
elif [[ -n "${2:-}" ]]; then
  echo "fit.sh: the second argument can only be --write" >&2; exit 2
fi
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "fit.sh: no $bench (cargo build --release)" >&2; exit 2; }
dir=target/correction/$family
mkdir -p "$dir" results/h100/correction
first=1
for s in "${sweeps[@]}"; do
  if [[ $first == 1 ]]; then zcat "$s/configs.csv.gz"; first=0; else zcat "$s/configs.csv.gz" | tail -n +2; fi
done > "$dir/configs.csv"
space=()
report=results/h100/correction/$family.txt
if [[ -n "${FIT_SPACE:-}" ]]; then
  space=(--fit-space "$FIT_SPACE")
  report=results/h100/correction/$family-$FIT_SPACE-space.txt
fi
"$bench" fit-correction --out "$dir" --fit-set seed_shapes --family "$family" --gpu h100-sxm \
  "${space[@]}" "${write[@]}" | tee "$report"
