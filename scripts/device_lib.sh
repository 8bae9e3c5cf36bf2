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
