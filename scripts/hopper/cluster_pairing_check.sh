#!/usr/bin/env bash
# Device only. Clusters that pair along N (pairs sharing A by multicast; csrc/hopper_gemm.cu
# pair_n, chosen by model::throughput::cluster_pairing): (1) correctness on shapes whose
# pairs run past N (C by TMA and from registers); (2) the one-wave shapes where cuBLAS
# keeps its lead, each config alone and clustered, in alternating passes beside cuBLAS;
# (3) scripts/hopper/cluster_pairs.sh over both lists. Each `origami-bench run` checks
# every config against cuBLAS. Results tarred into $OUT/cluster-n.tgz.
# Usage: scripts/hopper/cluster_pairing_check.sh [DTYPE]
set -u
source scripts/device_lib.sh
devbin_ready origami-bench origami-select
dtype="${1:-fp16}"
run_folder cluster-n
d="$OUT/cluster-n"
bench=target/devbin/origami-bench
{
    # 3 x 3 tiles of 256 x 128: pairs along N (a tie, BM > BN), the last pair's second
    # tile past N; N = 296 stores C by TMA, N = 300 from registers
    for shape in "704 296 1024" "700 300 1024" "4100 576 7168"; do
        set -- $shape
        $bench run "$1" "$2" "$3" --family hopper --dtype "$dtype" \
            --config 256x128x64,g8,w12,s4 --config 256x128x64,g8,w12,s4,cluster \
            --config 128x144x64,g16,w12,s4,cluster --format json \
            >"$d/check-${1}x${2}x${3}.json" 2>>"$d/stderr.txt" || echo "check $shape: exit $?" >>"$d/stderr.txt"
    done
    # one-wave shapes: alone and clustered, 4 alternating passes
    for spec in "4100 576 7168 128x144x64,g16,w12,s4 128x144x64,g16,w12,s6 128x128x64,g16,w12,s6" \
                "2048 576 7168 128x144x64,g16,w12,s6 64x144x64,g16,w8,s8" \
                "333 4096 4096 128x96x64,g16,w12,s7 128x112x64,g16,w12,s6 128x128x64,g16,w12,s6" \
                "4100 1536 7168 128x192x64,g16,w12,s4 128x256x64,g16,w12,s4"; do
        set -- $spec
        m=$1 n=$2 k=$3
        shift 3
        args=()
        for c in "$@"; do args+=(--config "$c" --config "$c,cluster"); done
        $bench run "$m" "$n" "$k" --family hopper --dtype "$dtype" "${args[@]}" --passes 4 \
            --format json >"$d/onewave-${m}x${n}x${k}.json" 2>>"$d/stderr.txt" ||
            echo "onewave $m $n $k: exit $?" >>"$d/stderr.txt"
    done
} 
OUT_SAVED="$OUT"
OUT="$d" scripts/hopper/cluster_pairs.sh "$dtype" seed llm
OUT="$OUT_SAVED"
close_folder cluster-n
