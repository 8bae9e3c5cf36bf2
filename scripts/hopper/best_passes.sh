#!/usr/bin/env bash
# Device only. The Hopper family's three fastest configs of the H100 brute force at 4096^3
# and 8192^3 (and the first with the `cluster` switch) beside cuBLAS, every launch timed in
# PASSES alternating passes (`origami-bench run --passes`), fp16 and bf16, one JSON report
# each under $OUT/best-passes/, `nvidia-smi dmon` beside, tarred into $OUT.
# origami-bench carried as target/devbin/origami-bench.xz. Usage: PASSES=4 scripts/hopper/best_passes.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
d="$OUT/best-passes"
run_folder best-passes
for dt in fp16 bf16; do
    for s in 4096 8192; do
        target/devbin/origami-bench run $s $s $s --family hopper --dtype $dt --passes "${PASSES:-4}" \
            --config 128x256x64,g16,w12,s4 --config 128x256x64,g16,w12,s3 \
            --config 256x128x64,g8,w12,s4 --config 128x256x64,g16,w12,s4,cluster \
            --format json >"$d/${s}-$dt.json" 2>"$d/${s}-$dt.err" || echo "${s} $dt: exit $?" >>"$d/failures.txt"
    done
done
close_folder best-passes
