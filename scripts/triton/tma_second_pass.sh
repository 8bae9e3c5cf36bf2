#!/usr/bin/env bash
# The triton-tma family's two probe-chosen weights chosen again, each at the other's choice
# (issue 11; docs/triton-tma.md, "Both weights chosen again"), CPU only. The edge fit
# (scripts/triton/tma_edge_fit.sh) chose tp_zero_row_copy_weight with the fragment weight at 1,
# the fragment fit (scripts/triton/tma_fragment_fit.sh) chose tp_fragment_read_weight at the
# edge weight chosen before it; one pass. This script starts from the fragment fit's file (run
# here into target/) and passes over the two in turn until neither moves (at most three
# passes): the edge weight scored as the edge fit scores it (the file's other constants
# held), the fragment weight as the fragment fit does (the other constants refitted on the
# seed list at each weight, `tma_refit`). Both are chosen by the same rule on the same eight
# probes of shapes outside the seed and LLM lists (tma_probe_specs power; tma_best_on_probes:
# the highest mean Kendall tau among the weights whose mean RMS of per-shape log residuals is
# not above the term's absence). The seed list (fit set) and the LLM list (held out; four
# timings) are printed beside, never used to choose. The last choice is written to $OUT_FILE
# (default target/tma-second/h100-triton-tma.json); the report:
# results/h100/triton-tma/second-pass/fit.txt.
# Usage: scripts/triton/tma_second_pass.sh   (after cargo build --release; about 15 min)
set -euo pipefail
bench=target/release/origami-bench
work=target/tma-second
out_file=${OUT_FILE:-$work/h100-triton-tma.json}
. scripts/triton/tma_fit_lib.sh
tma_chain tma_second_pass.sh scripts/triton/tma_fragment_fit.sh fragment.json
mapfile -t probes < <(tma_probe_specs power)
echo "# scripts/triton/tma_second_pass.sh: the edge and fragment weights chosen again, each at the other's choice"
edge_weights=(1 1.25 1.5 1.75 2 2.5 3)
frag_weights=(1 0.75 0.5 0.25 0)
current=$work/fragment.json
constant() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["constants"][sys.argv[2]])' "$@"; }
declare -A tau rms
# step PASS WHICH CONSTANT HOW CANDIDATE WEIGHT...: one weight chosen again at the current file
# (CANDIDATE: tma_held_candidate or tma_refit_candidate), the choice the new current file;
# moved=1 when it differs from the file's.
step() {
  local pass=$1 which=$2 name=$3 how=$4 candidate=$5 was best w
  shift 5
  tau=() rms=()
  was=$(constant "$current" "$name")
  echo "# pass $pass: the $which weight (now $was), $how"
  for w in "$@"; do
    "$candidate" "$w" "$which W $w" "$current" "$name=$w"
  done
  best=$(tma_best_on_probes "$@")
  echo "## pass $pass: $which weight chosen on the probes: $best"
  cp "$work/w$best.json" "$work/pass$pass-$which.json"
  current=$work/pass$pass-$which.json
  if awk -v a="$was" -v b="$best" 'BEGIN {exit !(a + 0 != b + 0)}'; then moved=1; fi
}
for pass in 1 2 3; do
  moved=0
  step "$pass" edge tp_zero_row_copy_weight "the other constants held" tma_held_candidate \
    "${edge_weights[@]}"
  step "$pass" fragment tp_fragment_read_weight "the rest refitted at each" tma_refit_candidate \
    "${frag_weights[@]}"
  if [[ $moved == 0 ]]; then
    echo "## pass $pass moved neither weight: done"
    break
  fi
done
cp "$current" "$out_file"
echo "## written: $out_file (edge $(constant "$current" tp_zero_row_copy_weight), fragment $(constant "$current" tp_fragment_read_weight))"
