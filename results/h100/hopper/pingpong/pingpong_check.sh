#!/usr/bin/env bash
# Device only (issue 13): the ping-pong consumers (`pingpong`, HG_PINGPONG=1: the two
# consumer warpgroups take whole tiles in turn, one writing C while the other runs its K
# loop) against the cooperative kernel (both warpgroups on one tile), on the shapes where
# the epilogue shows (16384x32768xK for K = 64 and 512: C is 1 GiB), the large cubes, a
# one-wave shape, a swapped decode-like shape and a split-K launch. Four alternating
# passes beside cuBLAS, every launch checked against cuBLAS.
# origami-bench carried as target/devbin/origami-bench.xz. Writes $OUT/pingpong.tgz.
# Usage: scripts/hopper/pingpong_check.sh [DTYPE]   (fp16 by default)
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
dt=${1:-fp16}
run_folder pingpong
one() {  # one M N K CONFIG...
    local m=$1 n=$2 k=$3 args=() c
    shift 3
    for c in "$@"; do args+=(--config "$c"); done
    timeout 120 target/devbin/origami-bench run "$m" "$n" "$k" --family hopper --dtype "$dt" \
        --passes 4 "${args[@]}" </dev/null >"$OUT/pingpong/${m}x${n}x${k}-$dt.txt" 2>&1 ||
        echo "${m}x${n}x${k} $dt: exit $?" >>"$OUT/pingpong/failures.txt"
}
pp=(128x128x64,g16,w12,s6,pingpong 128x128x64,g16,w12,s5,pingpong 128x96x64,g16,w12,s6,pingpong
    128x64x64,g16,w12,s8,pingpong 64x256x64,g16,w12,s4,pingpong 64x192x64,g16,w12,s5,pingpong
    64x128x64,g16,w12,s6,pingpong)
coop=(128x256x64,g16,w12,s4 128x192x64,g16,w12,s4 128x128x64,g16,w12,s6 128x96x64,g16,w12,s6)
one 16384 32768 512 "${coop[@]}" "${pp[@]}"
one 16384 32768 64 "${coop[@]}" "${pp[@]}"
one 4096 4096 4096 "${coop[@]}" "${pp[@]}"
one 8192 8192 8192 "${coop[@]}" 128x128x64,g16,w12,s6,pingpong 64x256x64,g16,w12,s4,pingpong
one 4100 576 7168 128x144x64,g1,w12,s6 128x96x64,g1,w12,s6 128x96x64,g1,w12,s6,pingpong \
    64x144x64,g1,w12,s6,pingpong 64x96x64,g1,w12,s6,pingpong
one 333 4096 4096 128x96x64,g1,w12,s6,swap 128x96x64,g1,w12,s6,swap,pingpong \
    64x96x64,g1,w12,s6,swap,pingpong
one 128 4096 14336 128x128x64,g8,w12,s6,k2 128x128x64,g8,w12,s6,k2,pingpong 64x128x64,g8,w12,s6,k2,pingpong
close_folder pingpong
