#!/usr/bin/env bash
# GROUP_SIZE_M scan of three Hopper-kernel configs at 8192^3 and 4096^3 (fp16, bf16) with
# the development harness (scripts/hopper/harness.cu), nvidia-smi dmon sampling the SM clock
# and power meanwhile. Device only (nvcc there). Usage: OUT=DIR bash scripts/hopper/group_scan.sh
set -u
out=$OUT/hg2; mkdir -p $out
for c in "128 256 4 2" "256 128 4 2" "128 192 4 2"; do set -- $c
 for dt in fp16 bf16; do f=""; [ $dt = bf16 ] && f=-DHG_BF16
 nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Icsrc -DHG_BM=$1 -DHG_BN=$2 -DHG_STAGES=$3 -DHG_CONSUMERS=$4 $f scripts/hopper/harness.cu -lcuda -lcublas -o $out/hg_$1x$2_$dt & done; done; wait
nvidia-smi dmon -s pc -d 1 > $out/dmon.txt 2>&1 & DM=$!
echo "config,m,n,k,dtype,kernel_us,cublas_us,kernel_tflops,cublas_tflops,rel_err,status,group_m" > $out/groups.csv
for s in "8192 8192 8192" "4096 4096 4096"; do for g in 1 4 8 16 32; do for e in $out/hg_*; do dt=${e##*_}; line=$($e $s $dt $g); echo "$line,$g" >> $out/groups.csv; done; done; done
kill $DM; rm -f $out/hg_*
sort -t, -k8 -n -r $out/groups.csv | head -30; awk 'NR>2{print $4, $5, $6}' $out/dmon.txt | sort -n | awk '{a[NR]=$0} END{print "dmon samples", NR, "min", a[1], "median", a[int(NR/2)], "max", a[NR]}'
