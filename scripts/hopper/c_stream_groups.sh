#!/usr/bin/env bash
# Device only (issue 13): does the launch order move the C stream? 128x256 and 128x128
# tiles of the family on 16384x32768xK (K = 64 and 512, fp16) at GROUP_SIZE_M 1, 2, 4, 8
# and 16 (consecutive CTAs along a tile row at 1: C written row-contiguous across the GPU),
# two alternating passes beside cuBLAS, every launch checked against cuBLAS.
# origami-bench carried as target/devbin/origami-bench.xz. Writes $OUT/c-stream-groups/,
# tarred into $OUT/c-stream-groups.tgz. Usage: scripts/hopper/c_stream_groups.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
run_folder c-stream-groups
for k in 64 512; do
    for t in 128x256x64,w12,s4 128x128x64,w12,s6; do
        args=()
        for g in 1 2 4 8 16; do args+=(--config "${t/,w/,g$g,w}"); done
        timeout 300 target/devbin/origami-bench run 16384 32768 $k --family hopper --dtype fp16 \
            --passes 2 "${args[@]}" </dev/null >"$OUT/c-stream-groups/16384x32768x$k-${t%%,*}.txt" 2>&1 ||
            echo "K $k $t: exit $?" >>"$OUT/c-stream-groups/failures.txt"
    done
done
close_folder c-stream-groups
