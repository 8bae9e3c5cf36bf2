#!/usr/bin/env bash
# The triton-tma family's weight of wgmma's operand reads in the shared-memory term (issue 11;
# docs/triton-tma.md, "What a fragment read costs"), CPU only. Starts from the edge tiles' fit
# (scripts/triton/tma_edge_fit.sh, run here into target/), sets tp_fragment_read_weight W in
# {1 (the file before), 0.75, 0.5, 0.25, 0}, refits the other constants on the seed list at
# each W (tma_refit: `origami-bench refit --rounds 6 --tau-weight 1`, the hand-set knobs and W
# held) and scores each on the probes of shapes outside the seed and LLM lists: the H200
# tile-pair, lockstep (fp16 and bf16) and power-cap probes and the H100 padding probes. The
# probes choose, by the edge fit's rule: the highest mean Kendall tau among the weights whose
# mean RMS of per-shape log residuals is not above W = 1's. The seed list (fit set) and the
# LLM list (held out; four timings) are printed beside, never used to choose. The chosen file
# is written to $OUT_FILE (default target/tma-fragment/h100-triton-tma.json); that file is the
# embedded calibrations/fitted/h100-triton-tma.json (the report:
# results/h100/triton-tma/fragment-weight/fit.txt).
# Usage: scripts/triton/tma_fragment_fit.sh   (after cargo build --release; about 5 min)
set -euo pipefail
bench=target/release/origami-bench
work=target/tma-fragment
out_file=${OUT_FILE:-$work/h100-triton-tma.json}
. scripts/triton/tma_fit_lib.sh
tma_chain tma_fragment_fit.sh scripts/triton/tma_edge_fit.sh edge.json
mapfile -t probes < <(tma_probe_specs power)
echo "# scripts/triton/tma_fragment_fit.sh: the weight of wgmma's operand reads, chosen on the probes"
declare -A tau rms
weights=(1 0.75 0.5 0.25 0)
for w in "${weights[@]}"; do
  tma_refit_candidate "$w" "W $w" "$work/edge.json" "tp_fragment_read_weight=$w"
done
best=$(tma_best_on_probes "${weights[@]}")
tma_write_choice "$best"
