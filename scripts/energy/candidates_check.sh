#!/usr/bin/env bash
# Device only (issue 15): the energy and sustained-time picks against the least energy and
# the best sustained time among the strongest candidates of a shape, a stand-in for the
# brute force (whose 1196 configs x a 1 s window per shape the lease cannot hold). Per
# shape (M,N,K lines of FILE): the union of the hopper family's first 20 configs by
# predicted energy, 10 by sustained time and 20 by burst time (`origami-select
# --objective ... --top N --gpu h100-sxm`, its text kept as picks-MxNxK-OBJECTIVE.txt), each timed beside
# cuBLAS and its energy measured over an ENERGY_S-second window (`origami-bench run
# --energy-s`, checked against cuBLAS). Scored on a CPU by scripts/energy/candidates_score.py.
# EXTRA=CSV adds its M,N,K,CONFIG lines to their shapes' candidates (e.g. another rule's
# picks, measured in the same window series). Binaries carried as target/devbin/*.xz.
# Usage: ENERGY_S=1 [EXTRA=CSV] candidates_check.sh NAME FILE
set -u
source scripts/device_lib.sh
devbin_ready origami-bench origami-select
name=${1:?name}
file=${2:?shapes file (M,N,K lines)}
run_folder "$name"
d="$OUT/$name"
sel=target/devbin/origami-select
grep -v '^#' "$file" | while IFS=, read -r m n k; do
    [ -n "$k" ] || continue
    s="${m}x${n}x${k}"
    for spec in energy:20 sustained:10 time:20; do
        obj=${spec%%:*}
        $sel "$m" "$n" "$k" --family hopper --gpu h100-sxm --objective "$obj" --top "${spec##*:}" \
            >"$d/picks-$s-$obj.txt" 2>/dev/null
    done
    args=()
    for c in $({ cat "$d"/picks-"$s"-*.txt | awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+x/ {print $2}'
                 [ -n "${EXTRA:-}" ] && grep "^$m,$n,$k," "$EXTRA" | cut -d, -f4-; } | sort -u); do
        args+=(--config "$c")
    done
    timeout 300 target/devbin/origami-bench run "$m" "$n" "$k" --family hopper "${args[@]}" \
        --energy-s "${ENERGY_S:-1}" --format json >"$d/run-$s.json" 2>>"$d/stderr.txt" ||
        echo "$s: exit $?" >>"$d/stderr.txt"
done
close_folder "$name"
