#!/usr/bin/env python3
"""Measured time/energy fronts at the default power limit (issue 15): from the energy.csv
that `origami-bench energy --out DIR` writes, per folder the configs on each shape's
measured front (median, largest), the shapes whose fastest measured config is also the
least energy, and the predicted front's agreement. Usage: measured_fronts.py DIR..."""
import csv
import statistics as st
import sys

for d in sys.argv[1:]:
    by = {}
    with open(f"{d}/energy.csv") as f:
        for r in csv.DictReader(f):
            by.setdefault((r["set"], r["m"], r["n"], r["k"]), []).append(r)
    sizes, same, agree = [], 0, 0
    for v in by.values():
        front = [r for r in v if r["measured_front"] == "true"]
        sizes.append(len(front))
        fastest = min(v, key=lambda r: float(r["measured_sustained_us"]))
        least = min(v, key=lambda r: float(r["measured_mj"]))
        same += fastest is least
        agree += all((r["measured_front"] == "true") == (r["predicted_front"] == "true") for r in v)
    print(f"{d}: {len(by)} shapes, configs on the measured front median {st.median(sizes)}, "
          f"max {max(sizes)}; fastest = least energy on {same} shapes; predicted front = "
          f"measured front on {agree} shapes")
