#!/usr/bin/env bash
# Device only (issue 11), after scripts/triton/narrow_n_groups.sh: the L2 sectors the SMs
# read against the tensor-descriptor boxes they ask for, on more launches: the 576- and
# 1536-column shapes whose picks miss, their best tiles, and 128x256 against 256x128 at
# 4096^3. One Nsight Compute launch each (clocks left alone), the metrics of
# narrow_n_groups.sh. Writes $OUT/sharing/<shape>_<config>.csv, tarred into
# $OUT/sharing.tgz. Usage: scripts/triton/sharing_probe.sh
set -u
. scripts/device_lib.sh
run_folder sharing
D="$OUT/sharing"
probe() { tma_ncu_probe "$D" "$TMA_L2_METRICS" "$@"; } # M N K CONFIG
probe 2048 576 7168 64x256x64,g8,w4,s3
probe 2048 576 7168 128x128x64,g8,w4,s5
probe 2048 576 7168 256x64x64,g8,w4,s4
probe 2048 576 7168 128x256x64,g8,w8,s3
probe 4100 1536 7168 64x256x64,g8,w4,s4,flatten
probe 4100 1536 7168 128x128x64,g8,w4,s5,flatten
probe 4100 576 7168 128x128x64,g8,w4,s5
probe 1000 576 7168 128x64x128,g8,w4,s4
probe 128 24576 1536 64x128x128,g8,w4,s4,flatten
probe 128 24576 1536 128x256x64,g8,w8,s3
probe 4096 4096 4096 128x256x64,g8,w8,s3
probe 4096 4096 4096 256x128x64,g8,w8,s3
probe 4096 4096 4096 128x128x64,g8,w4,s4
probe 8192 128 4096 64x128x128,g8,w4,s4
close_folder sharing
ls -la "$OUT"
