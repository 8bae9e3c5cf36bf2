#!/usr/bin/env bash
# Device only. The Hopper family's fastest configs at 4096^3 and 8192^3 against cuBLAS in
# the two regimes of an H100 at its 700 W cap, fp16 and bf16 (`origami-bench run`):
#  sustained: after WARM_S (5) seconds of back-to-back cuBLAS, cuBLAS and the configs in
#             6 alternating passes (--warm-s 5 --passes 6), so every pass runs capped;
#  burst:     after 8 s idle, cuBLAS, the config, the config, cuBLAS (--passes 2: one
#             config per run, a few tens of ms of work, before the cap's clock drop),
#             three runs per config.
# One JSON report per run under $OUT/FOLDER/ (best-regimes), `nvidia-smi dmon` beside,
# tarred into $OUT. origami-bench carried as target/devbin/origami-bench.xz.
# Usage: [REGIMES="sustained burst"] [SIZES="4096 8192"] [DTYPES="fp16 bf16"]
#        [CONFIGS_4096="..."] [CONFIGS_8192="..."] scripts/hopper/best_regimes.sh [FOLDER]
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
name=${1:-best-regimes}
regimes=" ${REGIMES:-sustained burst} "
d="$OUT/$name"
run_folder "$name"
ob=target/devbin/origami-bench
configs() {
    if [ "$1" = 4096 ]; then
        echo "${CONFIGS_4096:-128x256x64,g16,w12,s4 128x256x64,g16,w12,s3}"
    else
        echo "${CONFIGS_8192:-128x256x64,g16,w12,s4 256x128x64,g8,w12,s4}"
    fi
}
for dt in ${DTYPES:-fp16 bf16}; do
    for s in ${SIZES:-4096 8192}; do
        args=()
        for c in $(configs $s); do args+=(--config "$c"); done
        if [[ $regimes == *" sustained "* ]]; then
            $ob run $s $s $s --family hopper --dtype $dt --warm-s "${WARM_S:-5}" --passes 6 "${args[@]}" \
                --format json >"$d/sustained-${s}-$dt.json" 2>"$d/sustained-${s}-$dt.err" || echo "sustained $s $dt: exit $?" >>"$d/failures.txt"
        fi
        [[ $regimes == *" burst "* ]] || continue
        for c in $(configs $s); do
            for rep in 1 2 3; do
                sleep 8
                $ob run $s $s $s --family hopper --dtype $dt --passes 2 --config "$c" --format json \
                    >"$d/burst-${s}-$dt-$c-$rep.json" 2>"$d/burst-${s}-$dt-$c-$rep.err" || echo "burst $s $dt $c: exit $?" >>"$d/failures.txt"
            done
        done
    done
done
close_folder "$name"
