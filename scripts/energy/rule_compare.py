#!/usr/bin/env python3
"""Two builds' energy picks scored on candidates_check.sh runs (CPU only): per shape of each
archive, the energy pick of OLD_SELECT and of NEW_SELECT (`origami-select --family hopper
--gpu h100-sxm --objective energy`) and each pick's least measured energy over its own
(None where the run did not measure it), with the share of its window the GPU was busy.
Archives are read as candidates_score.py reads them (`files`).
Usage: rule_compare.py OLD_SELECT NEW_SELECT ARCHIVE.tgz..."""
import json
import os
import subprocess
import sys

from candidates_score import files


def energy_pick(select, m, n, k):
    out = subprocess.run([select, m, n, k, "--family", "hopper", "--gpu", "h100-sxm",
                          "--objective", "energy"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("pick"):
            return line.split()[1]
    return None


def main():
    if len(sys.argv) < 4:
        print("usage: rule_compare.py OLD_SELECT NEW_SELECT ARCHIVE.tgz...", file=sys.stderr)
        sys.exit(2)
    old, new = sys.argv[1:3]
    for path in sys.argv[1:]:
        if not os.path.exists(path):
            print(f"rule_compare.py: no {path}", file=sys.stderr)
            sys.exit(2)
    for a in sys.argv[3:]:
        for name, text in files(a):
            if not (name.startswith("run-") and name.endswith(".json") and text.strip()):
                continue
            runs = json.loads(text)["configs"]
            m, n, k = name[len("run-"):-len(".json")].split("x")
            mj = {c["config"]: c["sustained"]["mj_per_launch"] for c in runs if c.get("passed")}
            busy = {c["config"]: c["sustained"]["busy"] for c in runs}
            least = min(mj.values())
            cells = []
            for select in (old, new):
                p = energy_pick(select, m, n, k)
                score = f"{least / mj[p]:.3f}" if p in mj else "None"
                cells.append(f"{p} {score} (busy {busy.get(p, 0):.2f})")
            print(f"{os.path.basename(a)} {m}x{n}x{k}: old {cells[0]}; new {cells[1]}")


if __name__ == "__main__":
    main()
