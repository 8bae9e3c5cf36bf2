#!/usr/bin/env bash
# Device only (issue 11), after scripts/triton/narrow_n_l2.sh: how the L2 reads that
# neighbouring programs share depend on GROUP_SIZE_M (the tiles of one tile column that run
# side by side), at 4096^3 for 64x128x128 and 128x64x128 (four stages) at groups 1, 2, 4, 8,
# 16 and 32, and on the one-wave shapes where the group moved the time by 13-30 %
# (4100x576x7168: 128x256x64 at 1 and 8, 256x128x64 at 8; 1000x576x7168: 64x128x128 at 1
# and 8). One Nsight Compute launch each (clocks left alone): duration, the L2 sectors the
# SMs read and look up (hits and misses), DRAM bytes. Writes $OUT/narrow-n-groups/<shape>_<config>.csv,
# tarred into $OUT/narrow-n-groups.tgz. Usage: scripts/triton/narrow_n_groups.sh
set -u
. scripts/device_lib.sh
run_folder narrow-n-groups
D="$OUT/narrow-n-groups"
probe() { tma_ncu_probe "$D" "$TMA_L2_METRICS" "$@"; } # M N K CONFIG
for g in 1 2 4 8 16 32; do
    probe 4096 4096 4096 "64x128x128,g$g,w4,s4"
    probe 4096 4096 4096 "128x64x128,g$g,w4,s4"
done
probe 4100 576 7168 128x256x64,g1,w8,s3
probe 4100 576 7168 128x256x64,g8,w8,s3
probe 4100 576 7168 256x128x64,g8,w8,s3
probe 1000 576 7168 64x128x128,g1,w4,s4
probe 1000 576 7168 64x128x128,g8,w4,s4
close_folder narrow-n-groups
ls -la "$OUT"
