#!/usr/bin/env bash
# Device only. `origami-bench run --family auto` on every shape of the seed and LLM lists:
# the model chooses the family (hopper or origami) and its config per shape, the runner
# times that pick (CUDA graphs, verified against cuBLAS) with cuBLAS beside it in the same
# process. One JSON report per shape under $OUT/auto-<list>-<dtype>/, the choice on
# stderr (*.err), then scripts/hopper/auto_summary.py's table. origami-bench carried as
# target/devbin/origami-bench.xz. Usage: scripts/hopper/auto_check.sh [DTYPE] [LISTS...]
# FAMILY=origami (or hopper) times that family's pick instead (folders family-<list>-<dtype>).
set -u
[ -x target/devbin/origami-bench ] || (cd target/devbin && xz -d -f origami-bench.xz && chmod +x origami-bench)
dtype="${1:-fp16}"
shift || true
lists=("$@")
[ ${#lists[@]} -gt 0 ] || lists=(seed llm)
for list in "${lists[@]}"; do
    dir="$OUT/${FAMILY:-auto}-$list-$dtype"
    mkdir -p "$dir"
    grep -v '^#' "data/${list}_shapes.csv" | tail -n +2 | cut -d, -f1-3 | sort -u -t, -k1,1n -k2,2n -k3,3n |
        while IFS=, read -r m n k; do
            target/devbin/origami-bench run "$m" "$n" "$k" --family "${FAMILY:-auto}" --dtype "$dtype" \
                --format json >"$dir/${m}x${n}x${k}.json" 2>"$dir/${m}x${n}x${k}.err" ||
                echo "${m}x${n}x${k}: exit $?" >>"$dir/failures.txt"
        done
    python3 scripts/hopper/auto_summary.py "$dir" | tee "$dir/summary.txt"
done
