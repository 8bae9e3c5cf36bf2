#!/usr/bin/env bash
# Device only (issue 11): why the deepest ring with BLOCK_K 128 of a tile runs slower than
# its BLOCK_K 64 twin on compute-bound shapes and faster on decode shapes (docs/triton-tma.md,
# "How far one fix could go": the error every refit of the family trips on). One Nsight
# Compute launch of each (clocks left alone) of 64x128x128 at four stages against 64x128x64 at
# five, and 128x64x128 against 128x64x64, on 4096^3 (128 faster for 64x128), 1000x4096x14336
# (128 slower by 20 %) and 17x4096x14336 (128 faster): Speed Of Light, memory workload,
# warp-state and scheduler statistics, the tensor pipe and the L2 sectors read.
# Writes $OUT/deep-ring/<shape>_<config>.csv, tarred into $OUT/deep-ring.tgz.
# Usage: scripts/triton/deep_ring_probe.sh
set -u
. scripts/device_lib.sh
run_folder deep-ring
D="$OUT/deep-ring"
METRICS=gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum
METRICS+=,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
METRICS+=,sm__cycles_active.avg,smsp__cycles_active.avg
probe() { # M N K CONFIG
    tma_ncu_probe "$D" "$METRICS" "$@" --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section SchedulerStats
}
for shape in "4096 4096 4096" "1000 4096 14336" "17 4096 14336"; do
    for c in 64x128x128,g8,w4,s4 64x128x64,g8,w4,s5 128x64x128,g8,w4,s4 128x64x64,g8,w4,s5; do
        probe $shape $c
    done
done
close_folder deep-ring
ls -la "$OUT"
