# Sourced by the device scripts (scripts/hopper/best_*.sh, scripts/energy/study_space.sh):
# the carried binaries unpacked, `nvidia-smi dmon` beside a run, the run's folder tarred
# into $OUT (the device call returns few files).

# devbin_ready NAME...: target/devbin/NAME, unpacked from the carried NAME.xz if needed.
devbin_ready() {
    for b in "$@"; do
        [ -x "target/devbin/$b" ] || (cd target/devbin && xz -d -f "$b.xz" && chmod +x "$b")
    done
}

# run_folder NAME: $OUT/NAME created, the GPU's name, driver, power limit and top SM clock
# in its gpu.txt, `nvidia-smi dmon -s pc -d 1` into its dmon.txt.
run_folder() {
    mkdir -p "$OUT/$1"
    nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv \
        >"$OUT/$1/gpu.txt" 2>&1
    nvidia-smi dmon -s pc -d 1 >"$OUT/$1/dmon.txt" 2>&1 &
    DMON_PID=$!
}

# close_folder NAME: dmon stopped, $OUT/NAME tarred into $OUT/NAME.tgz and removed.
close_folder() {
    kill "$DMON_PID" 2>/dev/null
    tar czf "$OUT/$1.tgz" -C "$OUT" "$1" && rm -rf "${OUT:?}/$1"
}

# compare_builds FOLDER M N K CONFIG...: the hopper configs on one shape timed by this
# build (target/devbin/origami-bench, "new") and the one before (origami-bench-old, "old"),
# each in its own process, fp16 and bf16 (or the types in $DTYPES), four alternating passes
# beside cuBLAS, every launch checked against cuBLAS: $OUT/FOLDER/MxNxK-DTYPE-{new,old}.txt,
# failures in $OUT/FOLDER/failures.txt.
compare_builds() {
    local dir=$1 m=$2 n=$3 k=$4
    shift 4
    local args=() c dt b bin
    for c in "$@"; do args+=(--config "$c"); done
    for dt in ${DTYPES:-fp16 bf16}; do
        for b in new old; do
            bin=target/devbin/origami-bench
            [ $b = old ] && bin=target/devbin/origami-bench-old
            timeout 150 $bin run "$m" "$n" "$k" --family hopper --dtype $dt --passes 4 "${args[@]}" \
                >"$OUT/$dir/${m}x${n}x${k}-$dt-$b.txt" 2>&1 ||
                echo "${m}x${n}x${k} $dt $b: exit $?" >>"$OUT/$dir/failures.txt"
        done
    done
}

# ncu_csv OUT KERNEL_REGEX SKIP COUNT CMD...: Nsight Compute on CMD (clocks left alone:
# --clock-control none; Speed Of Light, Memory Workload, Occupancy and Launch sections),
# the COUNT launches after the first SKIP whose kernel matches, as CSV in OUT.csv (CMD's
# own stdout before ncu's table), stderr in OUT.err; a failure is named in failures.txt
# beside OUT. At most NCU_TIMEOUT_S seconds (120).
ncu_csv() {
    local out=$1 kre=$2 skip=$3 count=$4
    shift 4
    timeout "${NCU_TIMEOUT_S:-120}" ncu --clock-control none -k "regex:$kre" --launch-skip "$skip" \
        --launch-count "$count" --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section Occupancy --section LaunchStats --csv "$@" >"$out.csv" 2>"$out.err" ||
        echo "$(basename "$out"): exit $?" >>"$(dirname "$out")/failures.txt"
}

# The counters of the triton-tma L2 probes (narrow_n_groups.sh, sharing_probe.sh): duration, the
# L2 sectors the SMs read and look up (hits, misses), the L2's busy share, DRAM bytes read and
# the tensor pipe's busy share.
TMA_L2_METRICS=gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum
TMA_L2_METRICS+=,lts__t_sectors_srcunit_tex_lookup_hit.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum
TMA_L2_METRICS+=,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
TMA_L2_METRICS+=,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed

# tma_ncu_probe DIR METRICS M N K CONFIG [NCU_ARGS...]: Nsight Compute (clocks left alone) on
# one launch of the triton-tma kernel of CONFIG on M x N x K after the compiling one
# (scripts/triton/tma_one_launch.py, fresh random inputs), the comma-separated METRICS and any
# NCU_ARGS (sections), as CSV in DIR/MxNxK_CONFIG.csv (CONFIG's commas as "_"), stderr beside
# it; a failure is named in DIR/failures.txt. At most 150 s.
tma_ncu_probe() {
    local dir=$1 metrics=$2 m=$3 n=$4 k=$5 config=$6 name
    shift 6
    name="${m}x${n}x${k}_$(echo "$config" | tr ',' '_')"
    timeout 150 ncu --clock-control none -k "regex:matmul_tma" --launch-skip 1 --launch-count 1 \
        "$@" --metrics "$metrics" --csv python3 scripts/triton/tma_one_launch.py "$m" "$n" "$k" \
        "$config" >"$dir/$name.csv" 2>"$dir/$name.err" || echo "$name: exit $?" >>"$dir/failures.txt"
}
