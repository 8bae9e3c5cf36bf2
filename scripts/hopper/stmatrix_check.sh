#!/usr/bin/env bash
# Device only (issue 13). The epilogue that writes the accumulators with stmatrix (this
# build) against the one before (4-byte shared-memory stores), carried as
# target/devbin/origami-bench.xz and target/devbin/origami-bench-old.xz:
#  1. correctness: every chunk width (64, 32, 16 columns), one and two consumers, 64 to
#     256 rows, plain and swapped, split-K and Stream-K, in fp16 and bf16, on shapes whose
#     M and N are not multiples of the tiles, each launch checked against cuBLAS
#     (check-*.txt);
#  2. speed: the same configs by both builds in their own processes, four alternating
#     passes beside cuBLAS (device_lib.sh compare_builds, fp16), on the C-bound shape,
#     4096^3, 8192^3 and three held-out shapes with their model picks.
# Usage: scripts/hopper/stmatrix_check.sh [FOLDER]   (writes $OUT/FOLDER.tgz)
set -u
. scripts/device_lib.sh
devbin_ready origami-bench origami-bench-old
name=${1:-stmatrix}
run_folder "$name"
D=$OUT/$name
START=$SECONDS
late() { [ $((SECONDS - START)) -gt "${LIMIT_S:-500}" ]; }
PLAIN="128x256x64,g8,w12,s4 64x256x64,g8,w8,s5 128x224x64,g8,w12,s4 128x96x64,g8,w12,s6
128x80x64,g8,w12,s6 128x144x64,g1,w12,s6 64x16x64,g8,w8,s6 256x128x64,g8,w12,s4
256x48x64,g8,w8,s5 128x128x64,g8,w12,s6,k2 128x128x64,g8,w12,s6,sk"
SWAP="128x256x64,g8,w12,s4,swap 64x256x64,g8,w8,s5,swap 128x112x64,g1,w12,s7,swap
128x96x64,g8,w12,s6,swap 128x80x64,g8,w12,s6,swap 128x32x64,g1,w12,s7,swap,k2
64x16x64,g1,w8,s8,swap,k4 256x64x64,g8,w12,s4,swap"
args() { for c in $1; do printf -- '--config %s ' "$c"; done; }
for dt in fp16 bf16; do
    # shellcheck disable=SC2046
    timeout 120 target/devbin/origami-bench run 1000 1048 1024 --family hopper --dtype $dt \
        $(args "$PLAIN") >"$D/check-1000x1048x1024-$dt.txt" 2>&1 ||
        echo "check plain $dt: exit $?" >>"$D/failures.txt"
    # shellcheck disable=SC2046
    timeout 120 target/devbin/origami-bench run 333 4104 1024 --family hopper --dtype $dt \
        $(args "$SWAP") >"$D/check-333x4104x1024-$dt.txt" 2>&1 ||
        echo "check swap $dt: exit $?" >>"$D/failures.txt"
done
echo "checks done at $((SECONDS - START)) s" >>"$D/log.txt"
export DTYPES=fp16
late || compare_builds "$name" 16384 32768 64 128x256x64,g16,w12,s4 128x128x64,g16,w12,s6 \
    64x256x64,g16,w8,s5 256x128x64,g16,w12,s4 128x192x64,g16,w12,s4
late || compare_builds "$name" 16384 32768 512 128x256x64,g16,w12,s4 128x256x64,g16,w12,s4,swap \
    128x128x64,g16,w12,s6
late || compare_builds "$name" 4096 4096 4096 128x256x64,g16,w12,s4 256x128x64,g8,w12,s4
late || compare_builds "$name" 8192 8192 8192 128x256x64,g16,w12,s4,sk 128x256x64,g16,w12,s4
late || compare_builds "$name" 4100 576 7168 128x144x64,g1,w12,s6
late || compare_builds "$name" 333 4096 4096 128x112x64,g1,w12,s7,swap
late || compare_builds "$name" 2048 4096 14336 128x256x64,g1,w12,s4,swap
echo "done at $((SECONDS - START)) s" >>"$D/log.txt"
close_folder "$name"
