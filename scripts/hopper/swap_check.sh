#!/usr/bin/env bash
# Device only. Swapped operands (`swap`: the kernel computes C^T = B A^T, csrc/hopper_gemm.cu
# c_trans): (1) correctness on shapes that take every store path of a swapped launch (C by
# TMA from column-by-column chunks of 64, 32 and 16 columns; C from registers when the
# user's N is not a multiple of 8; split-K's transposed partial tiles), each config checked
# against cuBLAS by `origami-bench run`; (2) the shapes whose rows are few (333), each
# config plain and swapped in 4 alternating passes beside cuBLAS, and a large shape where
# swapping buys nothing (the epilogue's cost); (3) scripts/hopper/auto_check.sh over both
# lists with `swap` in the space (LISTS="seed llm" by default); (4) GROUP_SIZE_M 1 to 16 in
# launches of one wave, plain and swapped. Results tarred into $OUT/swap-<dtype>-p<parts>.tgz.
# Usage: [LISTS=...] scripts/hopper/swap_check.sh [DTYPE] [PARTS]   (PARTS: any of 1 2 3 4;
# default 123)
set -u
source scripts/device_lib.sh
devbin_ready origami-bench origami-select
dtype="${1:-fp16}"
parts="${2:-123}"
name="swap-$dtype-p$parts"
run_folder "$name"
d="$OUT/$name"
bench=target/devbin/origami-bench
if [[ $parts == *1* ]]; then
    # shape | configs (all swapped); N = 4096 / 296: C by TMA; N = 333 / 300: from registers
    while read -r m n k cfgs; do
        args=()
        for c in $cfgs; do args+=(--config "$c"); done
        $bench run "$m" "$n" "$k" --family hopper --dtype "$dtype" "${args[@]}" --format json \
            >"$d/check-${m}x${n}x${k}.json" 2>>"$d/stderr.txt" || echo "check $m $n $k: exit $?" >>"$d/stderr.txt"
    done <<'EOF'
333 4096 4096 128x112x64,g16,w12,s7,swap 128x96x64,g1,w12,s7,swap 64x80x64,g4,w8,s6,swap
704 296 1024 256x128x64,g8,w12,s4,swap 256x128x64,g8,w12,s4,swap,k3 128x80x64,g8,w12,s4,swap 64x16x64,g1,w8,s4,swap
1000 333 1024 128x64x64,g8,w12,s4,swap 128x64x64,g8,w12,s4,swap,k2 128x48x64,g2,w8,s4,swap
700 300 1024 256x128x64,g8,w12,s4,swap 128x48x64,g4,w8,s4,swap,k4
1 6144 4096 128x16x64,g16,w8,s7,swap,k2 64x16x64,g16,w8,s8,swap
EOF
fi
if [[ $parts == *2* ]]; then
    # plain and swapped, 4 alternating passes beside cuBLAS
    while read -r m n k cfgs; do
        args=()
        for c in $cfgs; do args+=(--config "$c" --config "$c,swap"); done
        $bench run "$m" "$n" "$k" --family hopper --dtype "$dtype" "${args[@]}" --passes 4 \
            --format json >"$d/pairs-${m}x${n}x${k}.json" 2>>"$d/stderr.txt" ||
            echo "pairs $m $n $k: exit $?" >>"$d/stderr.txt"
    done <<'EOF'
333 4096 4096 128x96x64,g16,w12,s7 128x112x64,g16,w12,s7 128x112x64,g16,w12,s6 128x128x64,g16,w12,s6 128x176x64,g16,w12,s5
333 4096 14336 128x208x64,g16,w12,s5,k2 128x112x64,g16,w12,s7
333 24576 1536 128x192x64,g16,w12,s4 128x176x64,g6,w12,s5
333 7168 16384 128x176x64,g16,w12,s5
4100 576 7168 128x144x64,g16,w12,s6 128x144x64,g16,w12,s4
2048 4096 7168 128x256x64,g16,w12,s4 128x256x64,g1,w12,s4
8192 8192 8192 128x256x64,g16,w12,s4
EOF
fi
if [[ $parts == *3* ]]; then
    OUT_SAVED="$OUT"
    OUT="$d" scripts/hopper/auto_check.sh "$dtype" ${LISTS:-seed llm}
    OUT="$OUT_SAVED"
fi
if [[ $parts == *4* ]]; then
    # GROUP_SIZE_M in launches of one wave (every tile resident at once), plain and
    # swapped: 2 alternating passes beside cuBLAS
    while read -r m n k swaps cfgs; do
        args=()
        for c in $cfgs; do
            for g in 1 2 4 8 16; do
                cg="${c/,g16,/,g$g,}"
                for s in ${swaps//,/ }; do
                    if [ "$s" = swap ]; then args+=(--config "$cg,swap"); else args+=(--config "$cg"); fi
                done
            done
        done
        $bench run "$m" "$n" "$k" --family hopper --dtype "$dtype" "${args[@]}" --passes 2 \
            --format json >"$d/groups-${m}x${n}x${k}.json" 2>>"$d/stderr.txt" ||
            echo "groups $m $n $k: exit $?" >>"$d/stderr.txt"
    done <<'EOF'
333 4096 4096 plain,swap 128x96x64,g16,w12,s7 128x112x64,g16,w12,s6 128x128x64,g16,w12,s6
4100 576 7168 plain 128x144x64,g16,w12,s6 128x144x64,g16,w12,s4 128x192x64,g16,w12,s4
2048 576 7168 plain 64x144x64,g16,w8,s8
4100 1536 7168 plain 128x192x64,g16,w12,s4
EOF
fi
close_folder "$name"
