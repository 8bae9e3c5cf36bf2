#!/usr/bin/env bash
# Device only. The `cluster` switch (pairs of CTAs sharing B by TMA multicast) through the
# project's runner: `origami-bench run --family hopper` with two tiles, each with and without
# `cluster`, on shapes around the issue's goals (checked against cuBLAS, CUDA graphs over
# rotated inputs, cuBLAS in the same process), fp16 and bf16, each run under `timeout`.
# origami-bench carried as target/devbin/origami-bench.xz. Writes $OUT/cluster-runner.txt
# (the runs' tables) and $OUT/cluster-runner.jsonl (one `--format json` report per run).
set -u
B=target/devbin/origami-bench
[ -x "$B" ] || (cd target/devbin && xz -d -f -k origami-bench.xz && chmod +x origami-bench)
cfgs="--config 128x256x64,g8,w12,s4 --config 128x256x64,g8,w12,s4,cluster --config 256x128x64,g8,w12,s4 --config 256x128x64,g8,w12,s4,cluster"
for dt in fp16 bf16; do
    for shape in "4096 4096 4096" "8192 8192 8192" "4097 4103 4104" "6000 1536 7168" "2048 7168 18432" "16384 8192 8192"; do
        timeout 120 $B run $shape --family hopper --dtype $dt $cfgs >> "$OUT/cluster-runner.txt" 2>&1 ||
            echo "$shape $dt: exit $?" >> "$OUT/cluster-runner.txt"
        timeout 120 $B run $shape --family hopper --dtype $dt $cfgs --format json >> "$OUT/cluster-runner.jsonl" 2>> "$OUT/stderr.txt" ||
            echo "$shape $dt json: exit $?" >> "$OUT/stderr.txt"
    done
done
cat "$OUT/cluster-runner.txt"
