#!/usr/bin/env bash
# The Hopper kernel's two epilogues side by side (C by TMA store from swizzled shared-memory
# chunks, or from registers) with the development harness: correctness on edge shapes,
# CUDA-graph timings beside cuBLAS on large ones, nvidia-smi dmon sampling clocks and
# power meanwhile. Device only (nvcc there). Usage: scripts/hopper/epilogue_check.sh OUT_DIR
set -uo pipefail
out=${1:?usage: epilogue_check.sh OUT_DIR}
mkdir -p "$out"
configs=${HG_CONFIGS:-"128x256x4x2 256x128x4x2 128x192x4x2 128x128x6x2 128x64x8x2 64x256x4x1"}
source scripts/hopper/build_harness.sh
build_harness "$out/bin" "$configs"
nvidia-smi dmon -s pc -d 1 >"$out/dmon.txt" 2>&1 &
dmon=$!
csv="$out/epilogue.csv"
echo "config,m,n,k,dtype,kernel_us,cublas_us,kernel_tflops,cublas_tflops,rel_err,status" >"$csv"
run() {  # shape epilogue
    IFS=x read -r m n k <<<"$1"
    for c in $configs; do
        for dt in fp16 bf16; do
            timeout 60 "$out/bin/hg_${c}_$dt" "$m" "$n" "$k" "$dt" 8 "$2" >>"$csv" \
                2>>"$out/errors.txt" || echo "$c,$m,$n,$k,$dt,,,,,,exit $? ($2)" >>"$csv"
        done
    done
}
for s in 256x256x64 100x200x64 1000x1000x1000 4097x4103x4104 4096x4104x4104 777x1032x520; do
    run "$s" tma
done
for s in 4096x4096x4096 8192x8192x8192 6000x1536x7168 4100x576x7168; do
    run "$s" tma
    run "$s" regs
done
kill "$dmon"
rm -rf "$out/bin"
echo "runs: $(($(wc -l <"$csv") - 1)), not ok: $(grep -vc ',ok$' "$csv" | awk '{print $1 - 1}')"
grep -v ',ok$' "$csv" | head
