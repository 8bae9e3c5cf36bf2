#!/usr/bin/env python3
"""Where the triton-family model misses: offline analysis of a triton_sweep.py run (CPU).

Reads DIR/measurements.csv, DIR/compile.csv, DIR/inputs/*.csv and, if given, the
ptxas report of every listed config (scripts/triton/ptxas_stats.py), and writes
DIR/analysis.md with:
  A. per shape: what the pick lost to the launch (num_warps/num_stages of the same tile)
     and what it lost to the tile (BLOCK_M/N/K);
  B. predicted-latency ties: how many distinct predictions, the tau-b ceiling the ties
     allow, the tau-b of the tile ranking alone;
  C. the MMA path Triton takes (wgmma for BLOCK_M >= 64, mma.sync below) per shape;
  D. how much num_warps / num_stages move a tile, and which launch wins;
  E. the register estimate against ptxas, and the phase-2 GROUP_SIZE_M against 8;
  F. what-if re-rankings of the same predictions (no new measurements): how A/BF and
     tau-b would move with the proposed model changes.

Usage: python3 scripts/triton/analyze.py results/h200/triton [--ptxas FILE.csv]
"""
import csv
import math
import os
import statistics
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from triton_sweep import kendall_tau_b  # noqa: E402


def tau_ceiling(x):
    """Largest tau-b reachable with ties in x: measured order perfect, no ties in y."""
    n = len(x)
    tot = n * (n - 1) // 2
    tx = sum(c * (c - 1) // 2 for c in Counter(x).values())
    return math.sqrt((tot - tx) / tot) if tot else float("nan")


def listing_preds(binary, key, params):
    """{(BM, BN, BK, w, s): predicted cycles} from origami-select with an override file."""
    import json
    import subprocess
    import tempfile
    env = dict(os.environ)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(params, f)
    env["TRITONBLAS_HW_PARAMS"] = f.name
    out = subprocess.run([binary, str(key[0]), str(key[1]), str(key[2]), "--family", "triton",
                          "--gpu", "h200", "--all", "--format", "csv"],
                         capture_output=True, text=True, env=env, check=True).stdout
    os.unlink(f.name)
    res = {}
    for r in csv.DictReader(out.splitlines()):
        if r["feasible"] == "true":
            res[(int(r["BLOCK_SIZE_M"]), int(r["BLOCK_SIZE_N"]), int(r["BLOCK_SIZE_K"]),
                 int(r["num_warps"]), int(r["num_stages"]))] = float(r["predicted_cycles"])
    return res


def whatif(binary, order, shapes, P):
    """Re-run the model with other MMA rates (TRITONBLAS_HW_PARAMS overrides) and rank the
    measured configs by the new predictions."""
    P("## G. What-if: the model re-run with another MMA rate (TRITONBLAS_HW_PARAMS)\n")
    P("The preset's `mma_latency` 24.0 cycles over 4 tensor cores gives 683 FLOP/cycle/SM "
      "(178 TFLOP/s at 1980 MHz), below what the measured kernels reach (Table C: ~280 "
      "TFLOP/s on the mma.sync path, ~595 on wgmma). 4.33 is the datasheet's dense fp16 rate "
      "(989 TFLOP/s = 3786 FLOP/cycle/SM); 8.66 is half of it. `split` runs BLOCK_M >= 64 "
      "configs (wgmma) at 4.33 and BLOCK_M < 64 (mma.sync) at 8.66, the ~2x that Table C "
      "measures between the two paths. First choice = lowest prediction among measured "
      "configs, ties by listing rank; its A/BF against the G = 8 brute force.\n")
    P("| mma_latency | A/BF median | A/BF min | A/BF mean | tau-b mean | shapes >= 0.95 |")
    P("|---|---:|---:|---:|---:|---:|")
    variants = [("24.0 (preset, as measured above)", {"a": None}),
                ("8.66 all", {"a": 8.66}), ("4.33 all", {"a": 4.33}),
                ("split 4.33 / 8.66", {"a": 4.33, "b": 8.66})]
    for name, v in variants:
        abfs, taus = [], []
        for key in order:
            bf = shapes[key]["bf"]
            if v["a"] is None:
                pred = {(c["bm"], c["bn"], c["bk"], c["w"], c["s"]): c["pred"] for c in bf}
            else:
                pa = listing_preds(binary, key, {"mma_latency": v["a"]})
                pred = dict(pa)
                if "b" in v:
                    pb = listing_preds(binary, key, {"mma_latency": v["b"]})
                    pred = {k: (pa[k] if k[0] >= 64 else pb[k]) for k in pa}
            sc = [pred[(c["bm"], c["bn"], c["bk"], c["w"], c["s"])] for c in bf]
            best = min(c["us"] for c in bf)
            i = min(range(len(bf)), key=lambda j: (sc[j], bf[j]["rank"]))
            abfs.append(best / bf[i]["us"])
            taus.append(kendall_tau_b(sc, [c["us"] for c in bf]))
        P(f"| {name} | {statistics.median(abfs):.3f} | {min(abfs):.3f} | "
          f"{statistics.mean(abfs):.3f} | {statistics.mean(taus):.3f} | "
          f"{sum(a >= 0.95 for a in abfs)}/{len(abfs)} |")
    P("")


def main():
    d = sys.argv[1]
    ptx = None
    if "--ptxas" in sys.argv:
        with open(sys.argv[sys.argv.index("--ptxas") + 1]) as f:
            ptx = {(int(r["bm"]), int(r["bn"]), int(r["bk"]), int(r["w"]), int(r["s"])): r
                   for r in csv.DictReader(f)}
    with open(os.path.join(d, "measurements.csv")) as f:
        meas = list(csv.DictReader(f))
    with open(os.path.join(d, "compile.csv")) as f:
        comp = {(int(r["bm"]), int(r["bn"]), int(r["bk"]), int(r["w"]), int(r["s"])): r
                for r in csv.DictReader(f)}
    shapes = defaultdict(lambda: {"bf": [], "pick": None, "cublas": None})
    for r in meas:
        key = (int(r["M"]), int(r["N"]), int(r["K"]))
        if r["status"] != "ok":
            continue
        if r["role"] == "cublas":
            shapes[key]["cublas"] = float(r["measured_us"])
            continue
        c = {"bm": int(r["BLOCK_SIZE_M"]), "bn": int(r["BLOCK_SIZE_N"]),
             "bk": int(r["BLOCK_SIZE_K"]), "g": int(r["GROUP_SIZE_M"]),
             "w": int(r["num_warps"]), "s": int(r["num_stages"]),
             "pred": float(r["predicted_cycles"]), "us": float(r["measured_us"]),
             "rank": int(r["rank"]), "cfg": r["config"]}
        c["tile"] = (c["bm"], c["bn"], c["bk"])
        if r["role"] == "pick":
            shapes[key]["pick"] = c
        else:
            shapes[key]["bf"].append(c)
    order = sorted(shapes, key=lambda k: k[0] * k[1] * k[2])
    listing = {}
    for key in order:
        with open(os.path.join(d, "inputs", f"{key[0]}_{key[1]}_{key[2]}.csv")) as f:
            listing[key] = list(csv.DictReader(f))

    out = []
    P = out.append
    P("# Triton family on H200: where the model misses (generated by scripts/triton/analyze.py)\n")
    P("All numbers are from `measurements.csv` of this folder (every feasible config timed, "
      "GROUP_SIZE_M = 8 for the brute force, the pick at its phase-2 GROUP_SIZE_M). "
      "`tile` = (BLOCK_M, BLOCK_N, BLOCK_K); `launch` = (num_warps, num_stages).\n")

    # ---------------------------------------------------------------- A. decomposition
    P("## A. What the pick lost: launch vs tile\n")
    P("`best same tile` is the fastest measured launch of the pick's tile (any num_warps/"
      "num_stages, GROUP_SIZE_M 8). launch loss = pick time / best-same-tile time; tile loss "
      "= best-same-tile time / brute-force time; A/BF = 1 / (launch loss x tile loss).\n")
    P("| shape | pick | A/BF | best same tile | launch loss | BF config | tile loss | pick path |")
    P("|---|---|---:|---|---:|---|---:|---|")
    n_same_tile = n_same_mn = n_launch_dom = 0
    miss = []
    for key in order:
        s = shapes[key]
        p, bf = s["pick"], s["bf"]
        best = min(bf + [p], key=lambda c: c["us"])
        same = [c for c in bf if c["tile"] == p["tile"]]
        bst = min(same + [p], key=lambda c: c["us"])
        ll = p["us"] / bst["us"]
        tl = bst["us"] / best["us"]
        abf = best["us"] / p["us"]
        if best["tile"] == p["tile"]:
            n_same_tile += 1
        if best["tile"][:2] == p["tile"][:2]:
            n_same_mn += 1
        if abf < 0.95:
            miss.append(key)
            if ll >= tl:
                n_launch_dom += 1
        path = "wgmma" if p["bm"] >= 64 else "mma.sync"
        P(f"| {key[0]}x{key[1]}x{key[2]} | {p['cfg']} | {abf:.3f} | {bst['cfg']} | {ll:.3f} | "
          f"{best['cfg']} | {tl:.3f} | {path} |")
    P(f"\nBrute-force best has the pick's tile in {n_same_tile}/{len(order)} shapes and the "
      f"pick's (BLOCK_M, BLOCK_N) in {n_same_mn}/{len(order)}. Of the {len(miss)} shapes under "
      f"0.95, the launch loss is the larger part in {n_launch_dom}.\n")

    # ---------------------------------------------------------------- B. ties and tau
    P("## B. Predicted-latency ties and Kendall tau-b\n")
    P("The model's latency does not depend on num_warps or num_stages: every launch of a tile "
      "gets the same predicted cycles, so ~6 configs share each prediction. tau-b counts tied "
      "pairs as neither concordant nor discordant: `ceiling` is the tau-b a perfect ranking "
      "inside those ties would reach. `tile tau` ranks tiles only (prediction vs the tile's "
      "fastest launch).\n")
    P("| shape | configs | distinct predictions | tied pairs | tau-b | ceiling | tile tau |")
    P("|---|---:|---:|---:|---:|---:|---:|")
    taus, ceils, ttaus = [], [], []
    for key in order:
        bf = shapes[key]["bf"]
        x = [c["pred"] for c in bf]
        y = [c["us"] for c in bf]
        n = len(x)
        tot = n * (n - 1) // 2
        tx = sum(c * (c - 1) // 2 for c in Counter(x).values())
        t = kendall_tau_b(x, y)
        ce = tau_ceiling(x)
        bt = defaultdict(list)
        for c in bf:
            bt[c["tile"]].append(c)
        tx_ = [bt[k][0]["pred"] for k in bt]
        ty_ = [min(c["us"] for c in bt[k]) for k in bt]
        tt = kendall_tau_b(tx_, ty_)
        taus.append(t)
        ceils.append(ce)
        ttaus.append(tt)
        P(f"| {key[0]}x{key[1]}x{key[2]} | {n} | {len(set(x))} | {tx / tot:.3f} | {t:.3f} | "
          f"{ce:.3f} | {tt:.3f} |")
    P(f"\nMeans: tau-b {statistics.mean(taus):.3f}, ceiling {statistics.mean(ceils):.3f}, "
      f"tile tau {statistics.mean(ttaus):.3f}.\n")

    # ---------------------------------------------------------------- C. MMA path
    P("## C. The MMA instruction Triton emits, by BLOCK_M\n")
    if ptx:
        cnt = Counter((k[0], r.get("wgmma")) for k, r in ptx.items() if r["status"] == "ok")
        P("From the PTX of every listed config (ptxas_stats.csv): "
          + ", ".join(f"BLOCK_M {bm}: wgmma={w} in {n}" for (bm, w), n in sorted(cnt.items()))
          + ". Triton 3.6 uses Hopper's wgmma only when BLOCK_M >= 64 (a warpgroup's "
          "64-row instruction); smaller tiles fall back to mma.sync m16n8k16.\n")
    P("| shape | best TFLOP/s BLOCK_M<64 | best TFLOP/s BLOCK_M>=64 | ratio | model's best BLOCK_M<64 pred / BLOCK_M>=64 pred | pick BLOCK_M |")
    P("|---|---:|---:|---:|---:|---:|")
    for key in order:
        bf = shapes[key]["bf"]
        fl = 2.0 * key[0] * key[1] * key[2]
        lo = [c for c in bf if c["bm"] < 64]
        hi = [c for c in bf if c["bm"] >= 64]
        tlo = fl / min(c["us"] for c in lo) / 1e6
        thi = fl / min(c["us"] for c in hi) / 1e6
        plo = min(c["pred"] for c in lo)
        phi = min(c["pred"] for c in hi)
        P(f"| {key[0]}x{key[1]}x{key[2]} | {tlo:.1f} | {thi:.1f} | {thi / tlo:.2f} | "
          f"{plo / phi:.3f} | {shapes[key]['pick']['bm']} |")
    P("")

    # ---------------------------------------------------------------- D. launch effects
    P("## D. How much the launch (num_warps, num_stages) moves a tile\n")
    P("Per shape: over tiles with all 6 launches measured, the median and max of slowest/"
      "fastest launch; which launch is fastest most often; the launch of the brute-force "
      "best; the launch the model reports first for the pick's tile (its preference rule).\n")
    P("| shape | median spread | max spread | most frequent fastest launch | BF launch | pick launch |")
    P("|---|---:|---:|---|---|---|")
    win_all = Counter()
    for key in order:
        bt = defaultdict(list)
        for c in shapes[key]["bf"]:
            bt[c["tile"]].append(c)
        spreads = []
        wins = Counter()
        for t, cs in bt.items():
            if len(cs) == 6:
                us = [c["us"] for c in cs]
                spreads.append(max(us) / min(us))
                f = min(cs, key=lambda c: c["us"])
                wins[(f["w"], f["s"])] += 1
        win_all.update(wins)
        best = min(shapes[key]["bf"] + [shapes[key]["pick"]], key=lambda c: c["us"])
        p = shapes[key]["pick"]
        top = ", ".join(f"w{w}s{s}: {n}" for (w, s), n in wins.most_common(2))
        P(f"| {key[0]}x{key[1]}x{key[2]} | {statistics.median(spreads):.2f} | {max(spreads):.2f} | "
          f"{top} | w{best['w']}s{best['s']} | w{p['w']}s{p['s']} |")
    P("\nFastest launch of a tile, counted over all shapes: "
      + ", ".join(f"w{w}s{s} {n}" for (w, s), n in win_all.most_common()) + ".\n")

    # ---------------------------------------------------------------- E. registers, group
    P("## E. Registers (model estimate vs ptxas) and GROUP_SIZE_M\n")
    lst = listing[order[0]]
    est = {}
    for r in lst:
        k = (int(r["BLOCK_SIZE_M"]), int(r["BLOCK_SIZE_N"]), int(r["BLOCK_SIZE_K"]),
             int(r["num_warps"]), int(r["num_stages"]))
        est[k] = (int(r["registers"]) if r["registers"] else None, r["feasible"] == "true",
                  r["reason"])
    dev = [(est[k][0], int(c["n_regs"])) for k, c in comp.items()
           if c["status"] == "ok" and c["n_regs"] not in ("", None)]
    over = sum(1 for e, m in dev if e > m)
    ratio = statistics.median(e / m for e, m in dev)
    spill_dev = [k for k, c in comp.items() if c.get("n_spills") not in ("", "0", None)]
    P(f"- Feasible configs on the device: {len(dev)} loaded; ptxas registers vs the model's "
      f"estimate: estimate higher in {over}, median estimate/ptxas {ratio:.2f}. Local memory "
      f"(spills) reported by the driver for {len(spill_dev)}: "
      + ", ".join(f"{k[0]}x{k[1]}x{k[2]} w{k[3]} s{k[4]} ({comp[k]['n_spills']} B)"
                  for k in spill_dev) + " (none is a pick).")
    if ptx:
        rej = [k for k, v in est.items() if not v[1] and v[2].startswith("spills")]
        rej_sp = [k for k in rej if ptx.get(k, {}).get("spill_store_bytes") not in (None, "", "0")]
        smem_rej = [k for k, v in est.items() if not v[1] and v[2].startswith("shared")]
        smem_fit = [k for k in smem_rej if ptx.get(k, {}).get("shared_bytes")
                    and int(ptx[k]["shared_bytes"]) <= 232448]
        acc_sp = [k for k, v in est.items() if v[1]
                  and ptx.get(k, {}).get("spill_store_bytes") not in (None, "", "0")]
        P(f"- Rejected by the model for spills: {len(rej)}; ptxas spills in {len(rej_sp)} of "
          f"them (the rest fit: "
          + ", ".join(f"{k[0]}x{k[1]}x{k[2]} w{k[3]} s{k[4]} {ptx[k]['regs']} regs"
                      for k in rej if k not in rej_sp) + ").")
        P(f"- Rejected by the model for shared memory: {len(smem_rej)}; Triton's own figure fits "
          f"232448 B in {len(smem_fit)} of them"
          + (": " + ", ".join(f"{k[0]}x{k[1]}x{k[2]} w{k[3]} s{k[4]} ({ptx[k]['shared_bytes']} B)"
                              for k in smem_fit[:12]) + (" ..." if len(smem_fit) > 12 else "")
             if smem_fit else "") + ".")
        P(f"- Accepted by the model but spilling in ptxas (sm_90a, local compile): {len(acc_sp)}"
          + (": " + ", ".join(f"{k[0]}x{k[1]}x{k[2]} w{k[3]} s{k[4]}" for k in acc_sp) if acc_sp else "")
          + ".")
        sm_model = {k: int(r["smem_bytes"]) for r in lst for k in [(
            int(r["BLOCK_SIZE_M"]), int(r["BLOCK_SIZE_N"]), int(r["BLOCK_SIZE_K"]),
            int(r["num_warps"]), int(r["num_stages"]))]}
        agree = sum(1 for k in ptx if ptx[k].get("shared_bytes") and
                    int(ptx[k]["shared_bytes"]) == sm_model.get(k))
        P(f"- Shared memory: Triton's figure equals the model's num_stages x (BM BK + BK BN) x 2 "
          f"in {agree}/{len(ptx)} configs (mma.sync tiles keep fewer buffers).")
    P("")
    P("| shape | pick GROUP_SIZE_M | pick us | same config at GROUP_SIZE_M 8 us | ratio |")
    P("|---|---:|---:|---:|---:|")
    for key in order:
        p = shapes[key]["pick"]
        if p["g"] == 8:
            continue
        tw = [c for c in shapes[key]["bf"] if c["tile"] == p["tile"] and c["w"] == p["w"]
              and c["s"] == p["s"]]
        if tw and key[0] > p["bm"]:
            P(f"| {key[0]}x{key[1]}x{key[2]} | {p['g']} | {p['us']:.2f} | {tw[0]['us']:.2f} | "
              f"{tw[0]['us'] / p['us']:.3f} |")
    P("\n(Shapes with a single row of tiles, where GROUP_SIZE_M has no effect, are left out.)\n")

    # ---------------------------------------------------------------- F. what-if
    P("## F. What-if: re-ranking the same predictions\n")
    P("No new measurements: each rule re-ranks the model's predicted cycles of the measured "
      "configs (G = 8 rows) and reports the A/BF of its first choice against the G = 8 brute "
      "force (so the first row differs a little from the headline, where the pick runs at "
      "its phase-2 GROUP_SIZE_M) and the mean tau-b. The 15 % is arbitrary, not fitted: "
      "these rows show which lever moves the numbers, they are not a model.\n")

    def evaluate(name, score):
        abfs, taus_ = [], []
        for key in order:
            bf = shapes[key]["bf"]
            best = min(c["us"] for c in bf)
            sc = [score(key, c) for c in bf]
            i = min(range(len(bf)), key=lambda j: (sc[j], bf[j]["rank"]))
            abfs.append(best / bf[i]["us"])
            taus_.append(kendall_tau_b(sc, [c["us"] for c in bf]))
        P(f"| {name} | {statistics.median(abfs):.3f} | {min(abfs):.3f} | "
          f"{statistics.mean(abfs):.3f} | {statistics.mean(taus_):.3f} |")

    P("| rule | A/BF median | A/BF min | A/BF mean | tau-b mean |")
    P("|---|---:|---:|---:|---:|")
    evaluate("as predicted (ties by the model's launch preference)", lambda k, c: c["pred"])

    def mma_pen(k, c):
        return c["pred"] * (2.0 if c["bm"] < 64 else 1.0)
    evaluate("x2 for BLOCK_M < 64 (mma.sync path)", mma_pen)

    def stages(k, c):
        return c["pred"] * (1.0 + 0.15 * (4 - c["s"]))
    evaluate("+15 % per missing stage below 4", stages)

    def both(k, c):
        return mma_pen(k, c) * (1.0 + 0.15 * (4 - c["s"]))
    evaluate("both", both)

    def oracle_launch(k, c):
        bt = sorted((x for x in shapes[k]["bf"] if x["tile"] == c["tile"]), key=lambda x: x["us"])
        return c["pred"] * (1.0 + 1e-9 * bt.index(c))
    evaluate("oracle launch inside each tile (upper bound of a launch model)", oracle_launch)
    P("")
    if "--whatif" in sys.argv:
        whatif(sys.argv[sys.argv.index("--whatif") + 1], order, shapes, P)
    with open(os.path.join(d, "analysis.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
