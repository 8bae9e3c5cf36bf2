#!/usr/bin/env bash
# Device only (issue 13): Nsight Compute on the two shapes where the `auto` pick stays below
# 0.80 of cuBLAS on the H100 (333x4096x4096, 4100x576x7168): the hopper family's pick, its
# brute-force best configs and cuBLAS, one launch each (the first launch of the kernel: the
# runner's verification launch; cuBLAS's first is its reference), with the Speed Of Light,
# Memory Workload, Occupancy and Launch sections. Clocks are left alone
# (--clock-control none). origami-bench carried as target/devbin/origami-bench.xz.
# Writes $OUT/ncu/<shape>-<what>.csv (ncu --csv) and tars the folder into $OUT/ncu.tgz.
# Usage: scripts/hopper/ncu_misses.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
run_folder ncu
profile() { # NAME KERNEL_REGEX M N K CONFIG
    ncu_csv "$OUT/ncu/$1" "$2" 0 1 target/devbin/origami-bench run "$3" "$4" "$5" \
        --family hopper --config "$6"
}
for c in 128x96x64,g16,w12,s7 128x112x64,g16,w12,s6 128x128x64,g16,w8,s6; do
    profile "333x4096x4096-${c%%,*}" origami_hopper_gemm 333 4096 4096 "$c"
done
profile 333x4096x4096-cublas 'nvjet|sm90|cutlass|gemm_kernel' 333 4096 4096 128x96x64,g16,w12,s7
for c in 128x144x64,g16,w12,s6 128x144x64,g16,w12,s4; do
    profile "4100x576x7168-${c%%,*}-${c##*,}" origami_hopper_gemm 4100 576 7168 "$c"
done
profile 4100x576x7168-cublas 'nvjet|sm90|cutlass|gemm_kernel' 4100 576 7168 128x144x64,g16,w12,s6
close_folder ncu
