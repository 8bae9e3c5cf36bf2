#!/usr/bin/env bash
# Build data/gemm_registers.csv: registers, spills and stack frame of every
# origami_gemm config (csrc/gemm.cu) per architecture and dtype (fp16, bf16, tf32), as reported by
# ptxas -v. No GPU needed.
#
# Usage: [DTYPES="fp16 bf16 tf32"] scripts/ptxas-table.sh [-j JOBS] [-o OUT.csv] [ARCH ...]
#        (default: every dtype; sm_80 sm_86 sm_89 sm_90)
# nvcc: $NVCC, else $CUDA_HOME/bin/nvcc, else .cuda-venv's (the PyPI recipe in docs/calibrate.md), else PATH.
# The configs, their validity, shared memory and -D defines come from the origami family
# (`origami-bench configs`; $ORIGAMI_BENCH, else `cargo run --release --bin origami-bench --`).
#
# Columns: arch,dtype,block_m,block_n,block_k,num_warps,num_stages,registers,
#   spill_stores_bytes,spill_loads_bytes,stack_frame_bytes,smem_bytes,valid
# valid = 1 when the family accepts the config on that arch (warp tiling, and
# smem_bytes <= the arch's opt-in limit). Invalid configs are listed but not
# compiled (their register columns are empty). smem_bytes is the kernel's
# dynamic shared memory (the family's formula); it has no static shared memory.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=2
out=data/gemm_registers.csv
while getopts "j:o:" o; do case $o in j) jobs=$OPTARG ;; o) out=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
arches=("$@")
[ ${#arches[@]} -eq 0 ] && arches=(sm_80 sm_86 sm_89 sm_90)

if [ -z "${NVCC:-}" ]; then
  if [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then NVCC=$CUDA_HOME/bin/nvcc
  elif [ -x .cuda-venv/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc ]; then
    NVCC=$PWD/.cuda-venv/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc
  else NVCC=$(command -v nvcc); fi
fi
export NVCC
echo "nvcc: $NVCC ($($NVCC --version | tail -1))" >&2
read -r -a bench <<< "${ORIGAMI_BENCH:-cargo run --release --quiet --bin origami-bench --}"

smem_limit() { case $1 in sm_80) echo 166912 ;; sm_86|sm_89) echo 101376 ;; sm_90) echo 232448 ;; *) echo "unknown arch $1" >&2; exit 2 ;; esac; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
joblist=$tmp/jobs
: > "$joblist"
for arch in "${arches[@]}"; do
  lim=$(smem_limit "$arch")
  for dtype in ${DTYPES:-fp16 bf16 tf32}; do
    listing=$("${bench[@]}" configs --dtype "$dtype" --smem-limit "$lim")
    # block_m,block_n,block_k,num_warps,num_stages,warps_m,warps_n,smem_bytes,valid,defines,reason
    tail -n +2 <<< "$listing" | while IFS=, read -r bm bn bk nw ns _ _ smem valid defines _; do
      echo "$arch $dtype $bm $bn $bk $nw $ns $valid $smem $defines" >> "$joblist"
    done
  done
done

one() {
  dir=$1 arch=$2 dtype=$3 bm=$4 bn=$5 bk=$6 nw=$7 ns=$8 valid=$9 smem=${10}
  shift 10  # the rest: the config's -D defines
  key="$arch,$dtype,$bm,$bn,$bk,$nw,$ns"
  if [ "$valid" != 1 ]; then echo "$key,,,,,$smem,0" > "$dir/$arch-$dtype-$bm-$bn-$bk-$nw-$ns.row"; return; fi
  log=$("$NVCC" -arch="$arch" -cubin -Xptxas -v -o /dev/null "$@" csrc/gemm.cu 2>&1) || { echo "compile failed: $key" >&2; echo "$log" >&2; exit 1; }
  regs=$(echo "$log" | sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' | tail -1)
  frame=$(echo "$log" | sed -n 's/.* \([0-9]*\) bytes stack frame.*/\1/p' | tail -1)
  st=$(echo "$log" | sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' | tail -1)
  ld=$(echo "$log" | sed -n 's/.* \([0-9]*\) bytes spill loads.*/\1/p' | tail -1)
  echo "$key,$regs,$st,$ld,$frame,$smem,1" > "$dir/$arch-$dtype-$bm-$bn-$bk-$nw-$ns.row"
}
export -f one
n=$(wc -l < "$joblist")
echo "$n configs, $jobs parallel jobs" >&2
xargs -P "$jobs" -L 1 bash -c 'one '"$tmp"' "$@"' _ < "$joblist"
{
  echo "arch,dtype,block_m,block_n,block_k,num_warps,num_stages,registers,spill_stores_bytes,spill_loads_bytes,stack_frame_bytes,smem_bytes,valid"
  cat "$tmp"/*.row | sort -t, -k1,1 -k2,2 -k3,3n -k4,4n -k5,5n -k6,6n -k7,7n
} > "$out"
echo "wrote $out ($(($(wc -l < "$out") - 1)) rows)" >&2
