#!/usr/bin/env bash
# The Hopper kernel (csrc/hopper_gemm.cu) compiles for sm_90a with nvcc for a set of
# configs, fp16 and bf16, with no spills and no ptxas warning (ptxas warns, C7509 /
# C7510 / C7515 and the like, when it serializes wgmma); and csrc/hopper_wgmma.cuh is what
# scripts/hopper/gen_wgmma.py writes, and the registers ptxas reports are the ones
# data/hopper_sm90.csv (scripts/hopper/ptxas_table.sh) holds. No GPU needed (CI runs it with
# PyPI's nvcc).
# Usage: CUDA_HOME=... scripts/hopper/compile_check.sh
set -euo pipefail
nvcc="${CUDA_HOME:?set CUDA_HOME}/bin/nvcc"
python3 scripts/hopper/gen_wgmma.py --check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
# BMxBNxSTAGESxCONSUMERS[xCLUSTER] (a clustered instance has its unclustered row's figures)
for c in 128x256x4x2 256x128x4x2 128x192x4x2 128x128x6x2 128x64x8x2 128x128x4x1 64x256x4x1 \
         64x128x8x1 64x64x8x1 128x256x4x2x2 64x128x8x1x2 \
         128x144x6x2x2; do
    IFS=x read -r bm bn st co cl <<<"$c"
    for dt in fp16 bf16; do
        flag=""
        [ "$dt" = bf16 ] && flag="-DHG_BF16"
        log="$tmp/$c.$dt.log"
        if ! "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Icsrc -cubin \
            -Xptxas -v -DHG_BM="$bm" -DHG_BN="$bn" -DHG_STAGES="$st" -DHG_CONSUMERS="$co" \
            -DHG_CLUSTER="${cl:-1}" $flag -o "$tmp/k.cubin" csrc/hopper_gemm.cu >"$log" 2>&1; then
            echo "FAIL $c $dt: nvcc failed"; cat "$log"; status=1; continue
        fi
        # both kernels of the file (the GEMM and split-K's reduction): registers of each,
        # and any nonzero spill or stack figure
        regs=$(grep -o "Used [0-9]* registers" "$log" | grep -o "[0-9]*" | paste -sd/)
        spills=$(grep -oE "[0-9]+ bytes (stack frame|spill stores|spill loads)" "$log" |
            grep -vc "^0 " || true)
        if grep -qi "warning" "$log" || [ "$spills" != 0 ]; then
            echo "FAIL $c $dt: registers $regs, nonzero stack/spill figures: $spills"
            grep -iE "warning|spill" "$log"
            status=1
        else
            gemm_regs=${regs##*/}
            row=$(grep -E "^$bm,$bn,64,$st,$co,$dt," data/hopper_sm90.csv || true)
            table_regs=$(echo "$row" | cut -d, -f7)
            if [ "$table_regs" != "$gemm_regs" ]; then
                echo "FAIL $c $dt: ptxas says $gemm_regs registers, data/hopper_sm90.csv '${table_regs}'"
                status=1
            else
                echo "ok   $c $dt: registers $regs (as in the table), no spills, no warnings"
            fi
        fi
    done
done
exit $status
