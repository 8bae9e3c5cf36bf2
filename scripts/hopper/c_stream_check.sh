#!/usr/bin/env bash
# Device only (issue 13): how fast the family's epilogue streams C, per tile shape. The
# family's tiles (BLOCK_M 64 with one consumer, 128 and 256 with two; BLOCK_N 64 to 256;
# the deepest ring up to six stages) on 16384x32768xK for K = 64 (the 1 GiB of C bounds
# the launch: bytes of C over time is the epilogue's streaming rate) and K = 512, fp16, two
# alternating passes beside cuBLAS, every launch checked against cuBLAS.
# origami-bench carried as target/devbin/origami-bench.xz. Writes $OUT/c-stream/*.txt,
# tarred into $OUT/c-stream.tgz. Usage: scripts/hopper/c_stream_check.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
run_folder c-stream
args=()
for c in 64x64x64,g16,w8,s6 64x96x64,g16,w8,s6 64x128x64,g16,w8,s6 64x160x64,g16,w8,s6 \
         64x192x64,g16,w8,s6 64x224x64,g16,w8,s6 64x256x64,g16,w8,s5 128x64x64,g16,w12,s6 \
         128x96x64,g16,w12,s6 128x128x64,g16,w12,s6 128x160x64,g16,w12,s5 \
         128x192x64,g16,w12,s4 128x224x64,g16,w12,s4 128x256x64,g16,w12,s4 \
         256x64x64,g16,w12,s4 256x96x64,g16,w12,s4 256x128x64,g16,w12,s4; do
    args+=(--config "$c")
done
for k in 64 512; do
    timeout 300 target/devbin/origami-bench run 16384 32768 $k --family hopper --dtype fp16 --passes 2 \
        "${args[@]}" </dev/null >"$OUT/c-stream/16384x32768x$k.txt" 2>&1 ||
        echo "K $k: exit $?" >>"$OUT/c-stream/failures.txt"
done
close_folder c-stream
