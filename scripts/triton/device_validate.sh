#!/usr/bin/env bash
# Device only. The triton-tma validation (every shape's pick and brute-force best, 44
# configs, validate2-configs.csv, or the list CONFIGS names) over the seed list, the LLM
# list and three unaligned shapes, fp16 and bf16, each launch timed in PASSES alternating
# passes (tma_sweep.py --passes), with `nvidia-smi dmon` beside it; the folders tarred into
# $OUT (the device call returns few files).
# SHUFFLE=1 times the passes after the first in random orders (tma_sweep.py --shuffle);
# SEED=N seeds the inputs and those orders (tma_sweep.py --seed; its default otherwise).
# Usage: [CONFIGS=LIST.csv] [SHUFFLE=1] [SEED=N] PASSES=4 scripts/triton/device_validate.sh NAME [DEADLINE_SEED DEADLINE_LLM DEADLINE_UNALIGNED]
set -u
name="${1:-passes}"
passes="${PASSES:-4}"
d="$OUT/$name"
mkdir -p "$d"
nvidia-smi dmon -s pc -d 1 >"$d/dmon.txt" 2>&1 &
dmon=$!
cfg=${CONFIGS:-results/h100/triton-tma/validate2-configs.csv}
order=()
[ "${SHUFFLE:-0}" = 1 ] && order=(--shuffle)
[ -n "${SEED:-}" ] && order+=(--seed "$SEED")
python3 scripts/triton/tma_sweep.py --out "$d/seed" --shapes seed --dtype fp16,bf16 --configs $cfg \
    --workers 15 --deadline-s "${2:-200}" --passes "$passes" "${order[@]}" 2>"$d/seed.log"
python3 scripts/triton/tma_sweep.py --out "$d/llm" --shapes llm --dtype fp16,bf16 --configs $cfg \
    --workers 15 --deadline-s "${3:-280}" --passes "$passes" "${order[@]}" 2>"$d/llm.log"
python3 scripts/triton/tma_sweep.py --out "$d/unaligned" --shape 3000x3000x3000 --shape 1000x7168x2056 \
    --shape 4097x4104x4104 --dtype fp16,bf16 --configs $cfg --workers 15 --deadline-s "${4:-80}" \
    --passes "$passes" "${order[@]}" 2>"$d/unaligned.log"
kill $dmon 2>/dev/null
tar czf "$OUT/$name.tgz" -C "$OUT" "$name" && rm -rf "$d"
