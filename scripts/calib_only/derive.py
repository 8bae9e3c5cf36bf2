#!/usr/bin/env python3
"""Issue 14: the throughput model's tp_* constants from a calibration alone.

    python3 scripts/calib_only/derive.py CALIBRATION.json [--overlap max|sum] [--out FILE]
        [--explain]

No constant here was fitted on measured GEMM times. Each value is a measured rate or
latency of the calibration document (`origami-calibrate`), the GPU description in it, or
a documented property of the architecture; a term that needs a count from the kernel
(instructions per iteration, barrier cost) and has no measurement is 0. Writes a flat
TRITONBLAS_HW_PARAMS override: the document's five parameters plus the constants.
"""
import argparse, json, sys


def measurement(doc, name):
    for m in doc.get("measurements", []):
        if m["name"] == name:
            return m["median"]
    raise SystemExit(f"calibration has no measurement '{name}'")


# Dense fp16 tensor-core throughput of a Hopper SM sub-partition on wgmma: 1024 flop per
# cycle (H100 SXM datasheet: 989.4 dense fp16 TFLOP/s = 528 tensor cores x 1.83 GHz x
# 1024), i.e. 4 cycles per m16n8k16 (4096 flop). Not measured by origami-calibrate.
WGMMA_CYCLES_PER_M16N8K16 = {9: 4.0}
# Shared memory: 32 banks x 4 bytes per cycle per SM on sm_80 and later.
SMEM_BYTES_PER_CYCLE = 128.0


def derive(doc, overlap="max"):
    gpu, p = doc["gpu"], doc["params"]
    sms = gpu["sm_count"]
    tcs = gpu["tensor_cores_per_sm"]
    l2_per_sm = p["l2_perf_ratio"] / sms  # bytes per SM cycle, measured L2 read bandwidth
    # One warp's sustained mma.sync m16n8k16 rate with independent accumulators: the best
    # of the ILP 4 and 8 measurements (a warp tile's MMAs are independent of each other).
    warp_mma = min(measurement(doc, "mma_f16_ilp4_cycles_per_mma"),
                   measurement(doc, "mma_f16_ilp8_cycles_per_mma"))
    mma_latency = measurement(doc, "mma_f16_latency_cycles")
    dram_latency = measurement(doc, "dram_latency_page_local_cycles")
    l2_latency = measurement(doc, "l2_hit_latency_cycles")
    c = {}
    why = {}

    def put(name, value, unit, source):
        c[name] = value
        why[name] = (value, unit, source)

    put("throughput_model", 1.0, "switch", "the throughput model")
    put("tp_mma_cycles", warp_mma / tcs, "SM cycles per m16n8k16",
        f"mma_f16_ilp4/8 {warp_mma:.3f} cycles per warp / {tcs} tensor cores per SM")
    put("tp_warp_mma_cycles", warp_mma, "cycles per m16n8k16 of one warp",
        f"mma_f16_ilp4/8 {warp_mma:.3f}")
    cc = gpu["compute_capability"][0]
    if cc in WGMMA_CYCLES_PER_M16N8K16:
        put("wgmma_speedup", warp_mma / WGMMA_CYCLES_PER_M16N8K16[cc], "x mma.sync",
            f"{warp_mma:.3f} / {WGMMA_CYCLES_PER_M16N8K16[cc]} (datasheet dense rate; no wgmma microbenchmark yet)")
    put("tp_load_latency_cycles", dram_latency, "cycles",
        f"dram_latency_page_local {dram_latency:.1f} (a stage's streaming loads; L2 hit latency is {l2_latency:.1f})")
    put("tp_iter_latency_cycles", mma_latency, "cycles",
        f"mma_f16_latency {mma_latency:.2f}: the accumulator chain crosses iterations (barrier and ldmatrix latency not measured)")
    put("tp_iter_cycles", 0.0, "cycles", "needs the loop's non-MMA instruction count (not measured)")
    put("tp_warp_iter_cycles", 0.0, "cycles", "needs the per-warp instruction count (not measured)")
    put("tp_block_setup_cycles", 0.0, "cycles", "needs a block-launch microbenchmark (not measured)")
    put("tp_epilogue_cycles", 4096 * 2.0 / l2_per_sm, "cycles per 4096 outputs",
        f"4096 fp16 outputs (8192 B) over the SM's L2 share {l2_per_sm:.2f} B/cycle")
    put("tp_smem_bytes_per_cycle", SMEM_BYTES_PER_CYCLE, "bytes per cycle", "32 banks x 4 B (sm_80+)")
    put("tp_fragment_read_weight", 1.0, "bytes per byte", "a fragment byte read costs a shared-memory byte")
    put("tp_l2_sm_share", 1.0, "share", "l2_perf_ratio / SMs is the measured per-SM L2 read rate")
    put("tp_l2_active_exponent", 0.0, "exponent", "no L2-vs-active-SMs measurement: fixed per-SM share")
    put("tp_stage_exponent", 1.0, "exponent", "Little's law: S - 1 stages in flight")
    put("tp_prologue_loads", 1.0, "round trips", "the fill waits one round trip")
    put("tp_prologue_transfer", 1.0, "stages", "... and the first stage's bytes")
    put("tp_dram_scale", 1.0, "factor", "DRAM at the measured rate")
    if overlap == "max":
        put("tp_smooth_exponent", 0.0, "exponent", "the largest bound: perfect overlap (roofline, lower bound)")
    else:
        put("tp_smooth_exponent", 1.0, "exponent", "the sum of the bounds: no overlap (upper bound)")
    put("tp_wgmma_min_n", 0.0, "elements", "no wgmma N-scan measurement: the instruction's own N")
    put("tp_time_scale", 1.0, "factor", "cycles at the calibrated SM clock")
    return {**{k: p[k] for k in p}, "constants": c}, why


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("calibration")
    ap.add_argument("--overlap", choices=["max", "sum"], default="max",
                    help="combine the per-iteration bounds and SM vs DRAM by their largest (max) or their sum")
    ap.add_argument("--out")
    ap.add_argument("--explain", action="store_true")
    a = ap.parse_args()
    doc = json.load(open(a.calibration))
    out, why = derive(doc, a.overlap)
    text = json.dumps(out, indent=2, sort_keys=True)
    if a.out:
        open(a.out, "w").write(text + "\n")
    else:
        print(text)
    if a.explain:
        for k, (v, unit, src) in why.items():
            print(f"{k:26s} {v:10.4g}  {unit:32s} {src}", file=sys.stderr)


if __name__ == "__main__":
    main()
