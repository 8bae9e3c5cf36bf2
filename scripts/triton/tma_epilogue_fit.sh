#!/usr/bin/env bash
# The triton-tma family's last epilogue of a persistent program taken out of the overlap
# (issue 11; docs/triton-tma.md, "The last epilogue is exposed"), CPU only. Starts from the
# zero-filled rows' fit (scripts/triton/tma_padding_fit.sh, run here into target/) and scores
# tp_exposed_epilogue W in {0, 0.5, 1, 1.5, 2} on the two H200 probes of shapes outside the
# seed and LLM lists (results/h200/triton-tma/lockstep-probe/run and lockstep-probe2/run,
# scripts/triton/lockstep_probe.sh; both input types): the probes choose, by the mean RMS of
# their per-shape log residuals (scripts/triton/probe_residuals.py) among the weights whose
# mean Kendall tau is not below W = 0's (the term must not rank worse). The H100's padding
# probes, the seed list (fit set) and the LLM list (held out; four timings) are printed
# beside, never used to choose. The chosen weight is written to $OUT_FILE (default
# target/tma-epilogue/h100-triton-tma.json); scripts/triton/tma_edge_fit.sh starts from it.
# Usage: scripts/triton/tma_epilogue_fit.sh   (after cargo build --release; about 3 min)
set -euo pipefail
bench=target/release/origami-bench
work=target/tma-epilogue
out_file=${OUT_FILE:-$work/h100-triton-tma.json}
. scripts/triton/tma_fit_lib.sh
tma_chain tma_epilogue_fit.sh scripts/triton/tma_padding_fit.sh padding.json
probes=()
for p in lockstep-probe lockstep-probe2; do
  for dt in fp16 bf16; do probes+=("results/h200/triton-tma/$p/run h200 $dt $p/$dt"); done
done
echo "# scripts/triton/tma_epilogue_fit.sh: the exposed last epilogue, chosen on the H200 probes"
declare -A tau rms
for w in 0 0.5 1 1.5 2; do
  tma_variant "$work/padding.json" "$work/w$w.json" "tp_exposed_epilogue=$w"
  read -r tau[$w] rms[$w] line <<<"$(tma_probe_means "$work/w$w.json" "${probes[@]}")"
  echo "## W $w: H200 probes mean tau ${tau[$w]} rms ${rms[$w]} ( $line)"
  for p in padding-probe padding-probe2; do
    echo "   H100 $p fp16: $(tma_probe "$work/w$w.json" "results/h100/triton-tma/$p/run" h100-sxm fp16)"
  done
  tma_score_lists "$work/w$w.json" "W $w"
done
best=0
for w in 0.5 1 1.5 2; do
  if awk -v t="${tau[$w]}" -v t0="${tau[0]}" -v r="${rms[$w]}" -v rb="${rms[$best]}" \
      'BEGIN {exit !(t >= t0 && r < rb)}'; then
    best=$w
  fi
done
tma_write_choice "$best"
