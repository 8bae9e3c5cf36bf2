#!/usr/bin/env bash
# The triton-tma family's zero-filled box rows charged in series (issue 11; docs/triton-tma.md,
# "Zero-filled rows take their own time"), CPU only. Starts from the neighbour-share fit
# (scripts/triton/tma_neighbour_fit.sh, run here into target/) and scores its charge of the
# rows past M and N in two forms on the H100 padding probe
# (results/h100/triton-tma/padding-probe/run: nine configs on 14 shapes, scripts/triton/padding_probe.sh;
# scored without its one shape of the LLM list, 2048x576x7168: tma_fit_lib.sh's tma_probe_run):
#   inside: tp_box_padding_weight W, the rows' bytes in the DRAM term (overlapped with the
#           SMs' time by the final p-norm), the file's form until 2026-11-28;
#   series: tp_box_padding_serial W, their DRAM time added after the overlap.
# W in {0.5, 1, 1.5}. The probe chooses (its Kendall tau, then the RMS of its per-shape log
# residuals); the seed list (fit set) and the LLM list (held out) are printed beside, never
# used to choose. The chosen form is written to $OUT_FILE (default
# target/tma-padding/h100-triton-tma.json); since 2026-11-28 that file is the embedded
# calibrations/fitted/h100-triton-tma.json. A refit of the other constants on the seed list
# with the chosen form (`origami-bench refit --rounds 6 --tau-weight 1`, the neighbour fit's
# holds) is printed too: it moves none of them.
# Usage: scripts/triton/tma_padding_fit.sh   (after cargo build --release; about 2 min)
set -euo pipefail
bench=target/release/origami-bench
[[ -x $bench ]] || { echo "tma_padding_fit.sh: no $bench (cargo build --release)" >&2; exit 2; }
work=target/tma-padding
out_file=${OUT_FILE:-$work/h100-triton-tma.json}
probe_run=results/h100/triton-tma/padding-probe/run
rm -rf "$work"
mkdir -p "$work"
OUT_FILE=$work/neighbour.json scripts/triton/tma_neighbour_fit.sh >"$work/neighbour.txt"
. scripts/triton/tma_fit_lib.sh
tma_four_reference
echo "# scripts/triton/tma_padding_fit.sh: the zero-filled rows' charge, chosen on the padding probe"
best=""
best_key=""
for form in inside series; do
  for w in 0.5 1 1.5; do
    if [[ $form == inside ]]; then weight=$w serial=0; else weight=0 serial=$w; fi
    tma_variant "$work/neighbour.json" "$work/$form-$w.json" \
        "tp_box_padding_weight=$weight" "tp_box_padding_serial=$serial"
    score=$(tma_probe "$work/$form-$w.json" "$probe_run" h100-sxm fp16)
    echo "## $form $w: probe $score"
    tma_score "$work/$form-$w.json" "$form $w" | sed 's/^/   /'
    key=$(echo "$score" | awk '{printf "%.4f %.4f", $2, -$4}')
    if [[ -z $best_key ]] || python3 -c "import sys; a=list(map(float,'$key'.split())); b=list(map(float,'$best_key'.split())); sys.exit(0 if a > b else 1)"; then
      best="$form $w"
      best_key=$key
    fi
  done
done
set -- $best
echo "## chosen on the probe: $1 $2"
cp "$work/$1-$2.json" "$out_file"
echo "## the other constants refitted on the seed list with it (not written)"
hold=$tma_hold
TRITONBLAS_HW_PARAMS=$out_file "$bench" refit --out "$work/four" --fit-set seed_shapes \
    --family triton-tma --gpu h100-sxm --rounds 6 --tau-weight 1 --hold "$hold" 2>&1 |
  grep -E '^(fit set|held out), after  |^moves:|^  [a-z_0-9]+ ' | sed 's/^/   /'
tma_score "$out_file" "bf16, not fitted" --dtype bf16
echo "## written: $out_file"
