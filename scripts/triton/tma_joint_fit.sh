#!/usr/bin/env bash
# The triton-tma family's two probe-chosen weights chosen together (issue 11; docs/triton-tma.md,
# "Both weights chosen again"), CPU only. The edge fit (tma_edge_fit.sh) and the fragment fit
# (tma_fragment_fit.sh) each chose one weight with the other fixed; passing over them in turn
# (tma_second_pass.sh) does not climb, because each pass's rule compares with its own term's
# absence. Here every pair of tp_zero_row_copy_weight E in {1, 1.25, 1.5, 1.75, 2, 2.5, 3} and
# tp_fragment_read_weight F in {1, 0.75, 0.5, 0.25, 0} starts from the fragment fit's file, the
# other constants refitted on the seed list at each pair (`tma_refit`), and the eight probes of
# shapes outside the seed and LLM lists (tma_probe_specs power) choose by the rule of both fits
# applied once to the pair: the highest mean Kendall tau among the pairs whose mean RMS of
# per-shape log residuals is not above the pair without both terms (E 1, F 1). The seed list
# (fit set) and the LLM list (held out; four timings) are printed beside, never used to
# choose. The choice is written to $OUT_FILE (default target/tma-joint/h100-triton-tma.json);
# the report: results/h100/triton-tma/joint-fit/fit.txt.
# Usage: scripts/triton/tma_joint_fit.sh   (after cargo build --release; about 10 min)
set -euo pipefail
bench=target/release/origami-bench
work=target/tma-joint
out_file=${OUT_FILE:-$work/h100-triton-tma.json}
. scripts/triton/tma_fit_lib.sh
tma_chain tma_joint_fit.sh scripts/triton/tma_fragment_fit.sh fragment.json
mapfile -t probes < <(tma_probe_specs power)
echo "# scripts/triton/tma_joint_fit.sh: the edge and fragment weights chosen together on the probes"
declare -A tau rms
pairs=()
for e in 1 1.25 1.5 1.75 2 2.5 3; do
  for f in 1 0.75 0.5 0.25 0; do
    p=e$e-f$f
    pairs+=("$p")
    tma_refit_candidate "$p" "edge $e, fragment $f" "$work/fragment.json" \
      "tp_zero_row_copy_weight=$e" "tp_fragment_read_weight=$f"
  done
done
echo "# the probes' means, edge by fragment (tau / rms)"
for p in "${pairs[@]}"; do echo "   $p ${tau[$p]} ${rms[$p]}"; done
best=$(tma_best_on_probes "${pairs[@]}")
tma_write_choice "$best"
