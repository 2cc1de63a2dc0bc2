#!/usr/bin/env python3
"""Sums an ncu CSV over one replayed step (the kernels between the last two
Adam launches, as ncu-step.py takes them): each metric in all, for the
next step's sampling kernels (slice, sample, relabel) and for the rest.
Usage: ncu-work.py FILE.csv"""
import csv
import sys
from collections import defaultdict

SAMPLING = ("slice_seeds", "sample_", "relabel_")


def main(path):
    launches = {}  # ID -> (name, {metric: value})
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(lines):
        k = launches.setdefault(r["ID"], (r["Kernel Name"].split("(")[0], {}))
        v = r["Metric Value"].replace(",", "")
        try:
            k[1][r["Metric Name"] + " (" + r.get("Metric Unit", "") + ")"] = float(v)
        except ValueError:
            pass
    rows = [launches[i] for i in sorted(launches, key=int)]
    ends = [i for i, (n, _) in enumerate(rows) if n.startswith("adam") and (i + 1 >= len(rows) or not rows[i + 1][0].startswith("adam"))]
    if len(ends) < 2:
        sys.exit("fewer than two steps in " + path)
    step = rows[ends[-2] + 1: ends[-1] + 1]
    tot = {"all": defaultdict(float), "sampling": defaultdict(float), "rest": defaultdict(float)}
    for n, m in step:
        part = "sampling" if n.startswith(SAMPLING) else "rest"
        for k, v in m.items():
            tot["all"][k] += v
            tot[part][k] += v
    kinds = sorted(tot["all"])
    print("%-60s %14s %14s %14s" % ("metric (%d kernels)" % len(step), "all", "sampling", "rest"))
    for k in kinds:
        print("%-60s %14.4g %14.4g %14.4g" % (k, tot["all"][k], tot["sampling"][k], tot["rest"][k]))


if __name__ == "__main__":
    main(sys.argv[1])
