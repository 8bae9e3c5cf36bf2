#!/usr/bin/env bash
# Device only. Two questions on an H100, fp16, every launch checked against cuBLAS first
# (origami-bench run) and timed beside it in alternating passes:
#   c-path/   is the 128x256 tile's short-K loss in its epilogue's TMA stores? The same
#             tiles on N = 32768 (C by TMA stores, two 64-column chunk buffers per consumer)
#             and N = 32766 (N % 8 != 0: C from registers), K = 64 and 512, two passes;
#   sk-passes/ Stream-K against the whole-tile grid where it won or lost in one run:
#             4096^3, 8192^3 (fp16, bf16) and 16384x8192x8192, eight passes.
# origami-bench carried as target/devbin/origami-bench.xz.
# Usage: scripts/hopper/epilogue_path_check.sh [FOLDER]
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
name=${1:-epilogue-path}
d="$OUT/$name"
run_folder "$name"
mkdir -p "$d/c-path" "$d/sk-passes"
bench() { timeout "${RUN_TIMEOUT_S:-150}" target/devbin/origami-bench run "$@" </dev/null; }
for n in 32768 32766; do
    for k in 64 512; do
        bench 16384 $n $k --family hopper --dtype fp16 --passes 2 \
            --config 128x256x64,g16,w12,s4 --config 128x256x64,g16,w12,s3 \
            --config 128x128x64,g16,w12,s6 --config 128x128x64,g16,w12,s4 \
            >"$d/c-path/16384x${n}x$k.txt" 2>&1 || echo "c-path $n $k: exit $?" >>"$d/failures.txt"
    done
done
for job in "4096 4096 4096 fp16" "4096 4096 4096 bf16" "8192 8192 8192 fp16" "8192 8192 8192 bf16" \
           "16384 8192 8192 fp16"; do
    set -- $job
    bench "$1" "$2" "$3" --family hopper --dtype "$4" --passes 8 \
        --config 128x256x64,g16,w12,s4 --config 128x256x64,g16,w12,s4,sk \
        --config 256x128x64,g8,w12,s4 --config 256x128x64,g8,w12,s4,sk \
        >"$d/sk-passes/${1}x${2}x${3}-$4.txt" 2>&1 || echo "sk $job: exit $?" >>"$d/failures.txt"
done
close_folder "$name"
