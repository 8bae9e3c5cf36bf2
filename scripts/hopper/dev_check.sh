#!/usr/bin/env bash
# Build scripts/hopper/harness.cu for a few configs (nvcc on the Hopper machine, in
# parallel) and run each on a few shapes in fp16 and bf16: correctness against cuBLAS and
# CUDA-graph timings beside cuBLAS, one CSV line per run (harness.cu says which).
# Usage (repository root, on the device): scripts/hopper/dev_check.sh OUT_DIR [SHAPES...]
#   SHAPES: MxNxK (default: a correctness and speed set)
set -uo pipefail
out=${1:?usage: dev_check.sh OUT_DIR [MxNxK ...]}
shift
mkdir -p "$out"
shapes=("$@")
if [ ${#shapes[@]} -eq 0 ]; then
    shapes=(256x256x64 1000x1000x1000 4097x4103x4104 4096x4096x4096 8192x8192x8192
            333x4096x14336 6000x1536x7168 4100x576x7168 128x14336x4096)
fi
configs=${HG_CONFIGS:-"128x256x4x2 256x128x4x2 128x128x6x2 128x192x4x2 128x128x4x1 64x256x4x1"}
source scripts/hopper/build_harness.sh
build_harness "$out/bin" "$configs"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
echo "config,m,n,k,dtype,kernel_us,cublas_us,kernel_tflops,cublas_tflops,rel_err,status" >"$out/hopper-dev.csv"
for s in "${shapes[@]}"; do
    IFS=x read -r m n k <<<"$s"
    for c in $configs; do
        for dt in fp16 bf16; do
            exe="$out/bin/hg_${c}_$dt"
            if [ ! -x "$exe" ]; then
                echo "$c,$m,$n,$k,$dt,,,,,,build failed" >>"$out/hopper-dev.csv"
                continue
            fi
            timeout 60 "$exe" "$m" "$n" "$k" "$dt" >>"$out/hopper-dev.csv" 2>>"$out/errors.txt" ||
                echo "$c,$m,$n,$k,$dt,,,,,,exit $?" >>"$out/hopper-dev.csv"
        done
    done
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
rm -rf "$out/bin"
column -s, -t "$out/hopper-dev.csv" | head -120
