#!/usr/bin/env python3
"""Reads an ncu CSV (ncu --csv --metrics ...) of `fanout bench --mode replay`
over one replayed step: the launches from the end of the second-to-last run
of Adam launches to the end of the last (a step's Adam launches come in a
run), with the kernels serialized as ncu runs them.

  ncustep.py kernels FILE [PATTERN]
      gpu__time_duration.sum by kernel name, in µs, largest first, and the
      step's total; with a pattern, each matching launch in order too
  ncustep.py work FILE
      every metric summed over the step, for the next step's sampling
      kernels (slice, sample, relabel), for the rest, and in all

FILE may be gzipped (FILE.gz, as scripts/measure keeps them).
"""
import argparse
import csv
import gzip
import re
import signal
import sys
from collections import defaultdict

SAMPLING = ("slice_seeds", "sample_", "relabel_")
UNITS = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3}


def launches(path):
    """[(kernel name, {"metric (unit)": value})] in launch order."""
    by_id = {}
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(lines):
        name, metrics = by_id.setdefault(r["ID"], (r["Kernel Name"].split("(")[0], {}))
        try:
            metrics[r["Metric Name"] + " (" + r.get("Metric Unit", "") + ")"] = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            pass
    return [by_id[i] for i in sorted(by_id, key=int)]


def last_step(rows, path):
    """The launches of the last whole step in rows."""
    ends = [i for i, (n, _) in enumerate(rows)
            if n.startswith("adam") and (i + 1 >= len(rows) or not rows[i + 1][0].startswith("adam"))]
    if len(ends) < 2:
        sys.exit("fewer than two steps in " + path)
    return rows[ends[-2] + 1: ends[-1] + 1]


def duration_us(metrics):
    """A launch's gpu__time_duration.sum in µs, whatever unit ncu gave."""
    for k, v in metrics.items():
        if k.startswith("gpu__time_duration.sum ("):
            return v * UNITS.get(k[len("gpu__time_duration.sum ("):-1], 1e-3)
    return 0.0


def kernels(path, pattern=None):
    step = [(n, duration_us(m)) for n, m in last_step(launches(path), path)]
    by = defaultdict(lambda: [0, 0.0])
    for n, t in step:
        by[n][0] += 1
        by[n][1] += t
    for n, (c, t) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print("%8.1f us %3d  %s" % (t, c, n))
    print("%8.1f us %3d  total" % (sum(t for _, t in step), len(step)))
    if pattern:
        print("launches matching %r:" % pattern)
        for n, t in step:
            if re.search(pattern, n):
                print("%8.1f us  %s" % (t, n))


def work(path):
    step = last_step(launches(path), path)
    tot = {"all": defaultdict(float), "sampling": defaultdict(float), "rest": defaultdict(float)}
    for n, m in step:
        part = "sampling" if n.startswith(SAMPLING) else "rest"
        for k, v in m.items():
            tot["all"][k] += v
            tot[part][k] += v
    print("%-60s %14s %14s %14s" % ("metric (%d kernels)" % len(step), "all", "sampling", "rest"))
    for k in sorted(tot["all"]):
        print("%-60s %14.4g %14.4g %14.4g" % (k, tot["all"][k], tot["sampling"][k], tot["rest"][k]))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    k = sub.add_parser("kernels")
    k.add_argument("file")
    k.add_argument("pattern", nargs="?")
    w = sub.add_parser("work")
    w.add_argument("file")
    a = p.parse_args()
    # A reader that stops early (head) ends the listing quietly.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if a.what == "kernels":
        kernels(a.file, a.pattern)
    else:
        work(a.file)


if __name__ == "__main__":
    main()
