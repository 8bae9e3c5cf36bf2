#!/usr/bin/env bash
# Device only (issue 15): how reproducible the energy order of a decode shape's configs is.
# The eight configs the committed spread sweep measured (results/h100/energy/spread2s-llm/)
# on three decode shapes, each measured twice over 2 s NVML windows
# (`origami-bench run --energy-s 2`, cuBLAS beside, every launch checked against cuBLAS).
# Writes $OUT/decode-repeat.tgz (one JSON report per shape and repetition).
# origami-bench carried as target/devbin/origami-bench.xz.
# Usage: scripts/energy/decode_repeat.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
run_folder decode-repeat
shape_configs() {
    python3 - "$1" <<'PY'
import csv, sys
m, n, k = sys.argv[1].split("x")
rows = csv.DictReader(open("results/h100/energy/spread2s-llm/energy.csv"))
print(" ".join(r["config"] for r in rows if (r["m"], r["n"], r["k"]) == (m, n, k)))
PY
}
for s in 1x6144x4096 17x6144x4096 1x1536x7168; do
    args=()
    for c in $(shape_configs $s); do args+=(--config "$c"); done
    for rep in 1 2; do
        timeout 150 target/devbin/origami-bench run ${s//x/ } --family hopper --dtype fp16 \
            --energy-s 2 "${args[@]}" --format json </dev/null >"$OUT/decode-repeat/$s-$rep.json" \
            2>"$OUT/decode-repeat/$s-$rep.err" || echo "$s $rep: exit $?" >>"$OUT/decode-repeat/failures.txt"
    done
done
close_folder decode-repeat
