#!/usr/bin/env bash
# The Hopper family's compiled-resource table (data/hopper_sm90.csv): every valid config of
# the family's space on a 227 KiB GPU (`origami-bench configs --family hopper`; $ORIGAMI_BENCH,
# else `cargo run --release --bin origami-bench --`) compiled by nvcc for sm_90a in fp16 and
# bf16, ptxas's registers, stack and spill bytes and warnings per config. No GPU needed
# (PyPI's nvcc works).
# Usage: CUDA_HOME=... scripts/hopper/ptxas_table.sh > data/hopper_sm90.csv  [JOBS=2]
set -euo pipefail
nvcc="${CUDA_HOME:?set CUDA_HOME}/bin/nvcc"
jobs=${JOBS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the configs and their defines from the family itself (one owner of the rule)
read -r -a bench <<< "${ORIGAMI_BENCH:-cargo run --release --quiet --bin origami-bench --}"
configs=$(for dt in fp16 bf16; do
    "${bench[@]}" configs --family hopper --dtype "$dt" --smem-limit 232448 |
        awk -F, -v dt="$dt" 'NR > 1 && $8 == 1 { print $1, $2, $5, $6, dt }'
done)
compile_one() {
    read -r bm bn s c dt <<<"$1"
    flag=""; [ "$dt" = bf16 ] && flag="-DHG_BF16"
    log="$tmp/$bm.$bn.$s.$c.$dt.log"
    if "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Icsrc -cubin -Xptxas -v \
        -DHG_BM="$bm" -DHG_BN="$bn" -DHG_STAGES="$s" -DHG_CONSUMERS="$c" $flag \
        -o "$tmp/$bm.$bn.$s.$c.$dt.cubin" csrc/hopper_gemm.cu >"$log" 2>&1; then
        # the GEMM's line is the last "Used N registers" (the reduction kernel comes first)
        regs=$(grep -o "Used [0-9]* registers" "$log" | tail -n 1 | grep -o "[0-9]*")
        stack=$(grep -o "[0-9]* bytes stack frame" "$log" | tail -n 1 | grep -o "^[0-9]*")
        spill=$(grep -o "[0-9]* bytes spill stores" "$log" | tail -n 1 | grep -o "^[0-9]*")
        warn=$(grep -ci "warning" "$log" || true)
        echo "$bm,$bn,64,$s,$c,$dt,$regs,$stack,$spill,$warn,ok"
    else
        echo "$bm,$bn,64,$s,$c,$dt,,,,,nvcc failed"
    fi
}
export -f compile_one
export nvcc tmp
echo "# csrc/hopper_gemm.cu compiled for sm_90a by scripts/hopper/ptxas_table.sh ($("$nvcc" --version | tail -n 1))"
echo "bm,bn,bk,stages,consumers,dtype,registers,stack_bytes,spill_store_bytes,ptxas_warnings,status"
echo "$configs" | xargs -P "$jobs" -I{} bash -c 'compile_one "$@"' _ {} | sort -t, -k1,1n -k2,2n -k4,4n -k5,5n -k6,6
