set -u
B=target/devbin/origami-bench
(cd target/devbin && xz -d -f -k origami-bench.xz && chmod +x origami-bench)
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt
for dt in fp16 bf16; do
  $B run 333 4096 14336 --family hopper --dtype $dt --config 128x128x64,g8,w12,s6 --config 128x128x64,g8,w12,s6,k2 --config 128x128x64,g8,w12,s6,k3 --config 128x128x64,g8,w12,s6,k4 > $OUT/split-333x4096x14336-$dt.txt 2>&1
done
$B run 1 6144 4096 --family hopper --config 64x128x64,g8,w8,s8 --config 64x128x64,g8,w8,s8,k2 --config 64x128x64,g8,w8,s8,k3 --config 64x128x64,g8,w8,s8,k4 > $OUT/split-1x6144x4096-fp16.txt 2>&1
$B run 4097 4103 4104 --family hopper --config 128x128x64,g8,w12,s6 --config 128x128x64,g8,w12,s6,k2 --config 128x128x64,g8,w12,s6,k3 > $OUT/split-4097x4103x4104-fp16.txt 2>&1
cat $OUT/split-*.txt
bash scripts/hopper/sweep_seed.sh 330 seed > $OUT/seed.log 2>&1
tail -n 5 $OUT/seed.log
