#!/usr/bin/env bash
# Device only (issue 13): Nsight Compute on the held-out shape where the family's pick is
# furthest behind its best (16384x32768x512: the model's 128x256x64 tile against
# 128x128x64,s6) and on the same shape at K = 64, where the 1 GiB of C alone bounds the
# launch, one launch each (the runner's verification launch) with the Speed Of Light,
# Memory Workload, Occupancy and Launch sections; cuBLAS beside them. Clocks are left
# alone (--clock-control none). origami-bench carried as target/devbin/origami-bench.xz.
# Writes $OUT/ncu-short-k/<shape>-<what>.csv and tars the folder into $OUT/ncu-short-k.tgz;
# summary: python3 scripts/hopper/ncu_summary.py DIR.
# Usage: scripts/hopper/ncu_short_k.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
run_folder ncu-short-k
profile() { # NAME KERNEL_REGEX M N K CONFIG
    ncu_csv "$OUT/ncu-short-k/$1" "$2" 0 1 target/devbin/origami-bench run "$3" "$4" "$5" \
        --family hopper --config "$6"
}
for k in 512 64; do
    for c in 128x256x64,g16,w12,s4 128x128x64,g16,w12,s6; do
        profile "16384x32768x$k-${c%%,*}-${c##*,}" origami_hopper_gemm 16384 32768 "$k" "$c"
    done
    profile "16384x32768x$k-cublas" 'nvjet|sm90|cutlass|gemm_kernel' 16384 32768 "$k" 128x128x64,g16,w12,s6
done
close_folder ncu-short-k
