#!/usr/bin/env python3
"""Summarize the predicted fronts of scripts/energy/predicted_fronts.sh (issue 15): per
shape list and power limit, the front sizes, the energy pick's sustained time over the
sustained pick's, and at 700 W the burst-time pick's energy over the energy pick's.
Usage: fronts_summary.py DIR (the folder predicted_fronts.sh wrote)."""
import csv
import statistics as st
import sys


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def main(d):
    print("Predicted time/energy fronts of the hopper family on the H100 preset with the committed")
    print("energy costs (calibrations/energy/h100-sxm.json), from `scripts/energy/predicted_fronts.sh")
    print("DIR` and `scripts/energy/fronts_summary.py DIR` (CPU only). Per list and power limit:")
    print("shapes, the front's size (median, largest, shapes where one config is both fastest and")
    print("least energy), the sustained time of the energy pick over the sustained pick's, and at")
    print("the GPU's own 700 W the energy of the model's burst-time pick over the energy pick's.")
    print()
    print(f"{'list':5} {'limit W':>7} {'shapes':>6} {'front med':>9} {'max':>4} {'single':>6} "
          f"{'t(E pick)/t(t pick) med':>24} {'max':>6} {'E(burst pick)/E(E pick) med':>28} {'max':>6}")
    for lst in ["seed", "llm"]:
        for w in [700, 550, 400, 300]:
            by = {}
            for r in rows(f"{d}/fronts-{lst}-{w}.csv"):
                by.setdefault((r["M"], r["N"], r["K"]), []).append(r)
            sizes = [len(v) for v in by.values()]

            def picks(obj):
                return {(r["M"], r["N"], r["K"]): r for r in rows(f"{d}/picks-{lst}-{obj}-{w}.csv")}

            pe, ps = picks("energy"), picks("sustained")
            tr = [float(pe[k]["sustained_us"]) / float(ps[k]["sustained_us"]) for k in pe]
            e1 = e2 = "-"
            if w == 700:
                pt = picks("time")
                er = [float(pt[k]["energy_mj"]) / float(pe[k]["energy_mj"]) for k in pe]
                e1, e2 = f"{st.median(er):.3f}", f"{max(er):.3f}"
            print(f"{lst:5} {w:>7} {len(by):>6} {st.median(sizes):>9} {max(sizes):>4} "
                  f"{sum(1 for x in sizes if x == 1):>6} {st.median(tr):>24.3f} {max(tr):>6.3f} "
                  f"{e1:>28} {e2:>6}")


if __name__ == "__main__":
    main(sys.argv[1])
