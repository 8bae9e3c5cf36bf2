#!/usr/bin/env bash
# Build scripts/gemm_dev/harness.cu on the device machine and run it; logs under $OUT.
#
# Usage (from the repo root, on the GPU machine):
#   scripts/gemm_dev/run.sh check   # every valid config (this GPU's smem limit), fp16+bf16,
#                                   # correctness on odd shapes + cuFuncGetAttribute table,
#                                   # $JOBS harness processes in parallel (compiles dominate)
#   scripts/gemm_dev/run.sh time    # $CONFIGS timed at $SHAPES (fp16 unless $DTYPES), serially
#   scripts/gemm_dev/run.sh both
# Env: OUT (default ./gemm-dev-out), HARNESS_ARGS (e.g. --force-time), CONFIGS ("BMxBNxBK/wW/sS;..."), SHAPES ("MxNxK;..."),
#      DTYPES ("fp16 bf16"), SAMPLES (15 per round), ROUNDS (3), GROUP (8), JOBS (12), CHECK_SHAPES, NVCC
# Outputs: gpu.txt (nvidia-smi before/after), build.log, check.log, attrs.csv, time.log, time.csv,
#          time_attrs.csv, clocks.csv (nvidia-smi every 500 ms while timing)
set -uo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-both}
OUT=${OUT:-$PWD/gemm-dev-out}
mkdir -p "$OUT"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
SAMPLES=${SAMPLES:-15}
GROUP=${GROUP:-8}
JOBS=${JOBS:-12}
DTYPES=${DTYPES:-fp16}
SHAPES=${SHAPES:-"4096x4096x4096;8192x8192x8192;8192x28672x8192;1000x1000x1000;127x4095x4104"}
CHECK_SHAPES=${CHECK_SHAPES:-"1000x1000x1000;127x4095x4104;333x520x72;1536x1536x1536"}
CONFIGS=${CONFIGS:-"128x128x32/w4/s4;128x256x32/w8/s3;128x256x64/w8/s3;256x128x32/w8/s3;256x128x64/w8/s3;128x128x64/w4/s3;128x128x32/w8/s4"}
smi() { nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader >> "$OUT/gpu.txt" 2>&1; }
echo "# $(date -u +%FT%TZ) mode=$mode" >> "$OUT/gpu.txt"
smi
bin=/tmp/origami_gemm_harness
if ! "$NVCC" -O2 -std=c++17 -arch=sm_90 scripts/gemm_dev/harness.cu -o $bin -lcuda -lnvrtc -lcublas > "$OUT/build.log" 2>&1; then
  cat "$OUT/build.log"; exit 1
fi
rc=0
if [ "$mode" = check ] || [ "$mode" = both ]; then
  smem=232448  # sm_90 opt-in; the harness re-checks against the device's value
  tmp=$(mktemp -d)
  scripts/gemm_dev/configs.sh $smem valid | awk '{print $1}' > $tmp/all
  split -n r/$JOBS $tmp/all $tmp/part.
  for dt in fp16 bf16; do
    for p in $tmp/part.*; do
      timeout 500 $bin --dtype $dt --configs-file $p --shapes "$CHECK_SHAPES" --no-time \
        --attrs $p.$dt.attrs > $p.$dt.log 2>&1 &
    done
  done
  wait
  cat $tmp/part.*.log > "$OUT/check.log"
  { head -1 -q $tmp/part.*.attrs | head -1; tail -q -n +2 $tmp/part.*.attrs | sort -t, -k2,2 -k3,3n -k4,4n -k5,5n -k6,6n -k7,7n; } > "$OUT/attrs.csv"
  nfail=$(grep -c -E "FAIL|error" "$OUT/check.log" || true)
  echo "check: $(grep -c '^ATTR' "$OUT/check.log") compiled, $(grep -cE '^[0-9]+x' "$OUT/check.log") checks, $nfail failures"
  [ "$nfail" -eq 0 ] || { grep -E "FAIL|error" "$OUT/check.log" | head -20; rc=1; }
fi
if [ "$mode" = time ] || [ "$mode" = both ]; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 500 > "$OUT/clocks.csv" 2>&1 &
  smi_pid=$!
  for dt in $DTYPES; do
    timeout 550 $bin --dtype $dt --configs "$CONFIGS" --shapes "$SHAPES" --samples $SAMPLES --rounds ${ROUNDS:-3} --group $GROUP \
      --csv "$OUT/time.csv" --attrs "$OUT/time_attrs.csv" ${HARNESS_ARGS:-} 2>&1 | tee -a "$OUT/time.log" | grep -v '^ATTR' || rc=1
  done
  kill $smi_pid 2>/dev/null
  echo "sm clock during timing (MHz): $(awk -F', ' 'NR>1{print $2}' "$OUT/clocks.csv" | sort -n | uniq -c | sort -rn | head -5 | tr '\n' ' ')"
fi
smi
cat "$OUT/gpu.txt"
exit $rc
