#!/usr/bin/env bash
# Print the origami_gemm config space, one "BMxBNxBKxNWxNS valid smem" per line.
# Usage: configs.sh SMEM_LIMIT_BYTES [all|valid]
# Mirrors the validity rule in csrc/gemm.cu (and docs/gemm-kernel.md).
limit=${1:?smem limit}
which=${2:-valid}
for bm in 32 64 128 256; do for bn in 32 64 128 256; do for bk in 16 32 64 128; do
for nw in 4 8; do for ns in 2 3 4; do
  if [ $nw -eq 4 ]; then wm_=2; elif [ $bm -ge $bn ]; then wm_=4; else wm_=2; fi
  wn_=$((nw / wm_)); wm=$((bm / wm_)); wn=$((bn / wn_))
  pipe=$((ns * (bm + bn) * bk * 2)); epi=$((bm * (bn + 8) * 2))
  smem=$(( pipe > epi ? pipe : epi ))
  valid=1
  if [ $((wm % 16)) -ne 0 ] || [ $wm -lt 16 ] || [ $((wn % 16)) -ne 0 ] || [ $wn -lt 16 ]; then valid=0; fi
  if [ $smem -gt $limit ]; then valid=0; fi
  if [ "$which" = all ] || [ $valid -eq 1 ]; then echo "${bm}x${bn}x${bk}/w${nw}/s${ns} $valid $smem"; fi
done; done; done; done; done
