#!/usr/bin/env bash
# Device only. The triton-tma family's whole default space (tma_sweep.py's 124 configs) brute
# forced over one shape list, fp16 and bf16, each launch timed in three passes, the two after
# the first each in a random order of its own (tma_sweep.py --passes 3 --shuffle), cuBLAS
# before and after each shape, every launch checked against cuBLAS; `nvidia-smi dmon` beside
# it. On a GPU the family's constants were not fitted on (the H200), this is a second held-out
# test of every goal of issue 11 (docs/triton-tma.md, "A second GPU's brute force"). The folder
# is tarred into $OUT/NAME.tgz (the device call returns few files).
# LIST unaligned: the three shapes of the unaligned goal (3000^3, 1000x7168x2056,
# 4097x4104x4104, as the validation runs time them).
# Usage: scripts/triton/device_brute_force.sh NAME seed|llm|unaligned [DEADLINE_S] [SEED]
set -u
name=${1:?name}
list=${2:?seed, llm or unaligned}
shapes=(--shapes "$list")
if [[ $list == unaligned ]]; then
  shapes=(--shape 3000x3000x3000 --shape 1000x7168x2056 --shape 4097x4104x4104)
fi
. scripts/device_lib.sh
run_folder "$name"
python3 scripts/triton/tma_sweep.py --out "$OUT/$name/run" "${shapes[@]}" --dtype fp16,bf16 \
    --workers 15 --deadline-s "${3:-400}" --passes 3 --shuffle --seed "${4:-20261207}" \
    2>"$OUT/$name/run.log"
close_folder "$name"
