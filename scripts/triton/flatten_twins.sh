#!/usr/bin/env bash
# Device only (issue 11): is FLATTEN's launch of 128x256x64 faster than the plain one on the
# large shapes? The four-pass validations say 5 % (median of 31 pairs), the sweeps' four
# timings say no (0.99): two runs whose configs are timed in different orders under the
# 700 W cap. Here the two twins alone, per round in the order plain, flatten, flatten, plain
# (each slot ten batches of ten back-to-back launches on the same buffers,
# scripts/triton/tma_bimodal.py --keep), four rounds, on six large shapes in fp16 and two in
# bf16: each twin's slots before and after the other's, so that neither gains from its place.
# Writes $OUT/flatten-twins/<shape>-<dtype>.csv, tarred into $OUT/flatten-twins.tgz.
# Usage: scripts/triton/flatten_twins.sh
set -u
. scripts/device_lib.sh
run_folder flatten-twins
D="$OUT/flatten-twins"
plain=128x256x64,g8,w8,s3
flat=$plain,flatten
twins() { # M N K DTYPE
    timeout 240 python3 scripts/triton/tma_bimodal.py "$1" "$2" "$3" $plain $flat $flat $plain \
        --rounds 4 --reps 10 --keep --dtype "$4" >"$D/$1x$2x$3-$4.csv" 2>"$D/$1x$2x$3-$4.err" ||
        echo "$1x$2x$3 $4: exit $?" >>"$D/failures.txt"
}
for s in "16384 8192 8192" "8192 8192 8192" "4100 8192 28672" "16384 4096 7168" "2048 4096 7168" \
    "4096 4096 4096"; do
    twins $s fp16
done
twins 16384 8192 8192 bf16
twins 4100 8192 28672 bf16
close_folder flatten-twins
ls -la "$OUT"
