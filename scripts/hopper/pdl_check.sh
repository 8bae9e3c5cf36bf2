#!/usr/bin/env bash
# Device only (issue 13): split-K's reduction launched as a programmatic dependent of the
# GEMM (this build, target/devbin/origami-bench.xz) against the same configs launched one
# after the other (the build before, target/devbin/origami-bench-old.xz), in one process
# each, four alternating passes, cuBLAS beside them; every launch checked against cuBLAS.
# Writes $OUT/pdl/<shape>-<dtype>-{new,old}.txt, tarred into $OUT/pdl.tgz.
# Usage: scripts/hopper/pdl_check.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench origami-bench-old
run_folder pdl
compare_builds pdl 17 6144 4096 128x32x64,g1,w8,s7,swap,k2 128x32x64,g1,w8,s8,swap 64x32x64,g1,w8,s8,swap 64x32x64,g1,w8,s8,swap,k2
compare_builds pdl 1 8192 8192 64x128x64,g16,w8,s6,k4 64x256x64,g16,w8,s4,k4 64x128x64,g16,w8,s6
compare_builds pdl 128 4096 14336 64x128x64,g16,w8,s8,k2 128x128x64,g16,w12,s6,k4 64x128x64,g16,w8,s8
compare_builds pdl 333 4096 14336 128x208x64,g16,w12,s5,k2 128x192x64,g16,w12,s4,k2 128x208x64,g16,w12,s5
compare_builds pdl 1024 1024 1024 128x128x64,g16,w12,s6,k2 128x128x64,g16,w12,s6
close_folder pdl
ls -la "$OUT"
