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
check() { # M N K CONFIG...
    local m=$1 n=$2 k=$3
    shift 3
    local args=()
    for c in "$@"; do args+=(--config "$c"); done
    for dt in fp16 bf16; do
        for b in new old; do
            local bin=target/devbin/origami-bench
            [ $b = old ] && bin=target/devbin/origami-bench-old
            timeout 120 $bin run "$m" "$n" "$k" --family hopper --dtype $dt --passes 4 "${args[@]}" \
                >"$OUT/pdl/${m}x${n}x${k}-$dt-$b.txt" 2>&1 || echo "${m}x${n}x${k} $dt $b: exit $?" >>"$OUT/pdl/failures.txt"
        done
    done
}
check 17 6144 4096 128x32x64,g1,w8,s7,swap,k2 128x32x64,g1,w8,s8,swap 64x32x64,g1,w8,s8,swap 64x32x64,g1,w8,s8,swap,k2
check 1 8192 8192 64x128x64,g16,w8,s6,k4 64x256x64,g16,w8,s4,k4 64x128x64,g16,w8,s6
check 128 4096 14336 64x128x64,g16,w8,s8,k2 128x128x64,g16,w12,s6,k4 64x128x64,g16,w8,s8
check 333 4096 14336 128x208x64,g16,w12,s5,k2 128x192x64,g16,w12,s4,k2 128x208x64,g16,w12,s5
check 1024 1024 1024 128x128x64,g16,w12,s6,k2 128x128x64,g16,w12,s6
close_folder pdl
ls -la "$OUT"
