#!/usr/bin/env bash
# On the device: every line of JOBS ("DTYPE M N K CONFIG...", scripts/correction/validate_jobs.py;
# a launch named twice is timed once)
# timed by `origami-bench run --family hopper --passes 4` (each launch checked against cuBLAS,
# four alternating passes beside cuBLAS): $OUT/validate/MxNxK-DTYPE.txt, failures in
# $OUT/validate/failures.txt, the folder tarred into $OUT/validate.tgz. Binaries carried in
# target/devbin (scripts/device_lib.sh). Usage: scripts/correction/validate.sh JOBS [FIRST LAST]
set -uo pipefail
source scripts/device_lib.sh
jobs=${1:?give the jobs file}
first=${2:-1}
last=${3:-100000}
devbin_ready origami-bench
run_folder validate
i=0
while read -r dt m n k rest; do
  i=$((i + 1))
  [[ $i -lt $first || $i -gt $last ]] && continue
  args=()
  for c in $(tr ' ' '\n' <<<"$rest" | awk '!seen[$0]++'); do args+=(--config "$c"); done
  timeout 200 target/devbin/origami-bench run "$m" "$n" "$k" --family hopper --dtype "$dt" \
    --passes 4 "${args[@]}" </dev/null >"$OUT/validate/${m}x${n}x${k}-$dt.txt" 2>&1 ||
    echo "${m}x${n}x${k} $dt: exit $?" >>"$OUT/validate/failures.txt"
done <"$jobs"
close_folder validate
