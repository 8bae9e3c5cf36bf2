#!/usr/bin/env bash
# Device only. The CUTLASS tuning study's space on the project's mma.sync kernel
# (csrc/gemm.cu), in fp16 or in the study's own data type, fp32 on TF32 tensor cores
# (DTYPE=tf32; tile_k then counts fp32 elements, as the study's): tile_m, tile_n in {128, 256} (256x256 needs more registers than a thread has: left out),
# tile_k in {16, 32}, 2 to 4 stages, cp.async cache-all vs cache-global, predicated vs
# unpredicated loads; 4 warps on 128x128, 8 on the others: 72 configs. Each shape (square,
# multiples of every tile) is one `origami-bench run` of all 72 beside cuBLAS, with energy
# under sustained load (--energy-s, default 0.5 s per config). One JSON report per shape
# under $OUT/study/ ($OUT/study-tf32/ for tf32), `nvidia-smi dmon` beside, tarred into $OUT.
# origami-bench carried as target/devbin/origami-bench.xz.
# Usage: [DTYPE=fp16|bf16|tf32] ENERGY_S=0.5 scripts/energy/study_space.sh [SHAPE ...]
#        (default 1024 2048 4096 8192)
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
dtype=${DTYPE:-fp16}
folder=study
[ "$dtype" = fp16 ] || folder=study-$dtype
d="$OUT/$folder"
run_folder "$folder"
args=()
for t in 128x128:4 128x256:8 256x128:8; do
    for bk in 16 32; do
        for s in 2 3 4; do
            for sw in "" ",cache_all" ",unpredicated" ",cache_all,unpredicated"; do
                args+=(--config "${t%:*}x$bk,g8,w${t#*:},s$s$sw")
            done
        done
    done
done
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(1024 2048 4096 8192)
for n in "${shapes[@]}"; do
    target/devbin/origami-bench run $n $n $n --family origami --dtype "$dtype" --energy-s "${ENERGY_S:-0.5}" \
        "${args[@]}" --format json >"$d/$n.json" 2>"$d/$n.err" || echo "$n: exit $?" >>"$d/failures.txt"
done
close_folder "$folder"
