#!/usr/bin/env bash
# Device only (issue 13): split-K with the reduction inside the GEMM kernel (this build,
# target/devbin/origami-bench.xz: the run that counts last on a tile's counter adds the
# partial tiles in order) against the same launches with the reduction as a second kernel
# (the build before, target/devbin/origami-bench-old.xz). Each build in its own process,
# four alternating passes, cuBLAS beside them, every launch checked against cuBLAS (the
# runner's verification). Shapes cover both C paths (TMA; registers when N % 8 != 0), the
# swapped layout, 2-4 runs, and more work items than SMs (each CTA counting several tiles).
# Writes $OUT/splitk/<shape>-<dtype>-{new,old}.txt, tarred into $OUT/splitk.tgz.
# Usage: scripts/hopper/splitk_fused_check.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench origami-bench-old
run_folder splitk
compare_builds splitk 17 6144 4096 128x32x64,g1,w8,s7,swap,k2 64x32x64,g1,w8,s8,swap,k2 64x32x64,g1,w8,s8,swap 128x32x64,g1,w8,s8,swap
compare_builds splitk 1 8192 8192 64x128x64,g16,w8,s6,k4 64x256x64,g16,w8,s4,k4 64x128x64,g16,w8,s6,k3 64x128x64,g16,w8,s6
compare_builds splitk 128 4096 14336 64x128x64,g16,w8,s8,k2 128x128x64,g16,w12,s6,k4 64x128x64,g16,w8,s8
compare_builds splitk 333 4096 14336 128x208x64,g16,w12,s5,k2 128x192x64,g16,w12,s4,k2 128x208x64,g16,w12,s5
compare_builds splitk 1024 1024 1024 128x128x64,g16,w12,s6,k2 128x128x64,g16,w12,s6
compare_builds splitk 2048 2048 2048 128x128x64,g8,w12,s6,k4 128x256x64,g8,w12,s4,k3 128x128x64,g8,w12,s6
compare_builds splitk 17 6145 4096 64x32x64,g1,w8,s8,swap,k2 128x64x64,g8,w12,s6,k3
compare_builds splitk 1000 1003 2048 128x112x64,g8,w12,s6,k2 64x48x64,g1,w8,s8,swap,k4
close_folder splitk
ls -la "$OUT"
