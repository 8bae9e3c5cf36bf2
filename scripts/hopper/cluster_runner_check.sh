#!/usr/bin/env bash
# Device only. The `cluster` switch (pairs of CTAs sharing B by TMA multicast) through the
# project's runner: `origami-bench run --family hopper` with two tiles, each with and without
# `cluster`, on shapes around the issue's goals (checked against cuBLAS, CUDA graphs over
# rotated inputs, cuBLAS in the same process), fp16 and bf16, each run under `timeout`.
# origami-bench carried as target/devbin/origami-bench.xz. Writes $OUT/cluster-runner.jsonl
# (one `--format json` report per run) and prints each config's A/cuBLAS.
set -u
B=target/devbin/origami-bench
[ -x "$B" ] || (cd target/devbin && xz -d -f -k origami-bench.xz && chmod +x origami-bench)
cfgs="--config 128x256x64,g8,w12,s4 --config 128x256x64,g8,w12,s4,cluster --config 256x128x64,g8,w12,s4 --config 256x128x64,g8,w12,s4,cluster"
for dt in fp16 bf16; do
    for shape in "4096 4096 4096" "8192 8192 8192" "4097 4103 4104" "6000 1536 7168" "2048 7168 18432" "16384 8192 8192"; do
        timeout 120 $B run $shape --family hopper --dtype $dt $cfgs --format json >> "$OUT/cluster-runner.jsonl" 2>> "$OUT/stderr.txt" ||
            echo "$shape $dt json: exit $?" >> "$OUT/stderr.txt"
    done
done
python3 - "$OUT/cluster-runner.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    s = d["shape"]
    row = [f"{c['config']} {c['vs_cublas']:.3f}" for c in d["configs"] if c.get("vs_cublas")]
    print(f"{s['m']}x{s['n']}x{s['k']} {s.get('dtype', '')}: cuBLAS {d['cublas']['median_ms'] * 1e3:.1f} us; " + "; ".join(row))
PY
