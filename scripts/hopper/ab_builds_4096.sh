#!/usr/bin/env bash
# Device only. This build against the parent of the Stream-K change (9de49f0), the 4096^3
# whole-tile configs, each build in its own process, twice (device_lib.sh compare_builds):
# results/h100/hopper/streamk-large/ab-4096/. Carried: target/devbin/origami-bench.xz and
# target/devbin/origami-bench-old.xz. Usage: scripts/hopper/ab_builds_4096.sh
set -u
. scripts/device_lib.sh
devbin_ready origami-bench origami-bench-old
run_folder ab-4096
for rep in 1 2; do
  mkdir -p "$OUT/ab-4096/rep$rep"
  compare_builds "ab-4096/rep$rep" 4096 4096 4096 128x256x64,g16,w12,s4 128x256x64,g16,w12,s3 256x128x64,g8,w12,s4
done
close_folder ab-4096
