# Sourced by the device scripts of scripts/hopper/: build_harness BIN_DIR CONFIGS compiles
# scripts/hopper/harness.cu for every config (BMxBNxSTAGESxCONSUMERS[xCLUSTER], space-separated) in
# fp16 and bf16, in parallel, as BIN_DIR/hg_<config>_<dtype> (nvcc on the Hopper machine;
# $NVCC overrides it), each with its build log beside it; prints the ptxas lines of note.
build_harness() {
    local bin=$1 configs=$2 c bm bn st co cl dt flag
    mkdir -p "$bin"
    for c in $configs; do
        IFS=x read -r bm bn st co cl <<<"$c"
        for dt in fp16 bf16; do
            flag=""
            [ "$dt" = bf16 ] && flag="-DHG_BF16"
            "${NVCC:-nvcc}" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Icsrc \
                -DHG_BM="$bm" -DHG_BN="$bn" -DHG_STAGES="$st" -DHG_CONSUMERS="$co" -DHG_CLUSTER="${cl:-1}" $flag \
                -Xptxas -v scripts/hopper/harness.cu -lcuda -lcublas \
                -o "$bin/hg_${c}_$dt" >"$bin/build_${c}_$dt.log" 2>&1 &
        done
    done
    wait
    grep -h -E "registers|spill|warning|error" "$bin"/build_*.log | sort | uniq -c | sort -rn |
        head -20
}
