#!/usr/bin/env bash
# Device only. GROUP_SIZE_M 1 to 16 in one-wave launches of the triton-tma kernel (every
# tile resident at once), on the list shapes whose A is the larger operand: the picks'
# tiles (results/h100/triton-tma/one-wave-groups/configs.csv), fp16, 4 alternating passes
# (tma_sweep.py --passes), `nvidia-smi dmon` beside it; the folder tarred into $OUT.
# Usage: scripts/triton/one_wave_groups.sh [DEADLINE_S]
set -u
source scripts/device_lib.sh
name=tma-one-wave-groups
run_folder "$name"
d="$OUT/$name"
python3 scripts/triton/tma_sweep.py --out "$d/sweep" --shape 4100x576x7168 --shape 2048x576x7168 \
    --shape 8192x128x4096 --shape 1000x576x7168 --dtype fp16 \
    --configs results/h100/triton-tma/one-wave-groups/configs.csv --workers 15 \
    --deadline-s "${1:-300}" --passes 4 2>"$d/sweep.log"
close_folder "$name"
