#!/usr/bin/env python3
"""Scores scripts/energy/candidates_check.sh's folders (or their .tgz): per shape, the
measured energy of the model's energy pick over the least energy measured among the
candidates, the sustained time of its sustained-time pick over the best measured, and the
burst-time pick's energy over the least; then medians and minima per folder. The picks
are rank 1 of picks-MxNxK-{energy,sustained,time}.txt; every config's energy is
`origami-bench run --energy-s`'s `sustained` (mJ per GEMM, ms per GEMM). Configs that fail
the cuBLAS check are left out (and counted). Usage: candidates_score.py DIR_OR_TGZ... (with several, also their shapes together)"""
import io
import json
import os
import statistics
import sys
import tarfile


def files(src):
    if os.path.isdir(src):
        for name in sorted(os.listdir(src)):
            with open(os.path.join(src, name)) as f:
                yield name, f.read()
        return
    with tarfile.open(src) as t:
        for m in sorted(t.getmembers(), key=lambda m: m.name):
            if m.isfile():
                yield os.path.basename(m.name), t.extractfile(m).read().decode()


def rank1(text):
    for line in text.splitlines():
        p = line.split()
        if len(p) > 1 and p[0] == "1" and "x" in p[1]:
            return p[1]
    return None


def score(src):
    picks, runs = {}, {}
    for name, text in files(src):
        if name.startswith("picks-") and name.endswith(".txt"):
            shape, obj = name[len("picks-"):-len(".txt")].rsplit("-", 1)
            picks.setdefault(shape, {})[obj] = rank1(text)
        elif name.startswith("run-") and name.endswith(".json") and text.strip():
            runs[name[len("run-"):-len(".json")]] = json.loads(text)
    rows = []
    for shape, d in sorted(runs.items()):
        ok = {c["config"]: c["sustained"] for c in d["configs"]
              if c.get("passed") and c.get("sustained")}
        failed = sum(1 for c in d["configs"] if not c.get("passed"))
        if not ok:
            continue
        e_min = min(v["mj_per_launch"] for v in ok.values())
        t_min = min(v["ms_per_launch"] for v in ok.values())
        p = picks.get(shape, {})
        get = lambda obj, key: ok[p[obj]][key] if p.get(obj) in ok else None
        e_pick, s_pick, t_pick_e = get("energy", "mj_per_launch"), get("sustained", "ms_per_launch"), get("time", "mj_per_launch")
        rows.append((shape, len(ok), failed, e_min / e_pick if e_pick else None,
                     t_min / s_pick if s_pick else None, e_min / t_pick_e if t_pick_e else None,
                     d["cublas"]["sustained"]["mj_per_launch"] / e_min))
    print(f"{src}: shape, configs measured (failed the check), energy pick / least energy, "
          "sustained pick / best sustained, time pick's energy / least energy, cuBLAS energy / least")
    for r in rows:
        cells = ["-" if v is None else f"{v:.3f}" for v in r[3:]]
        print(f"  {r[0]:>18} {r[1]:3d} ({r[2]})  " + "  ".join(cells))
    summary(rows)
    return rows


def summary(rows, indent="  "):
    for i, what in ((3, "energy pick"), (4, "sustained pick"), (5, "time pick's energy")):
        v = [r[i] for r in rows if r[i] is not None]
        if v:
            print(f"{indent}{what}: median {statistics.median(v):.3f}, min {min(v):.3f} over {len(v)} shapes")


if __name__ == "__main__":
    every = []
    for src in sys.argv[1:]:
        every += score(src)
    if len(sys.argv) > 2:
        print("all folders together:")
        summary(every)
