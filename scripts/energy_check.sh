#!/usr/bin/env bash
# Device only. `origami-bench run --energy-s 1` (energy per GEMM under sustained load,
# NVML's energy counter tick to tick) on a few shapes and configs of the hopper and origami
# families beside cuBLAS, the 4096^3 run twice (its spread), with `nvidia-smi dmon` logging
# power and clocks alongside as a cross-check. origami-bench carried as
# target/devbin/origami-bench.xz. Writes $OUT/energy-*.txt and $OUT/energy.json (the JSON
# reports, one after another).
set -u
B=target/devbin/origami-bench
[ -x "$B" ] || (cd target/devbin && xz -d -f -k origami-bench.xz && chmod +x origami-bench)
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,enforced.power.limit --format=csv > "$OUT/gpu.txt"
(nvidia-smi dmon -s pc -d 1 > "$OUT/dmon.txt" 2>&1 &)
big="--config 128x256x64,g8,w12,s4 --config 256x128x64,g8,w12,s4 --config 128x128x64,g8,w12,s6"
run() {  # NAME ARGS...
    local name=$1
    shift
    timeout 120 $B run "$@" --energy-s 1 > "$OUT/energy-$name.txt" 2>&1 || echo "exit $?" >> "$OUT/energy-$name.txt"
    timeout 120 $B run "$@" --energy-s 1 --format json >> "$OUT/energy.json" 2>> "$OUT/stderr.txt" || true
}
run 4096-hopper 4096 4096 4096 --family hopper $big
run 8192-hopper 8192 8192 8192 --family hopper $big
run 1x6144-hopper 1 6144 4096 --family hopper --config 64x128x64,g8,w8,s8 --config 64x128x64,g8,w8,s8,k2
run 4096-origami 4096 4096 4096 --family origami --top 3
run 2048x7168-hopper 2048 7168 18432 --family hopper $big
cat "$OUT"/energy-*.txt
