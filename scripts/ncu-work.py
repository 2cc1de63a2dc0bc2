#!/usr/bin/env python3
"""Sums an ncu CSV over one replayed step (the kernels between the last two
Adam launches, as ncu-step.py takes them): each metric in all, for the
next step's sampling kernels (slice, sample, relabel) and for the rest.
Usage: ncu-work.py FILE.csv"""
import sys
from collections import defaultdict

from ncusteps import last_step, launches

SAMPLING = ("slice_seeds", "sample_", "relabel_")


def main(path):
    step = last_step(launches(path), path)
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
