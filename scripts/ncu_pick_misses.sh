#!/usr/bin/env bash
# Device only (issues 11 and 13): Nsight Compute on the shapes whose pick stays below 90 % of
# the family's brute force on the H100, the pick beside the best configs and cuBLAS (Speed
# Of Light, Memory Workload, Occupancy and Launch sections; clocks left alone:
# --clock-control none), then the same launches timed in four alternating passes.
# - hopper 17x6144x4096 (origami-bench, carried as target/devbin/origami-bench.xz): the
#   split-K pick profiled with its reduction kernel (two launches);
# - triton-tma 4100x576x7168 (scripts/triton/tma_one_launch.py; the second launch of each
#   config, the first compiles).
# Writes $OUT/ncu2/<shape>-<what>.csv and .err, timings in $OUT/ncu2/*-passes.txt, tarred
# into $OUT/ncu2.tgz. Usage: scripts/ncu_pick_misses.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
run_folder ncu2
D="$OUT/ncu2"
hopper() { # NAME COUNT CONFIG
    ncu_csv "$D/17x6144x4096-$1" origami_hopper 0 "$2" \
        target/devbin/origami-bench run 17 6144 4096 --family hopper --config "$3"
}
hopper pick-k2 2 128x32x64,g1,w8,s7,swap,k2
hopper best 1 64x32x64,g1,w8,s8,swap
hopper 128x32-k1 1 128x32x64,g1,w8,s8,swap
ncu_csv "$D/17x6144x4096-cublas" 'nvjet|sm90|cutlass|gemm|gemv' 0 1 \
    target/devbin/origami-bench run 17 6144 4096 --family hopper --config 64x32x64,g1,w8,s8,swap
timeout 200 target/devbin/origami-bench run 17 6144 4096 --family hopper --passes 4 \
    --config 128x32x64,g1,w8,s7,swap,k2 --config 64x32x64,g1,w8,s8,swap \
    --config 128x32x64,g1,w8,s8,swap --config 128x32x64,g1,w12,s8,swap \
    >"$D/17x6144x4096-passes.txt" 2>&1
for dt in fp16 bf16; do
    timeout 200 target/devbin/origami-bench run 17 6144 4096 --family hopper --passes 4 --dtype $dt \
        --pick >>"$D/17x6144x4096-pick-passes.txt" 2>&1
done
triton() { # NAME CONFIG [--cublas]
    local kre=matmul_tma
    [ -n "${3:-}" ] && kre='nvjet|sm90|cutlass|gemm'
    NCU_TIMEOUT_S=180 ncu_csv "$D/4100x576x7168-$1" "$kre" 1 1 \
        python3 scripts/triton/tma_one_launch.py 4100 576 7168 "$2" ${3:-}
}
triton pick-128x256 128x256x64,g8,w8,s3
triton best-256x128 256x128x64,g8,w8,s3
triton 128x128-s4 128x128x64,g8,w4,s4,flatten
triton cublas 128x256x64,g8,w8,s3 --cublas
printf 'config\n128x256x64,g8,w8,s3\n256x128x64,g8,w8,s3\n256x128x64,g1,w8,s3\n128x256x64,g1,w8,s3\n128x128x64,g8,w4,s4,flatten\n' \
    >"$D/4100x576x7168-configs.csv"
timeout 240 python3 scripts/triton/tma_sweep.py --out "$D/tma-passes" --shape 4100x576x7168 \
    --dtype fp16,bf16 --configs "$D/4100x576x7168-configs.csv" --workers 8 --deadline-s 200 \
    --passes 4 2>"$D/tma-passes.log"
close_folder ncu2
ls -la "$OUT"
