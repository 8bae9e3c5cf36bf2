#!/usr/bin/env bash
# Device only (issue 11): why BLOCK_N 64 under 128 or more rows of BLOCK_M and deep rings run
# slower than the triton-tma model prices them (docs/triton-tma.md, "Three more leads"). At
# 4096^3 (fp16; the seed sweep ran it at 1980 MHz) the tiles with the same FLOP and bytes per
# tile, 128x64x128 and 64x128x128 at four stages, ran 376 and 254 us. Nsight Compute on one
# launch of each probed config (clocks left alone: --clock-control none) with the sections
# that split an SM's time: Speed Of Light, Compute Workload (tensor pipe), Memory Workload
# and its tables (shared-memory wavefronts and bank conflicts), Warp State (stall reasons),
# Scheduler and Instruction statistics; then the same configs timed in four alternating
# passes beside cuBLAS (tma_sweep.py --passes 4, every launch checked against cuBLAS).
# Writes $OUT/narrow-n/<config>.csv and .err, the timings in $OUT/narrow-n/passes/, tarred
# into $OUT/narrow-n.tgz. Usage: scripts/triton/narrow_n_probe.sh
set -u
. scripts/device_lib.sh
run_folder narrow-n
D="$OUT/narrow-n"
SHAPE=(4096 4096 4096)
CONFIGS=(
    128x64x128,g8,w4,s4
    64x128x128,g8,w4,s4
    64x128x128,g8,w4,s3
    64x64x128,g8,w4,s4
    64x64x128,g8,w4,s5
    128x64x64,g8,w4,s3
    64x128x64,g8,w4,s3
    128x128x64,g8,w4,s4
    128x256x64,g8,w8,s3
    256x64x64,g8,w8,s4
)
for c in "${CONFIGS[@]}"; do
    name=$(echo "$c" | tr ',' '_')
    timeout 150 ncu --clock-control none -k "regex:matmul_tma" --launch-skip 1 --launch-count 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis \
        --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section WarpStateStats --section SchedulerStats --section InstructionStats \
        --section Occupancy --section LaunchStats --csv \
        python3 scripts/triton/tma_one_launch.py "${SHAPE[@]}" "$c" >"$D/$name.csv" 2>"$D/$name.err" ||
        echo "$name: exit $?" >>"$D/failures.txt"
done
{ echo config; for c in "${CONFIGS[@]}"; do echo "\"$c\""; done; } >"$D/configs.csv"
timeout 240 python3 scripts/triton/tma_sweep.py --out "$D/passes" --shape 4096x4096x4096 \
    --dtype fp16 --configs "$D/configs.csv" --workers 10 --deadline-s 200 --passes 4 \
    2>"$D/passes.log"
close_folder narrow-n
ls -la "$OUT"
