#!/usr/bin/env bash
# Device only. Stream-K (`,sk`) against the whole-tile persistent grid on large shapes, and
# the per-tile cost of a short K loop:
#   big/      4096^3 and 8192^3, fp16 and bf16: the two best tiles of the brute force,
#             each whole-tile and Stream-K, four alternating passes beside cuBLAS;
#   llm/      each line of JOBS ("M N K CONFIG..."; the model's picks of the LLM shapes with
#             at least 1000 rows that do not split K, and the same with Stream-K), fp16,
#             two alternating passes (JOB_DTYPES, JOB_PASSES: other types, more passes);
#   kloop/    16384x32768xK for K = 64 .. 2048 with 128x256 (s4) and 128x128 (s6, s4)
#             tiles, fp16, two passes: the slope over K is a K iteration's cost and the
#             intercept a tile's epilogue and hand-over.
# Every launch is checked against cuBLAS first (origami-bench run). origami-bench carried
# as target/devbin/origami-bench.xz.
# Usage: [PARTS="big llm kloop"] scripts/hopper/streamk_check.sh JOBS [FOLDER]
set -u
. scripts/device_lib.sh
jobs=${1:-}
[ -f "$jobs" ] || { echo "streamk_check.sh: give a jobs file (M N K CONFIG... per line)" >&2; exit 2; }
devbin_ready origami-bench
name=${2:-streamk}
parts=" ${PARTS:-big llm kloop} "
d="$OUT/$name"
run_folder "$name"
mkdir -p "$d/big" "$d/llm" "$d/kloop"
bench() { timeout "${RUN_TIMEOUT_S:-150}" target/devbin/origami-bench run "$@" </dev/null; }
for dt in fp16 bf16; do
    [[ $parts == *" big "* ]] || break
    for s in 4096 8192; do
        bench $s $s $s --family hopper --dtype $dt --passes 4 \
            --config 128x256x64,g16,w12,s4 --config 128x256x64,g16,w12,s4,sk \
            --config 256x128x64,g8,w12,s4 --config 256x128x64,g8,w12,s4,sk \
            >"$d/big/${s}-$dt.txt" 2>&1 || echo "big ${s} $dt: exit $?" >>"$d/failures.txt"
    done
done
while read -r m n k rest; do
    [[ $parts == *" llm "* ]] || break
    [ -z "$m" ] && continue
    args=()
    for c in $rest; do args+=(--config "$c"); done
    for dt in ${JOB_DTYPES:-fp16}; do
        sfx=""
        [ -n "${JOB_DTYPES:-}" ] && sfx="-$dt"
        bench "$m" "$n" "$k" --family hopper --dtype "$dt" --passes "${JOB_PASSES:-2}" "${args[@]}" \
            >"$d/llm/${m}x${n}x${k}$sfx.txt" 2>&1 || echo "llm ${m}x${n}x${k} $dt: exit $?" >>"$d/failures.txt"
    done
done <"$jobs"
for k in 64 128 256 512 1024 2048; do
    [[ $parts == *" kloop "* ]] || break
    bench 16384 32768 $k --family hopper --dtype fp16 --passes 2 \
        --config 128x256x64,g16,w12,s4 --config 128x128x64,g16,w12,s6 \
        --config 128x128x64,g16,w12,s4 \
        >"$d/kloop/16384x32768x$k.txt" 2>&1 || echo "kloop $k: exit $?" >>"$d/failures.txt"
done
close_folder "$name"
