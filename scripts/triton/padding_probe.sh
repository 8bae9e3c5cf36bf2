#!/usr/bin/env bash
# Device only. What the zero-filled rows of a tensor-descriptor box cost (issue 11;
# docs/triton-tma.md, "Zero-filled rows: added, not overlapped"): nine triton-tma configs
# (results/h100/triton-tma/padding-probe-configs.csv) on shapes outside the seed and LLM
# lists whose grids stay the same while the rows past N or M change, fp16, three shuffled
# passes (tma_sweep.py --passes 3 --shuffle), cuBLAS before and after, every launch checked.
#   one wave, rows past N: 2048 x {512, 544, 576, 640, 704, 768} x 7168;
#   one wave, rows past M: {512, 520, 576, 640} x 1024 x 7168;
#   several waves, rows past M: {1024, 1040, 1100, 1152} x 8192 x 4096.
# The folder is tarred into $OUT/padding-probe.tgz.
# Usage: scripts/triton/padding_probe.sh [DEADLINE_S]
set -u
d="$OUT/padding-probe"
mkdir -p "$d"
nvidia-smi dmon -s pc -d 1 >"$d/dmon.txt" 2>&1 &
dmon=$!
shapes=()
for n in 512 544 576 640 704 768; do shapes+=(--shape "2048x${n}x7168"); done
for m in 512 520 576 640; do shapes+=(--shape "${m}x1024x7168"); done
for m in 1024 1040 1100 1152; do shapes+=(--shape "${m}x8192x4096"); done
python3 scripts/triton/tma_sweep.py --out "$d/run" "${shapes[@]}" --dtype fp16 \
    --configs results/h100/triton-tma/padding-probe-configs.csv --workers 15 \
    --deadline-s "${1:-400}" --passes 3 --shuffle --seed 20261129 2>"$d/run.log"
kill $dmon 2>/dev/null
tar czf "$OUT/padding-probe.tgz" -C "$OUT" padding-probe && rm -rf "$d"
