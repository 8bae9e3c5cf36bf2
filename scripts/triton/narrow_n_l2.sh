#!/usr/bin/env bash
# Device only (issue 11), after scripts/triton/narrow_n_probe.sh: at 4096^3 the BLOCK_N 64
# launches of the triton-tma kernel keep the L2 busier (ncu's L2 throughput 79-80 %) for
# longer than the 64x128 ones with the same bytes per tile. Nsight Compute's breakdown of
# the L2, SM and L1 throughputs into their sub-metrics, the L2 sectors by source (the SMs,
# the fabric between the L2's two halves) and operation, and DRAM bytes, on one launch of
# each config (clocks left alone). Writes $OUT/narrow-n-l2/<config>.csv and .err, tarred
# into $OUT/narrow-n-l2.tgz. Usage: scripts/triton/narrow_n_l2.sh
set -u
. scripts/device_lib.sh
run_folder narrow-n-l2
D="$OUT/narrow-n-l2"
METRICS=breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed
METRICS+=,breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed
METRICS+=,breakdown:l1tex__throughput.avg.pct_of_peak_sustained_elapsed
METRICS+=,lts__t_sectors.sum,lts__t_requests.sum,lts__t_sectors_srcunit_tex.sum
METRICS+=,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_srcunit_tex_op_read.sum
METRICS+=,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex.sum
METRICS+=,lts__t_sectors_srcunit_tex_lookup_hit.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum
METRICS+=,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
METRICS+=,smsp__cycles_active.avg,sm__cycles_elapsed.avg
for c in 128x64x128,g8,w4,s4 64x128x128,g8,w4,s4 128x128x64,g8,w4,s4 128x256x64,g8,w8,s3 \
    64x64x128,g8,w4,s4 128x64x128,g1,w4,s4 64x128x128,g1,w4,s4; do
    name=$(echo "$c" | tr ',' '_')
    timeout 150 ncu --clock-control none -k "regex:matmul_tma" --launch-skip 1 --launch-count 1 \
        --metrics "$METRICS" --csv \
        python3 scripts/triton/tma_one_launch.py 4096 4096 4096 "$c" >"$D/$name.csv" 2>"$D/$name.err" ||
        echo "$name: exit $?" >>"$D/failures.txt"
done
close_folder narrow-n-l2
ls -la "$OUT"
