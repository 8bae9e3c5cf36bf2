#!/usr/bin/env bash
# The triton-tma family's edge tiles: a zero-filled box row copied at W real rows' L2 time in
# the tiles at M's and N's edges (issue 11; docs/triton-tma.md, "Edge tiles copy their
# zero-filled rows"), CPU only. Starts from the last epilogue's fit
# (scripts/triton/tma_epilogue_fit.sh, run here into target/) and scores
# tp_zero_row_copy_weight W in {1 (off), 1.25, 1.5, 1.75, 2, 2.5, 3} on the probes of shapes
# outside the seed and LLM lists: the H200 tile-pair probe (fp16; scripts/triton/tile_pair_probe.sh),
# the two H200 lockstep probes (fp16 and bf16; scripts/triton/lockstep_probe.sh) and the H100
# padding probes (fp16). The probes choose: the highest mean Kendall tau among the weights
# whose mean RMS of per-shape log residuals (scripts/triton/probe_residuals.py) is not above
# W = 1's. The seed list (fit set) and the LLM list (held out; four timings) are printed
# beside, never used to choose. The chosen weight is written to $OUT_FILE (default
# target/tma-edge/h100-triton-tma.json); that file is the embedded
# calibrations/fitted/h100-triton-tma.json (the report: results/h100/triton-tma/edge-tiles/fit.txt).
# Usage: scripts/triton/tma_edge_fit.sh   (after cargo build --release; about 4 min)
set -euo pipefail
bench=target/release/origami-bench
work=target/tma-edge
out_file=${OUT_FILE:-$work/h100-triton-tma.json}
. scripts/triton/tma_fit_lib.sh
tma_chain tma_edge_fit.sh scripts/triton/tma_epilogue_fit.sh epilogue.json
mapfile -t probes < <(tma_probe_specs)
echo "# scripts/triton/tma_edge_fit.sh: zero-filled rows in the edge tiles' copies, chosen on the probes"
declare -A tau rms
weights=(1 1.25 1.5 1.75 2 2.5 3)
for w in "${weights[@]}"; do
  tma_held_candidate "$w" "W $w" "$work/epilogue.json" "tp_zero_row_copy_weight=$w"
done
best=$(tma_best_on_probes "${weights[@]}")
tma_write_choice "$best"
