#!/usr/bin/env bash
# The project's runner on the Hopper kernel (`origami-bench run --family hopper`: NVRTC for
# sm_90a, tensor maps through the driver, the check against cuBLAS, CUDA-graph timings) on
# a few shapes and configs, fp16 and bf16. Device only; origami-bench carried as
# target/devbin/origami-bench.xz. Output: $OUT/run/runs.jsonl (one `run --format json`
# document per line) and $OUT/run/stderr.txt.
set -u
(cd target/devbin && xz -d -f origami-bench.xz && chmod +x origami-bench)
B=target/devbin/origami-bench
mkdir -p "$OUT/run"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv
for dt in fp16 bf16; do
    for s in "4096 4096 4096" "8192 8192 8192" "6000 1536 7168" "4100 576 7168" \
             "4097 4103 4104" "333 4096 14336"; do
        # shellcheck disable=SC2086
        out=$(timeout 120 "$B" run $s --family hopper --dtype "$dt" \
            --config 128x256x64,g8,w12,s4 --config 256x128x64,g8,w12,s4 \
            --config 128x192x64,g8,w12,s4 --config 64x256x64,g8,w8,s4 \
            --format json 2>>"$OUT/run/stderr.txt")
        echo "$s $dt rc=$?"
        echo "$out" | tr -d '\n' >>"$OUT/run/runs.jsonl"
        echo >>"$OUT/run/runs.jsonl"
    done
done
tail -n 20 "$OUT/run/stderr.txt"
