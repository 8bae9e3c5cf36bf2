#!/usr/bin/env bash
# Device only. A second probe of the zero-filled rows (issue 11; docs/triton-tma.md,
# "Zero-filled rows take their own time"), on shapes of neither list nor the first probe's,
# to test the form the first probe chose (scripts/triton/padding_probe.sh): the nine configs
# of results/h100/triton-tma/padding-probe-configs.csv, fp16 and bf16, three shuffled passes.
#   one wave, rows past N: 1536 x {512, 520, 600, 680, 760} x 4096;
#   one wave, rows past M: {768, 776, 840, 900} x 1536 x 8192;
#   several waves, rows past N: 4096 x {3072, 3080, 3200} x 4096.
# The folder is tarred into $OUT/padding-probe2.tgz.
# Usage: scripts/triton/padding_probe2.sh [DEADLINE_S]
set -u
d="$OUT/padding-probe2"
mkdir -p "$d"
nvidia-smi dmon -s pc -d 1 >"$d/dmon.txt" 2>&1 &
dmon=$!
shapes=()
for n in 512 520 600 680 760; do shapes+=(--shape "1536x${n}x4096"); done
for m in 768 776 840 900; do shapes+=(--shape "${m}x1536x8192"); done
for n in 3072 3080 3200; do shapes+=(--shape "4096x${n}x4096"); done
python3 scripts/triton/tma_sweep.py --out "$d/run" "${shapes[@]}" --dtype fp16,bf16 \
    --configs results/h100/triton-tma/padding-probe-configs.csv --workers 15 \
    --deadline-s "${1:-400}" --passes 3 --shuffle --seed 20261130 2>"$d/run.log"
kill $dmon 2>/dev/null
tar czf "$OUT/padding-probe2.tgz" -C "$OUT" padding-probe2 && rm -rf "$d"
