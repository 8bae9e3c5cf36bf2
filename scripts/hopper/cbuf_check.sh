#!/usr/bin/env bash
# Device only. C chunk buffers per consumer (HG_CBUF, hopper::c_buffers): this build
# (as many buffers as a consumer has chunks, as far as shared memory goes) against the one
# before (two buffers), the same configs in their own processes, fp16 and bf16, four
# alternating passes beside cuBLAS, every launch checked against cuBLAS
# (device_lib.sh compare_builds). Carried: target/devbin/origami-bench.xz (this build) and
# target/devbin/origami-bench-old.xz. Usage: scripts/hopper/cbuf_check.sh [FOLDER]
set -u
. scripts/device_lib.sh
devbin_ready origami-bench origami-bench-old
name=${1:-cbuf}
run_folder "$name"
compare_builds "$name" 16384 32768 512 128x256x64,g16,w12,s3 128x256x64,g16,w12,s4 \
    128x128x64,g16,w12,s6 256x128x64,g8,w12,s3
compare_builds "$name" 16384 32768 64 128x256x64,g16,w12,s3 128x256x64,g16,w12,s4 \
    128x128x64,g16,w12,s6
compare_builds "$name" 4096 4096 4096 128x256x64,g16,w12,s3 128x256x64,g16,w12,s4 \
    256x128x64,g8,w12,s3
compare_builds "$name" 8192 8192 8192 128x256x64,g16,w12,s3 128x256x64,g16,w12,s4 \
    256x128x64,g8,w12,s3
compare_builds "$name" 4100 576 7168 128x144x64,g1,w12,s6 128x144x64,g1,w12,s5
compare_builds "$name" 16384 1536 7168 128x256x64,g2,w12,s3 128x256x64,g2,w12,s4
close_folder "$name"
