#!/usr/bin/env python3
"""Sums an ncu CSV (--metrics gpu__time_duration.sum) over one replayed step:
the kernels between the last two Adam launches, by kernel name, in µs.
With a pattern, also each matching launch in order.
Usage: ncu-step.py FILE.csv [PATTERN]"""
import re
import sys
from collections import defaultdict

from ncusteps import duration_us, last_step, launches


def main(path, pattern=None):
    step = [(n, duration_us(m)) for n, m in last_step(launches(path), path)]
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
