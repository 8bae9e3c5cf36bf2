#!/usr/bin/env bash
# Compare the SASS of csrc/hopper_gemm.cu at two git revisions (CPU only): the instances of
# scripts/hopper/compile_check.sh, fp16 and bf16, compiled by nvcc for sm_90a and
# disassembled by nvdisasm (Triton's, or $NVDISASM); per instance the instruction count of
# each revision and the opcodes whose counts differ ("same opcodes" when none do). A
# refactor of the kernel that leaves every instance's opcodes alike changes register
# assignment and order at most; it still needs a device run before it lands.
# Usage: CUDA_HOME=... scripts/hopper/sass_compare.sh REV_A REV_B
set -euo pipefail
a=${1:?give two revisions}
b=${2:?give two revisions}
nvcc="${CUDA_HOME:?set CUDA_HOME}/bin/nvcc"
nvdisasm=${NVDISASM:-$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm"))' 2>/dev/null || true)}
[ -x "$nvdisasm" ] || { echo "sass_compare.sh: no nvdisasm (set NVDISASM)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for rev in "$a" "$b"; do
    mkdir -p "$tmp/$rev/csrc"
    for f in $(git ls-tree --name-only "$rev" csrc/); do git show "$rev:$f" >"$tmp/$rev/$f"; done
done
for c in 128x256x4x2 256x128x4x2 128x192x4x2 128x128x6x2 128x64x8x2 128x128x4x1 64x256x4x1 \
         64x128x8x1 64x64x8x1 128x256x4x2x2 64x128x8x1x2 128x144x6x2x2; do
    IFS=x read -r bm bn st co cl <<<"$c"
    for dt in fp16 bf16; do
        flag=""
        [ "$dt" = bf16 ] && flag="-DHG_BF16"
        for rev in "$a" "$b"; do
            "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I"$tmp/$rev/csrc" -cubin \
                -DHG_BM="$bm" -DHG_BN="$bn" -DHG_STAGES="$st" -DHG_CONSUMERS="$co" \
                -DHG_CLUSTER="${cl:-1}" $flag -o "$tmp/$rev.cubin" "$tmp/$rev/csrc/hopper_gemm.cu"
            "$nvdisasm" -c "$tmp/$rev.cubin" 2>/dev/null |
                sed -nE 's/^\s*\/\*[0-9a-f]+\*\/\s+(@!?U?P[0-9A-Z]+\s+)?([A-Z0-9_.]+).*/\2/p' |
                sort | uniq -c >"$tmp/$rev.ops"
        done
        na=$(awk '{s += $1} END {print s}' "$tmp/$a.ops")
        nb=$(awk '{s += $1} END {print s}' "$tmp/$b.ops")
        if cmp -s "$tmp/$a.ops" "$tmp/$b.ops"; then
            echo "$c $dt: $na / $nb instructions, same opcodes"
        else
            echo "$c $dt: $na / $nb instructions, opcodes differ:"
            # diff exits 1 on a difference: the listing goes on
            { diff "$tmp/$a.ops" "$tmp/$b.ops" || true; } | sed -n 's/^[<>]/  &/p'
        fi
    done
done
