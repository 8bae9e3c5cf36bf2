#!/usr/bin/env bash
# Device only. The model's hopper pick of every shape of the seed and LLM lists beside the
# same config with `cluster` (pairs of CTAs sharing B by multicast), through the runner
# (`origami-bench run --family hopper --config PICK --config PICK,cluster`: checked against
# cuBLAS, CUDA graphs over rotated inputs, cuBLAS in the same process); a pick with split-K
# is paired with its whole-tile config (cluster takes whole tiles). The data a cluster cost
# in the model would be fitted on. origami-bench and origami-select carried as
# target/devbin/*.xz. Usage: scripts/hopper/cluster_pairs.sh [DTYPE] [LISTS...]
set -u
for b in origami-bench origami-select; do
    [ -x "target/devbin/$b" ] || (cd target/devbin && xz -d -f -k "$b.xz" && chmod +x "$b")
done
dtype="${1:-fp16}"
shift || true
lists=("$@")
[ ${#lists[@]} -gt 0 ] || lists=(seed llm)
for list in "${lists[@]}"; do
    grep -v '^#' "data/${list}_shapes.csv" | tail -n +2 | cut -d, -f1-3 | sort -u -t, -k1,1n -k2,2n -k3,3n |
        while IFS=, read -r m n k; do
            pick=$(target/devbin/origami-select "$m" "$n" "$k" --family hopper --dtype "$dtype" 2>/dev/null |
                awk '/^pick:/ {print $2; exit}')
            [ -n "$pick" ] || continue
            whole=$(echo "$pick" | sed -E 's/,k[0-9]+//; s/,sk//')
            timeout 120 target/devbin/origami-bench run "$m" "$n" "$k" --family hopper --dtype "$dtype" \
                --config "$whole" --config "$whole,cluster" --format json \
                >"$OUT/pairs-$list-$dtype-${m}x${n}x${k}.json" 2>>"$OUT/pairs-stderr.txt" ||
                echo "${m}x${n}x${k}: exit $?" >>"$OUT/pairs-stderr.txt"
        done
done
