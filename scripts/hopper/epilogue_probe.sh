#!/usr/bin/env bash
# Device only (issue 13): why wide tiles stream C slower. The development harness
# (scripts/hopper/harness.cu, nvcc on the device) built for six tiles and the epilogue
# experiments of csrc/hopper_gemm.cu (HG_EXP_EPI 0: the kernel as it is; 1: no C stores;
# 2: neither the shared-memory writes nor the stores; 3: stores with an L2 evict-first
# policy; 4: every earlier store must have read its buffer before the next chunk), timed on
# 16384x32768x64 fp16 (C's 1 GiB bounds it) at GROUP_SIZE_M 16, C by TMA (and from
# registers for the kernel as it is); then Nsight Compute's warp states and per-instruction
# stall samples (WarpStateStats, SourceCounters) for four of the tiles as they are.
# Writes $OUT/epilogue-probe.tgz (times.csv, ncu/*.csv, build logs).
# The HG_EXP_EPI builds exist in the kernel of commit b99d327 only (the next commit replaced
# the epilogue they probe): run this script on a checkout of that commit.
# Usage: scripts/hopper/epilogue_probe.sh
set -u
grep -q HG_EXP_EPI csrc/hopper_gemm.cu || {
    echo "epilogue_probe.sh: this kernel has no HG_EXP_EPI builds (they are in commit b99d327)" >&2
    exit 2
}
. scripts/device_lib.sh
run_folder epilogue-probe
D=$OUT/epilogue-probe
BIN=${EPI_BIN:-/tmp/epi-bin}
mkdir -p "$BIN" "$D/ncu" "$D/build"
START=$SECONDS
# stop starting new work after LIMIT_S seconds (the call's limit is 600), keep what ran
LIMIT_S=${LIMIT_S:-470}
late() { [ $((SECONDS - START)) -gt "$LIMIT_S" ]; }
TILES="64x192x6x1 64x256x5x1 64x240x5x1 128x128x6x2 128x192x4x2 128x256x4x2"
PIDS=()
for c in $TILES; do
    [ -x "$BIN/hg_${c}_v4" ] && continue
    IFS=x read -r bm bn st co <<<"$c"
    for v in 0 1 2 3 4; do
        nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Icsrc \
            -DHG_BM="$bm" -DHG_BN="$bn" -DHG_STAGES="$st" -DHG_CONSUMERS="$co" -DHG_EXP_EPI="$v" \
            -Xptxas -v scripts/hopper/harness.cu -lcuda -lcublas \
            -o "$BIN/hg_${c}_v$v" >"$D/build/${c}_v$v.log" 2>&1 &
        PIDS+=($!)
    done
done
# only the builds: a bare `wait` would also wait for run_folder's dmon
[ ${#PIDS[@]} -gt 0 ] && wait "${PIDS[@]}"
echo "built in $((SECONDS - START)) s"
grep -h -E "registers|spill|warning|error" "$D"/build/*.log | sort | uniq -c | sort -rn | head
echo "tile,variant,mode,k,config,m,n,k2,dtype,kernel_us,cublas_us,kernel_tflops,cublas_tflops,rel_err,status" >"$D/times.csv"
for pass in 1 2; do
    echo "pass $pass at $((SECONDS - START)) s" >>"$D/errors.txt"
    for c in $TILES; do
        for v in 0 1 2 3 4; do
            [ $((SECONDS - START)) -gt "${LIMIT_T_S:-300}" ] && break 3
            line=$(timeout 60 "$BIN/hg_${c}_v$v" 16384 32768 64 fp16 16 tma 2>>"$D/errors.txt" | tail -1)
            echo "$c,$v,tma,64,$line" >>"$D/times.csv"
        done
        line=$(timeout 60 "$BIN/hg_${c}_v0" 16384 32768 64 fp16 16 regs 2>>"$D/errors.txt" | tail -1)
        echo "$c,0,regs,64,$line" >>"$D/times.csv"
    done
done
for c in 64x192x6x1 64x256x5x1 128x128x6x2 128x256x4x2; do
    late && break
    rep=$D/ncu/$c
    timeout 60 ncu --clock-control none -k regex:origami_hopper_gemm -c 1 \
        --section SpeedOfLight --section WarpStateStats --section SourceCounters \
        --section MemoryWorkloadAnalysis -o "$rep" "$BIN/hg_${c}_v0" 16384 32768 64 fp16 16 tma \
        >"$rep.out" 2>&1 || echo "$c: ncu exit $?" >>"$D/errors.txt"
    ncu -i "$rep.ncu-rep" --page details --csv >"$rep-details.csv" 2>>"$D/errors.txt"
    ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep-sass.csv" 2>>"$D/errors.txt"
done
echo "done in $((SECONDS - START)) s" >>"$D/errors.txt"
close_folder epilogue-probe
