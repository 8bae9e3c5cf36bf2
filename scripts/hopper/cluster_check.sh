#!/usr/bin/env bash
# Device only. Clusters of two CTAs with B multicast (HG_CLUSTER=2 in csrc/hopper_gemm.cu)
# against the same tile without (HG_CLUSTER=1), in the development harness (nvcc on the
# Hopper machine; each run checks C against cuBLAS and times both with CUDA graphs), fp16
# and bf16, every run under `timeout` (a barrier that never completes would hang). The
# pair is run again after the clustered one so that power and clock drift show.
# Usage: scripts/hopper/cluster_check.sh   (writes $OUT/cluster.csv and the build logs)
set -u
. scripts/hopper/build_harness.sh
bin="$OUT/bin"
configs="128x256x4x2x1 128x256x4x2x2 256x128x4x2x1 256x128x4x2x2"
build_harness "$bin" "$configs" > "$OUT/build.txt" 2>&1
cat "$OUT/build.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > "$OUT/gpu.txt"
echo "config,m,n,k,dtype,kernel_us,cublas_us,kernel_tflops,cublas_tflops,rel_err,status" > "$OUT/cluster.csv"
run() {  # BIN M N K DTYPE
    timeout 60 "$bin/hg_$1_$5" "$2" "$3" "$4" "$5" 8 >> "$OUT/cluster.csv" 2>> "$OUT/stderr.txt" ||
        echo "\"$1\",$2,$3,$4,$5,,,,,,exit $?" >> "$OUT/cluster.csv"
}
# a smoke test first: if the clustered instance fails or hangs, time only the others
if timeout 30 "$bin/hg_128x256x4x2x2_fp16" 1024 1024 1024 fp16 8 > "$OUT/smoke.txt" 2>&1 &&
    grep -q ',ok' "$OUT/smoke.txt"; then
    cl2=1
else
    cl2=0
    echo "clustered instance failed its smoke test:" && cat "$OUT/smoke.txt"
fi
for dt in ${DTYPES:-fp16 bf16}; do
    for shape in "4096 4096 4096" "8192 8192 8192" "4097 4103 4104" "6000 1536 7168" "2048 7168 18432" "333 4096 14336"; do
        for tile in 128x256x4x2 256x128x4x2; do
            run "${tile}x1" $shape "$dt"
            [ "$cl2" = 1 ] && run "${tile}x2" $shape "$dt"
            run "${tile}x1" $shape "$dt"
        done
    done
done
cat "$OUT/cluster.csv"
