#!/usr/bin/env bash
# Device only (issue 13): the family's C stream per tile (the table is made from this run's
# output by scripts/hopper/c_stream_table.py). Every tile of the compiled table (BLOCK_M 64, 128,
# 256; BLOCK_N 16 to 256; one or two consumer warpgroups), BLOCK_K 64 at its deepest ring
# (at most six stages), plain and swapped, on 16384x32768x64 fp16: one K iteration per
# tile, so the 1 GiB of C bounds the launch and the time per tile is the epilogue's. Two
# alternating passes, every launch checked against cuBLAS.
# origami-bench carried as target/devbin/origami-bench.xz. Writes $OUT/c-stream-table.tgz.
# Usage: scripts/hopper/c_stream_table.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench
run_folder c-stream-table
# tile, consumers -> the deepest ring (<= 6) that compiled clean for fp16
mapfile -t tiles < <(awk -F, 'NR > 2 && $3 == 64 && $6 == "fp16" && $11 == "ok" {
        k = $1 "x" $2 "x" $5; if ($4 > s[k]) s[k] = $4 }
    END { for (k in s) { split(k, t, "x"); st = s[k] > 6 ? 6 : s[k];
          print t[1] "x" t[2] "x64,g16,w" (t[3] == 2 ? 12 : 8) ",s" st } }' data/hopper_sm90.csv | sort -t x -k1,1n -k2,2n)
for variant in plain swap; do
    args=()
    for c in "${tiles[@]}"; do
        [ $variant = swap ] && c="$c,swap"
        args+=(--config "$c")
    done
    timeout 280 target/devbin/origami-bench run 16384 32768 64 --family hopper --dtype fp16 --passes 2 \
        "${args[@]}" </dev/null >"$OUT/c-stream-table/$variant.txt" 2>&1 ||
        echo "$variant: exit $?" >>"$OUT/c-stream-table/failures.txt"
done
close_folder c-stream-table
