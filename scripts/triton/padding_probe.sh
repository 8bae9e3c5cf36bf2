#!/usr/bin/env bash
# Device only. What the zero-filled rows of a tensor-descriptor box cost (issue 11;
# docs/triton-tma.md, "Zero-filled rows take their own time"): the nine triton-tma configs of
# results/h100/triton-tma/padding-probe-configs.csv on shapes whose grids stay the same while
# the rows past N or M change (all outside the seed and LLM lists but 2048x576x7168, an LLM
# shape, which the probe fits leave out: tma_fit_lib.sh's tma_probe_run), three shuffled passes
# (tma_sweep.py --passes 3 --shuffle), cuBLAS before and after, every launch checked.
# PROBE=1 (default; fp16, --seed 20261129; it chose the model's form), into padding-probe/:
#   one wave, rows past N: 2048 x {512, 544, 576, 640, 704, 768} x 7168;
#   one wave, rows past M: {512, 520, 576, 640} x 1024 x 7168;
#   several waves, rows past M: {1024, 1040, 1100, 1152} x 8192 x 4096.
# PROBE=2 (fp16 and bf16, --seed 20261130; it tests that form on shapes of neither list nor
# the first probe), into padding-probe2/:
#   one wave, rows past N: 1536 x {512, 520, 600, 680, 760} x 4096;
#   one wave, rows past M: {768, 776, 840, 900} x 1536 x 8192;
#   several waves, rows past N: 4096 x {3072, 3080, 3200} x 4096.
# The folder is tarred into $OUT/NAME.tgz.
# Usage: [PROBE=1|2] scripts/triton/padding_probe.sh [DEADLINE_S]
set -u
shapes=()
case "${PROBE:-1}" in
  1) name=padding-probe dtypes=fp16 seed=20261129
     for n in 512 544 576 640 704 768; do shapes+=(--shape "2048x${n}x7168"); done
     for m in 512 520 576 640; do shapes+=(--shape "${m}x1024x7168"); done
     for m in 1024 1040 1100 1152; do shapes+=(--shape "${m}x8192x4096"); done ;;
  2) name=padding-probe2 dtypes=fp16,bf16 seed=20261130
     for n in 512 520 600 680 760; do shapes+=(--shape "1536x${n}x4096"); done
     for m in 768 776 840 900; do shapes+=(--shape "${m}x1536x8192"); done
     for n in 3072 3080 3200; do shapes+=(--shape "4096x${n}x4096"); done ;;
  *) echo "padding_probe.sh: PROBE is 1 or 2" >&2; exit 2 ;;
esac
d="$OUT/$name"
mkdir -p "$d"
nvidia-smi dmon -s pc -d 1 >"$d/dmon.txt" 2>&1 &
dmon=$!
python3 scripts/triton/tma_sweep.py --out "$d/run" "${shapes[@]}" --dtype "$dtypes" \
    --configs results/h100/triton-tma/padding-probe-configs.csv --workers 15 \
    --deadline-s "${1:-400}" --passes 3 --shuffle --seed "$seed" 2>"$d/run.log"
kill $dmon 2>/dev/null
tar czf "$OUT/$name.tgz" -C "$OUT" "$name" && rm -rf "$d"
