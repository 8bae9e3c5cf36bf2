#!/usr/bin/env bash
# Device only (issue 15): how reproducible the energy order of a shape's configs is.
# The configs a committed spread sweep measured (ENERGY_CSV, default
# results/h100/energy/spread2s-llm/energy.csv) on some shapes (SHAPES, default three decode
# shapes), each measured twice over 2 s NVML windows (`origami-bench run --energy-s 2`,
# cuBLAS beside, every launch checked against cuBLAS). Writes $OUT/NAME.tgz (NAME default
# decode-repeat; one JSON report per shape and repetition). The binary carried as
# target/devbin/BIN.xz (BIN default origami-bench).
# Usage: [ENERGY_CSV=F SHAPES="MxNxK ..." NAME=N BIN=B] scripts/energy/decode_repeat.sh
set -u
. scripts/device_lib.sh
BIN=${BIN:-origami-bench}
NAME=${NAME:-decode-repeat}
export ENERGY_CSV=${ENERGY_CSV:-results/h100/energy/spread2s-llm/energy.csv}
devbin_ready "$BIN"
run_folder "$NAME"
shape_configs() {
    python3 - "$1" <<'PY'
import csv, os, sys
m, n, k = sys.argv[1].split("x")
rows = csv.DictReader(open(os.environ["ENERGY_CSV"]))
print(" ".join(r["config"] for r in rows if (r["m"], r["n"], r["k"]) == (m, n, k)))
PY
}
for s in ${SHAPES:-1x6144x4096 17x6144x4096 1x1536x7168}; do
    args=()
    for c in $(shape_configs $s); do args+=(--config "$c"); done
    for rep in 1 2; do
        timeout 150 "target/devbin/$BIN" run ${s//x/ } --family hopper --dtype fp16 \
            --energy-s 2 "${args[@]}" --format json </dev/null >"$OUT/$NAME/$s-$rep.json" \
            2>"$OUT/$NAME/$s-$rep.err" || echo "$s $rep: exit $?" >>"$OUT/$NAME/failures.txt"
    done
done
close_folder "$NAME"
