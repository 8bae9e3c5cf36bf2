#!/usr/bin/env bash
# Device only (issue 11): what differs between the fast and the slow launches of the
# held-out minimum 4100x576x7168 (results/h100/triton-tma/bimodal/: the same launch moves
# 9-32 % with fresh buffers). Nsight Compute (clocks left alone) on 12 launches, each on
# fresh input buffers (`tma_one_launch.py --fresh`), of the pick 128x256x64 and of
# 256x128x64: duration, L2 sectors the SMs read and the L2 fabric's (between the L2's two
# halves), L2 hits and misses, DRAM bytes, tensor pipe. Writes $OUT/bimodal-ncu/<config>.csv,
# tarred into $OUT/bimodal-ncu.tgz. Usage: scripts/triton/bimodal_probe.sh
set -u
. scripts/device_lib.sh
run_folder bimodal-ncu
D="$OUT/bimodal-ncu"
METRICS=gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum
METRICS+=,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_srcunit_tex_lookup_hit.sum
METRICS+=,lts__t_sectors_srcunit_tex_lookup_miss.sum,dram__bytes_read.sum
METRICS+=,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg
for c in 128x256x64,g8,w8,s3 256x128x64,g8,w8,s3; do
    name=$(echo "$c" | tr ',' '_')
    timeout 200 ncu --clock-control none -k "regex:matmul_tma" --launch-skip 1 --launch-count 12 \
        --metrics "$METRICS" --csv python3 scripts/triton/tma_one_launch.py 4100 576 7168 "$c" \
        --launches 13 --fresh >"$D/$name.csv" 2>"$D/$name.err" || echo "$name: exit $?" >>"$D/failures.txt"
done
close_folder bimodal-ncu
ls -la "$OUT"
