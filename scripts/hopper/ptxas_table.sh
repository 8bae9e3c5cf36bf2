#!/usr/bin/env bash
# The Hopper family's compiled-resource table (data/hopper_sm90.csv): every config of the
# family's space (`origami-bench configs --family hopper` lists it; this script walks the
# same rule: BM 64/128/256, BN 16..256 in steps of 16, BK 64, one or two consumer
# warpgroups, 2 to 8 stages, the accumulators within the consumers' registers, shared
# memory within 227 KiB) compiled by nvcc for sm_90a in fp16 and bf16, ptxas's registers,
# stack and spill bytes and warnings per config. No GPU needed (PyPI's nvcc works).
# Usage: CUDA_HOME=... scripts/hopper/ptxas_table.sh > data/hopper_sm90.csv  [JOBS=2]
set -euo pipefail
nvcc="${CUDA_HOME:?set CUDA_HOME}/bin/nvcc"
jobs=${JOBS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
configs=$(python3 - <<'PY'
for bm in (64, 128, 256):
    for bn in range(16, 257, 16):
        for c in (1, 2):
            if bm % (64 * c):
                continue
            if (bm // c // 64) * bn // 2 > (128 if c == 2 else 192):
                continue
            cw = 64 if bn % 64 == 0 else (32 if bn % 32 == 0 else 16)
            for s in range(2, 9):
                if s * (bm + bn) * 128 + c * 2 * 64 * cw * 2 + 1024 + 16 * s <= 232448:
                    for dt in ("fp16", "bf16"):
                        print(f"{bm} {bn} {s} {c} {dt}")
PY
)
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
