#!/usr/bin/env bash
# Device only. The `auto` picks that a model change moved (LIST, by default
# scripts/hopper/swap_changed_picks.txt: each shape's pick before and after `swap` entered
# the hopper space; scripts/hopper/group_changed_picks.txt: before and after the one-wave
# group rule), both timed in one process beside cuBLAS (2 alternating passes; a pick of
# the origami family before is timed in a process of its own, with its own cuBLAS), each
# checked against cuBLAS. Summarized by scripts/hopper/swap_summary.py. Results tarred into
# $OUT/<NAME>-<dtype>.tgz (NAME: swap-picks by default).
# Usage: [LIST=FILE NAME=NAME] scripts/hopper/swap_picks.sh [DTYPE]
set -u
source scripts/device_lib.sh
devbin_ready origami-bench
dtype="${1:-fp16}"
list="${LIST:-scripts/hopper/swap_changed_picks.txt}"
name="${NAME:-swap-picks}-$dtype"
run_folder "$name"
d="$OUT/$name"
bench=target/devbin/origami-bench
grep -v '^#' "$list" | while read -r m n k fam0 pick0 fam1 pick1; do
    s="${m}x${n}x${k}"
    if [ "$fam0" = "$fam1" ]; then
        $bench run "$m" "$n" "$k" --family "$fam1" --dtype "$dtype" --config "$pick0" \
            --config "$pick1" --passes 2 --format json >"$d/both-$s.json" 2>>"$d/stderr.txt" ||
            echo "$s: exit $?" >>"$d/stderr.txt"
    else
        $bench run "$m" "$n" "$k" --family "$fam0" --dtype "$dtype" --config "$pick0" \
            --passes 2 --format json >"$d/before-$s.json" 2>>"$d/stderr.txt" ||
            echo "$s before: exit $?" >>"$d/stderr.txt"
        $bench run "$m" "$n" "$k" --family "$fam1" --dtype "$dtype" --config "$pick1" \
            --passes 2 --format json >"$d/after-$s.json" 2>>"$d/stderr.txt" ||
            echo "$s after: exit $?" >>"$d/stderr.txt"
    fi
done
python3 scripts/hopper/swap_summary.py "$d" "$list" | tee "$d/summary.txt"
close_folder "$name"
