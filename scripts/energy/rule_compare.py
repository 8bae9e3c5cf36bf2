#!/usr/bin/env python3
"""Two builds' energy (or sustained-time) picks scored on candidates_check.sh runs (CPU only):
per shape of each archive, the pick of OLD_SELECT and of NEW_SELECT (`origami-select
--family hopper --gpu h100-sxm --objective energy`, or `sustained` with `--objective
sustained`) and each pick's least measured energy (sustained time) over its own (None
where the run did not measure it), with the share of its window the GPU was busy; then
each build's median and minimum per archive group (seed, LLM, rerun).
Archives are read as candidates_score.py reads them (`files`).
Usage: rule_compare.py [--objective energy|sustained] OLD_SELECT NEW_SELECT ARCHIVE.tgz..."""
import json
import os
import statistics
import subprocess
import sys

from candidates_score import files


def pick(select, m, n, k, objective):
    out = subprocess.run([select, m, n, k, "--family", "hopper", "--gpu", "h100-sxm",
                          "--objective", objective], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("pick"):
            return line.split()[1]
    return None


def main():
    args = sys.argv[1:]
    objective = "energy"
    if args[:1] == ["--objective"]:
        if len(args) < 2 or args[1] not in ("energy", "sustained"):
            print("rule_compare.py: --objective takes energy or sustained", file=sys.stderr)
            sys.exit(2)
        objective, args = args[1], args[2:]
    if len(args) < 3:
        print("usage: rule_compare.py [--objective energy|sustained] OLD_SELECT NEW_SELECT "
              "ARCHIVE.tgz...", file=sys.stderr)
        sys.exit(2)
    old, new = args[:2]
    measure = "mj_per_launch" if objective == "energy" else "ms_per_launch"
    scores = {}
    for path in args:
        if not os.path.exists(path):
            print(f"rule_compare.py: no {path}", file=sys.stderr)
            sys.exit(2)
    for a in args[2:]:
        for name, text in files(a):
            if not (name.startswith("run-") and name.endswith(".json") and text.strip()):
                continue
            runs = json.loads(text)["configs"]
            m, n, k = name[len("run-"):-len(".json")].split("x")
            mj = {c["config"]: c["sustained"][measure] for c in runs if c.get("passed")}
            busy = {c["config"]: c["sustained"]["busy"] for c in runs}
            least = min(mj.values())
            cells = []
            group = next((g for g in ("seed", "llm", "rerun") if g in os.path.basename(a)),
                         os.path.basename(a))
            for build, select in (("old", old), ("new", new)):
                p = pick(select, m, n, k, objective)
                score = f"{least / mj[p]:.3f}" if p in mj else "None"
                if p in mj:
                    scores.setdefault((group, build), []).append(least / mj[p])
                cells.append(f"{p} {score} (busy {busy.get(p, 0):.2f})")
            print(f"{os.path.basename(a)} {m}x{n}x{k}: old {cells[0]}; new {cells[1]}")
    for (group, build), v in sorted(scores.items()):
        print(f"{group}, {build}: {len(v)} shapes, median {statistics.median(v):.3f}, "
              f"min {min(v):.3f}")


if __name__ == "__main__":
    main()
