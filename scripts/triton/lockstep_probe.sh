#!/usr/bin/env bash
# Device only. Whether a launch whose programs each run one tile pays its fill and epilogue
# in series (issue 11; docs/triton-tma.md, "One tile a program"): the twelve triton-tma
# configs of results/h200/triton-tma/lockstep-probe-configs.csv on shapes outside the seed
# and LLM lists where the 128x256 and 256x128 tiles make one wave of 48 to 120 programs and
# the smaller tiles several waves, K from 768 to 6144 (a fixed cost per program shrinks
# against the main loop as K grows, a rate does not), fp16 and bf16, three shuffled passes
# (tma_sweep.py --passes 3 --shuffle --seed 20261202), cuBLAS before and after, every
# launch checked.
# PROBE=1 (default; --seed 20261202), into lockstep-probe/: every row of a tile real,
#   128 x {12288, 18432, 22528, 30720} x {768, 1536, 3072, 6144};
#   256 x {6144, 15360} x {1536, 4096}.
# PROBE=2 (--seed 20261203; lockstep-probe2-configs.csv, the decode tiles added), into
# lockstep-probe2/: tiles with rows past M (whether the epilogue in series stores the
# whole tile or its real rows),
#   {8, 40} x {16384, 26624} x {512, 1024, 2048};
#   96 x {12288, 26624} x {1024, 3072};  200 x {8192, 14336} x {1024, 3072}.
# The folder is tarred into $OUT/NAME.tgz.
# Usage: [PROBE=1|2] scripts/triton/lockstep_probe.sh [DEADLINE_S]
set -u
shapes=()
case "${PROBE:-1}" in
  1) name=lockstep-probe seed=20261202 configs=results/h200/triton-tma/lockstep-probe-configs.csv
     for n in 12288 18432 22528 30720; do
       for k in 768 1536 3072 6144; do shapes+=(--shape "128x${n}x${k}"); done
     done
     for n in 6144 15360; do
       for k in 1536 4096; do shapes+=(--shape "256x${n}x${k}"); done
     done ;;
  2) name=lockstep-probe2 seed=20261203 configs=results/h200/triton-tma/lockstep-probe2-configs.csv
     for m in 8 40; do
       for n in 16384 26624; do
         for k in 512 1024 2048; do shapes+=(--shape "${m}x${n}x${k}"); done
       done
     done
     for n in 12288 26624; do
       for k in 1024 3072; do shapes+=(--shape "96x${n}x${k}"); done
     done
     for n in 8192 14336; do
       for k in 1024 3072; do shapes+=(--shape "200x${n}x${k}"); done
     done ;;
  *) echo "lockstep_probe.sh: PROBE is 1 or 2" >&2; exit 2 ;;
esac
d="$OUT/$name"
mkdir -p "$d"
nvidia-smi dmon -s pc -d 1 >"$d/dmon.txt" 2>&1 &
dmon=$!
python3 scripts/triton/tma_sweep.py --out "$d/run" "${shapes[@]}" --dtype fp16,bf16 \
    --configs "$configs" --workers 15 \
    --deadline-s "${1:-300}" --passes 3 --shuffle --seed "$seed" 2>"$d/run.log"
kill $dmon 2>/dev/null
tar czf "$OUT/$name.tgz" -C "$OUT" "$name" && rm -rf "$d"
