#!/usr/bin/env python3
"""Summarize scripts/energy/study_space.sh's reports (the CUTLASS tuning study's space on
the mma.sync kernel): per shape the measured time/energy Pareto front (time: the burst
median; energy: millijoules per GEMM under sustained load), what each knob does (pairs of
configs that differ in that knob alone: median and range of the time and energy ratios,
knob on over off), and an SVG of each shape's configs in the time/energy plane, the
front joined, colours by cache policy and predication. Standard library only.

Usage: python3 scripts/energy/study_summary.py DIR [--svg OUT.svg]"""
import argparse
import glob
import json
import os
import re
import statistics

KNOBS = ("cache_all", "unpredicated")
COLOURS = {(): "#1f77b4", ("cache_all",): "#ff7f0e", ("unpredicated",): "#2ca02c",
           ("cache_all", "unpredicated"): "#d62728"}


def rows(path):
    r = json.load(open(path))
    out = []
    for c in r["configs"]:
        s = c.get("sustained") or {}
        if c.get("passed") and s.get("mj_per_launch"):
            out.append({"config": c["config"], "ms": c["median_ms"],
                        "mj": s["mj_per_launch"], "w": s["avg_w"],
                        "sus_ms": s["ms_per_launch"], "mhz": s.get("sm_mhz")})
    cub = r["cublas"]
    return r["shape"], out, cub


def base_and_knobs(config):
    parts = config.split(",")
    knobs = tuple(k for k in KNOBS if k in parts)
    return ",".join(p for p in parts if p not in KNOBS), knobs


def front(xs):
    """Configs no other beats in both time and energy (ties kept), by time."""
    return sorted((a for a in xs if not any(
        (b["ms"] <= a["ms"] and b["mj"] <= a["mj"]) and (b["ms"] < a["ms"] or b["mj"] < a["mj"])
        for b in xs)), key=lambda a: a["ms"])


def knob_pairs(xs, knob):
    by = {x["config"]: x for x in xs}
    t, e = [], []
    for x in xs:
        base, knobs = base_and_knobs(x["config"])
        if knob in knobs:
            others = [k for k in knobs if k != knob]
            off = ",".join([base] + others)
            if off in by:
                t.append(x["ms"] / by[off]["ms"])
                e.append(x["mj"] / by[off]["mj"])
    return t, e


def stage_pairs(xs):
    by = {x["config"]: x for x in xs}
    t = []
    for x in xs:
        m = re.search(r",s(\d)", x["config"])
        if m and m.group(1) != "2":
            off = x["config"].replace(m.group(0), ",s2")
            if off in by:
                t.append((int(m.group(1)), x["ms"] / by[off]["ms"], x["mj"] / by[off]["mj"]))
    return t


def svg(shapes, path):
    w, h, pad = 360, 260, 40
    panels = []
    for i, (shape, xs, cub) in enumerate(shapes):
        x0 = (i % 2) * (w + 20)
        y0 = (i // 2) * (h + 30)
        ts = [x["ms"] for x in xs] + [cub["median_ms"]]
        es = [x["mj"] for x in xs] + [cub["sustained"]["mj_per_launch"]]
        tmin, tmax, emin, emax = min(ts), max(ts), min(es), max(es)

        def px(t, e):
            return (x0 + pad + (t - tmin) / (tmax - tmin or 1) * (w - pad - 10),
                    y0 + h - pad - (e - emin) / (emax - emin or 1) * (h - pad - 20))
        g = [f'<text x="{x0 + pad}" y="{y0 + 14}" font-size="12">{shape["m"]}^3 fp16: '
             f'time (ms, x) vs energy (mJ/GEMM, y)</text>',
             f'<rect x="{x0 + pad}" y="{y0 + 20}" width="{w - pad - 10}" height="{h - pad - 20}" '
             'fill="none" stroke="#999"/>',
             f'<text x="{x0 + pad}" y="{y0 + h - pad + 14}" font-size="10">{tmin:.3g}</text>',
             f'<text x="{x0 + w - 50}" y="{y0 + h - pad + 14}" font-size="10">{tmax:.3g}</text>',
             f'<text x="{x0 + 2}" y="{y0 + h - pad}" font-size="10">{emin:.4g}</text>',
             f'<text x="{x0 + 2}" y="{y0 + 30}" font-size="10">{emax:.4g}</text>']
        for x in xs:
            cx, cy = px(x["ms"], x["mj"])
            g.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="2.5" '
                     f'fill="{COLOURS[base_and_knobs(x["config"])[1]]}"/>')
        pts = " ".join("%.1f,%.1f" % px(x["ms"], x["mj"]) for x in front(xs))
        g.append(f'<polyline points="{pts}" fill="none" stroke="black" stroke-width="1"/>')
        cx, cy = px(cub["median_ms"], cub["sustained"]["mj_per_launch"])
        g.append(f'<rect x="{cx - 3:.1f}" y="{cy - 3:.1f}" width="6" height="6" fill="black"/>')
        panels.append("\n".join(g))
    legend_y = ((len(shapes) + 1) // 2) * (h + 30) + 10
    legend = [f'<text x="10" y="{legend_y}" font-size="11">'
              f'<tspan fill="{COLOURS[()]}">cache-global, predicated</tspan>  '
              f'<tspan fill="{COLOURS[("cache_all",)]}">cache-all</tspan>  '
              f'<tspan fill="{COLOURS[("unpredicated",)]}">unpredicated</tspan>  '
              f'<tspan fill="{COLOURS[("cache_all", "unpredicated")]}">both</tspan>  '
              'line: measured front; black square: cuBLAS</text>']
    with open(path, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * (w + 20)}" '
                f'height="{legend_y + 10}" font-family="sans-serif">\n'
                + "\n".join(panels + legend) + "\n</svg>\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--svg")
    a = ap.parse_args()
    shapes = []
    for p in sorted(glob.glob(os.path.join(a.dir, "*.json")), key=lambda p: int(
            os.path.basename(p).split(".")[0])):
        shapes.append(rows(p))
    for shape, xs, cub in shapes:
        cs = cub.get("sustained") or {}
        fast = min(xs, key=lambda x: x["ms"])
        least = min(xs, key=lambda x: x["mj"])
        print(f"== {shape['m']}x{shape['n']}x{shape['k']} {shape['dtype']}: {len(xs)} configs; "
              f"cuBLAS {cub['median_ms']:.4f} ms, {cs.get('mj_per_launch', float('nan')):.1f} mJ "
              f"({cs.get('avg_w', float('nan')):.0f} W)")
        print(f"  fastest {fast['config']} {fast['ms']:.4f} ms {fast['mj']:.1f} mJ; "
              f"least energy {least['config']} {least['ms']:.4f} ms {least['mj']:.1f} mJ")
        print("  measured Pareto front (time, energy):")
        for x in front(xs):
            print(f"    {x['config']:<40} {x['ms']:.4f} ms {x['mj']:9.1f} mJ {x['w']:6.0f} W "
                  f"SM {x['mhz'] or '-'} MHz")
        for k in KNOBS:
            t, e = knob_pairs(xs, k)
            if t:
                print(f"  {k:<13} on/off over {len(t)} pairs: time median {statistics.median(t):.3f} "
                      f"({min(t):.3f}-{max(t):.3f}), energy median {statistics.median(e):.3f} "
                      f"({min(e):.3f}-{max(e):.3f})")
        st = stage_pairs(xs)
        for s in (3, 4):
            v = [x for x in st if x[0] == s]
            if v:
                print(f"  stages {s} over 2, {len(v)} pairs: time median "
                      f"{statistics.median(x[1] for x in v):.3f}, energy median "
                      f"{statistics.median(x[2] for x in v):.3f}")
    if a.svg:
        svg(shapes, a.svg)
        print(f"wrote {a.svg}")


if __name__ == "__main__":
    main()
