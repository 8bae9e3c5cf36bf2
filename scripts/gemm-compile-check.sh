#!/usr/bin/env bash
# CI check of the GEMM kernel (csrc/gemm.cu), which build.rs does not compile (it is
# compiled per configuration at run time): nvcc compiles a sample of configurations for
# every architecture in ORIGAMI_CUDA_ARCHS (default 80;86;89;90), fp16, bf16 and tf32, and the
# registers and stack frame ptxas reports must equal the rows of data/gemm_registers.csv
# that the selector uses (so the shipped table cannot silently go stale).
# nvcc: $NVCC, else $CUDA_HOME/bin/nvcc, else PATH. Needs no GPU.
# Each config's -D defines come from the origami family (`origami-bench configs`;
# $ORIGAMI_BENCH, else `cargo run --release --bin origami-bench --`).
set -euo pipefail
cd "$(dirname "$0")/.."
NVCC=${NVCC:-${CUDA_HOME:+$CUDA_HOME/bin/nvcc}}
NVCC=${NVCC:-$(command -v nvcc || true)}
if [ -z "$NVCC" ] || [ ! -x "$NVCC" ]; then
    echo "gemm-compile-check: no nvcc (set NVCC or CUDA_HOME)" >&2
    exit 2
fi
IFS=';' read -r -a archs <<< "${ORIGAMI_CUDA_ARCHS:-80;86;89;90}"
read -r -a bench <<< "${ORIGAMI_BENCH:-cargo run --release --quiet --bin origami-bench --}"
# BM BN BK warps stages: small, mid and large tiles (valid on every architecture).
configs=("64 64 32 4 3" "128 128 32 8 2" "128 256 32 8 2" "128 256 32 4 2")
# (the last one spills: its table row must show the stack frame the selector rejects)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for dt in fp16 bf16 tf32; do
    "${bench[@]}" configs --dtype "$dt" > "$tmp/configs-$dt.csv"
done
for a in "${archs[@]}"; do
    for dt in fp16 bf16 tf32; do
        for c in "${configs[@]}"; do
            read -r bm bn bk w s <<< "$c"
            # block_m,block_n,block_k,num_warps,num_stages,warps_m,warps_n,smem_bytes,valid,defines,reason
            defines=$(grep "^$bm,$bn,$bk,$w,$s," "$tmp/configs-$dt.csv" | cut -d, -f10 || true)
            read -r -a flags <<< "$defines"
            if [ ${#flags[@]} -eq 0 ]; then
                echo "FAIL config ${bm}x${bn}x${bk} w$w s$s is not in the origami family"; fail=1; continue
            fi
            row=$(grep "^sm_$a,$dt,$bm,$bn,$bk,$w,$s," data/gemm_registers.csv || true)
            if [ "$(echo "$row" | cut -d, -f13)" = 0 ]; then
                # over this architecture's shared memory (tf32's fp32 C tile on sm_86/89)
                echo "skip sm_$a $dt ${bm}x${bn}x${bk} w$w s$s: invalid there (table row valid=0)"; continue
            fi
            log=$tmp/log
            "$NVCC" -arch=sm_"$a" -cubin -std=c++17 -Xptxas -v "${flags[@]}" -o "$tmp/k.cubin" csrc/gemm.cu > "$log" 2>&1 || {
                echo "FAIL compile sm_$a $dt ${bm}x${bn}x${bk} w$w s$s"; cat "$log"; fail=1; continue; }
            regs=$(grep -o 'Used [0-9]* registers' "$log" | grep -o '[0-9]*' | head -n 1)
            stack=$(grep -o '[0-9]* bytes stack frame' "$log" | grep -o '^[0-9]*' | head -n 1)
            want_regs=$(echo "$row" | cut -d, -f8)
            want_stack=$(echo "$row" | cut -d, -f11)
            if [ "$regs" != "$want_regs" ] || [ "$stack" != "$want_stack" ]; then
                echo "FAIL table sm_$a $dt ${bm}x${bn}x${bk} w$w s$s: ptxas $regs regs / $stack B stack, table '$want_regs' / '$want_stack'"
                fail=1
            else
                echo "ok   sm_$a $dt ${bm}x${bn}x${bk} w$w s$s: $regs registers, $stack B stack frame"
            fi
        done
    done
done
exit $fail
