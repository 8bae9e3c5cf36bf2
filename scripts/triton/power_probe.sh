#!/usr/bin/env bash
# Device only. Whether the power cap is what moves two tiles' ratio (issue 11; docs/triton-tma.md,
# "Two tiles under the power cap"): on the H100's seed and LLM sweeps 128x128x64,w4,s5,FLATTEN
# runs 1.04-1.09 times 128x256x64,w8,s3's time on shapes that keep the top SM clock and 1.37-1.57
# times on the longest ones, where NVML saw the 128x128 launches at 1275 MHz and the 128x256 ones at
# 1950-1980; the model has one ratio, 1.16-1.21, for all. The six configs of
# results/h200/triton-tma/power-probe-configs.csv (128x128 at 4 and 8 warps, 128x256 with and
# without FLATTEN, 256x128, 64x256) on a ladder of shapes outside the seed and LLM lists, from a
# fraction of a millisecond to several:
#   3072^3, 4096x4096x8192, 6144^3, 8192x8192x4096, 4096x4096x32768, 6144x6144x12288,
#   2048x16384x16384, 8192x8192x16384, 12288x12288x8192, 16384x16384x8192;
# fp16, three shuffled passes (tma_sweep.py --passes 3 --shuffle --seed 20261206), cuBLAS before
# and after, every launch checked; each row keeps NVML's SM clock and power over its timing, and
# `nvidia-smi dmon` runs beside. The folder is tarred into $OUT/power-probe.tgz.
# Usage: scripts/triton/power_probe.sh [DEADLINE_S]
set -u
name=power-probe
shapes=()
for s in 3072x3072x3072 4096x4096x8192 6144x6144x6144 8192x8192x4096 4096x4096x32768 \
    6144x6144x12288 2048x16384x16384 8192x8192x16384 12288x12288x8192 16384x16384x8192; do
  shapes+=(--shape "$s")
done
d="$OUT/$name"
mkdir -p "$d"
nvidia-smi --query-gpu=name,driver_version,power.limit,enforced.power.limit,clocks.max.sm \
    --format=csv >"$d/gpu.txt" 2>&1
nvidia-smi dmon -s pc -d 1 >"$d/dmon.txt" 2>&1 &
dmon=$!
python3 scripts/triton/tma_sweep.py --out "$d/run" "${shapes[@]}" --dtype fp16 \
    --configs results/h200/triton-tma/power-probe-configs.csv --workers 15 \
    --deadline-s "${1:-300}" --passes 3 --shuffle --seed 20261206 2>"$d/run.log"
kill $dmon 2>/dev/null
tar czf "$OUT/$name.tgz" -C "$OUT" "$name" && rm -rf "$d"
