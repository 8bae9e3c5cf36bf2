#!/usr/bin/env bash
# Split-K in the Hopper kernel with the development harness: for shapes that leave SMs
# idle or hold few tiles, every config of a small set at 1, 2, 3, 4, 6 and 8 splits of K
# (fp16; bf16 at 1 and 4 for the check), correctness against cuBLAS and CUDA-graph timings
# (GEMM + reduction) beside cuBLAS. Device only (nvcc there).
# Usage: scripts/hopper/splitk_check.sh OUT_DIR
set -uo pipefail
out=${1:?usage: splitk_check.sh OUT_DIR}
mkdir -p "$out"
configs=${HG_CONFIGS:-"128x256x4x2 128x192x4x2 128x128x6x2 128x64x8x2 64x128x8x1 64x256x4x1"}
source scripts/hopper/build_harness.sh
build_harness "$out/bin" "$configs"
csv="$out/splitk.csv"
echo "config,m,n,k,dtype,kernel_us,cublas_us,kernel_tflops,cublas_tflops,rel_err,status" >"$csv"
nvidia-smi dmon -s pc -d 1 >"$out/dmon.txt" 2>&1 &
dmon=$!
for s in 333x4096x14336 128x14336x4096 16x6144x4096 1000x1000x1000 777x1032x520 \
         4100x576x7168 1000x4096x4096 6000x1536x7168; do
    IFS=x read -r m n k <<<"$s"
    kt=$(((k + 63) / 64))
    for c in $configs; do
        for sp in 1 2 3 4 6 8; do
            kps=$(((kt + sp - 1) / sp))
            for dt in fp16 bf16; do
                if [ "$dt" = bf16 ] && [ "$sp" != 1 ] && [ "$sp" != 4 ]; then continue; fi
                timeout 60 "$out/bin/hg_${c}_$dt" "$m" "$n" "$k" "$dt" 8 tma "$kps" >>"$csv" \
                    2>>"$out/errors.txt" || echo "$c,$m,$n,$k,$dt,,,,,,exit $? (kps $kps)" >>"$csv"
            done
        done
    done
done
kill "$dmon"
rm -rf "$out/bin"
echo "runs: $(($(wc -l <"$csv") - 1)), not ok: $(($(grep -vc ',ok$' "$csv") - 1))"
grep -v ',ok$' "$csv" | head
