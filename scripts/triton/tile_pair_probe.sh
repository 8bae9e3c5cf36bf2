#!/usr/bin/env bash
# Device only. Why 64x256x64 runs 13 % faster than 128x128x64 at the held-out 4100x1536x7168
# on the H100 while 128x128 is the faster tile on the seed list's large shapes (issue 11;
# docs/triton-tma.md, "64x256 against 128x128"): the twelve triton-tma configs of
# results/h200/triton-tma/tile-pair-probe-configs.csv (both tiles, GROUP_SIZE_M 4 / 8 / 16,
# with and without FLATTEN, 128x256 and 256x128 beside) on shapes outside the seed and LLM
# lists that part what 4100x1536x7168 joins: rows past M or not (4096 / 4104), N from 1024 to
# 3072, K 7168 or 4096, more rows (6144, 8192):
#   {4096, 4104} x {1024, 1536, 2048, 3072} x 7168; {4096, 4104} x 1536 x 4096;
#   6144 x 1536 x 7168; 8192 x 1536 x 4096.
# fp16, three shuffled passes (tma_sweep.py --passes 3 --shuffle --seed 20261205), cuBLAS
# before and after, every launch checked. The folder is tarred into $OUT/tile-pair-probe.tgz.
# Usage: scripts/triton/tile_pair_probe.sh [DEADLINE_S]
set -u
name=tile-pair-probe
shapes=()
for m in 4096 4104; do
  for n in 1024 1536 2048 3072; do shapes+=(--shape "${m}x${n}x7168"); done
  shapes+=(--shape "${m}x1536x4096")
done
shapes+=(--shape 6144x1536x7168 --shape 8192x1536x4096)
d="$OUT/$name"
mkdir -p "$d"
nvidia-smi dmon -s pc -d 1 >"$d/dmon.txt" 2>&1 &
dmon=$!
python3 scripts/triton/tma_sweep.py --out "$d/run" "${shapes[@]}" --dtype fp16 \
    --configs results/h200/triton-tma/tile-pair-probe-configs.csv --workers 15 \
    --deadline-s "${1:-200}" --passes 3 --shuffle --seed 20261205 2>"$d/run.log"
kill $dmon 2>/dev/null
tar czf "$OUT/$name.tgz" -C "$OUT" "$name" && rm -rf "$d"
