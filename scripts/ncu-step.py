#!/usr/bin/env python3
"""Sums an ncu CSV (--metrics gpu__time_duration.sum) over one replayed step:
the kernels between the last two Adam launches, by kernel name, in µs.
With a pattern, also each matching launch in order.
Usage: ncu-step.py FILE.csv [PATTERN]"""
import csv
import re
import sys
from collections import defaultdict


def main(path, pattern=None):
    rows = []
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        v = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "ns")
        scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3}.get(unit, 1e-3)
        rows.append((r["Kernel Name"].split("(")[0], v * scale))
    adam = [i for i, (n, _) in enumerate(rows) if n.startswith("adam")]
    # The step's Adam launches come in a run (one per parameter): the step is
    # from the first Adam of the previous run's end to the last of this one.
    ends = [i for i in adam if i + 1 >= len(rows) or not rows[i + 1][0].startswith("adam")]
    if len(ends) < 2:
        sys.exit("fewer than two steps in " + path)
    step = rows[ends[-2] + 1: ends[-1] + 1]
    by = defaultdict(lambda: [0, 0.0])
    for n, t in step:
        by[n][0] += 1
        by[n][1] += t
    total = sum(t for _, t in step)
    for n, (c, t) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print("%8.1f us %3d  %s" % (t, c, n))
    print("%8.1f us %3d  total" % (total, len(step)))
    if pattern:
        print("launches matching %r:" % pattern)
        for n, t in step:
            if re.search(pattern, n):
                print("%8.1f us  %s" % (t, n))


if __name__ == "__main__":
    main(*sys.argv[1:3])
