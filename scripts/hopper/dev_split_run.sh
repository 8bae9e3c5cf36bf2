#!/usr/bin/env bash
# Device only. Split-K and Stream-K through the project's runner (origami-bench run
# --family hopper, each config checked against cuBLAS with C poisoned and the workspace
# zeroed, CUDA graphs, cuBLAS in the same process), then the family's brute force over the
# seed list with split-K in the space. Stream-K runs under `timeout` (its CTAs wait on each
# other's flags: a fault would hang). origami-bench carried as target/devbin/origami-bench.xz.
# Usage: scripts/hopper/dev_split_run.sh [SWEEP_BUDGET_S] (0: the six shapes only)
set -u
B=target/devbin/origami-bench
[ -x "$B" ] || (cd target/devbin && xz -d -f -k origami-bench.xz && chmod +x origami-bench)
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > "$OUT/gpu.txt"
cfgs() { for d in "" ",k2" ",k3" ",k4" ",sk"; do printf -- "--config %s%s " "$1" "$d"; done; }
run() {  # M N K DTYPE BASE
    timeout "${RUN_TIMEOUT_S:-120}" $B run "$1" "$2" "$3" --family hopper --dtype "$4" $(cfgs "$5") \
        > "$OUT/split-$1x$2x$3-$4.txt" 2>&1 || echo "exit $?" >> "$OUT/split-$1x$2x$3-$4.txt"
}
run 333 4096 14336 fp16 128x128x64,g8,w12,s6
run 333 4096 14336 bf16 128x128x64,g8,w12,s6
run 1 6144 4096 fp16 64x128x64,g8,w8,s8
run 1000 1000 1000 fp16 128x128x64,g8,w12,s6
run 4097 4103 4104 fp16 128x128x64,g8,w12,s6
run 4096 4096 4096 fp16 128x256x64,g8,w12,s4
cat "$OUT"/split-*.txt
[ "${1:-330}" = 0 ] && exit 0
bash scripts/hopper/sweep_seed.sh "${1:-330}" seed > "$OUT/seed.log" 2>&1
tail -n 5 "$OUT/seed.log"
