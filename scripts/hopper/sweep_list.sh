#!/usr/bin/env bash
# scripts/hopper/sweep_seed.sh with the run's folder kept whole for the trip back: gpu.txt,
# an `nvidia-smi dmon` log and the sweep's log beside its files, tarred into
# $OUT/sweep-LIST[-DTYPE].tgz (the device call returns few files, at most 16 MiB each).
# Usage: scripts/hopper/sweep_list.sh [BUDGET_S] [LIST] [DTYPE]
set -u
. scripts/device_lib.sh
list=${2:-seed}
dtype=${3:-fp16}
name="sweep-$list"
[ "$dtype" = fp16 ] || name="$name-$dtype"
run_folder "$name"
bash scripts/hopper/sweep_seed.sh "${1:-480}" "$list" "$dtype" 2>&1 | tee "$OUT/$name/log.txt"
close_folder "$name"
ls -la "$OUT"
