#!/usr/bin/env python3
"""Summarises the runs.log that scripts/measure writes.

Each run there starts with a line "== NAME@BUILD: ARGS" (the build is
fanout or fanout-base), followed by the command's output.

  runlog.py steps [--skip LINES] FILE
                          the step time of every `fanout bench --json` line,
                          by run name and build (and mode, where a run prints
                          several), in ms, each round in order and their
                          mean; with both builds, fanout's mean over
                          fanout-base's (below 1: the current build is faster)
  runlog.py epochs [--from N] [--skip LINES] FILE
                          train's steps/s of epochs N and later (default 2),
                          their mean, the epoch and step time it gives, and
                          the same ratio of builds
"""
import argparse
import json
import re
from collections import OrderedDict

EPOCH = re.compile(r"^(?:\[rank 0\] )?epoch (\d+)/\d+ +(\d+) steps +([\d.]+) steps/s")


def runs(path, skip):
    """Yields (name, build, line) for every output line of every run after
    the file's first skip lines."""
    name = build = None
    with open(path, errors="replace") as f:
        for i, line in enumerate(f):
            if i < skip:
                continue
            if line.startswith("== "):
                head = line[3:].split(":", 1)[0]
                name, _, build = head.partition("@")
                build = build or "fanout"
                continue
            if name is not None:
                yield name, build, line.rstrip("\n")


def step_ms(line):
    """The step time of a bench --json line in ms, and its mode."""
    try:
        r = json.loads(line)
    except ValueError:
        return None
    if not isinstance(r, dict):
        return None
    if "step_ms" in r:
        return r["step_ms"], r.get("mode", "")
    if "step_s" in r:
        return r["step_s"] * 1e3, r.get("mode", "")
    return None


def table(values, unit, fmt, rows=True):
    """Prints values[(name, build)] = [..] (unless not rows) and, where a
    name has both builds, the ratio of their means."""
    names = OrderedDict()
    for (name, build), v in values.items():
        names.setdefault(name, {})[build] = v
    for name, builds in names.items():
        for build, v in builds.items():
            if rows:
                mean = sum(v) / len(v)
                print("   %-28s %-12s %s  mean %s %s" % (name, build, " ".join(fmt % x for x in v), fmt % mean, unit))
        if "fanout" in builds and "fanout-base" in builds:
            new = sum(builds["fanout"]) / len(builds["fanout"])
            base = sum(builds["fanout-base"]) / len(builds["fanout-base"])
            print("   %-28s fanout / fanout-base %.3f" % (name, new / base))


def steps(path, skip):
    values = OrderedDict()
    for name, build, line in runs(path, skip):
        if not line.startswith("{"):
            continue
        got = step_ms(line)
        if got is None:
            continue
        ms, mode = got
        key = name if not mode or mode in ("replay", "auto") else name + " " + mode
        values.setdefault((key, build), []).append(ms)
    table(values, "ms a step", "%.4f")


def epochs(path, skip, first):
    rates = OrderedDict()
    for name, build, line in runs(path, skip):
        m = EPOCH.match(line)
        if m and int(m.group(1)) >= first:
            rates.setdefault((name, build), []).append((int(m.group(2)), float(m.group(3))))
    means = OrderedDict()
    for key, v in rates.items():
        secs = [s / r for s, r in v]
        means[key] = [sum(r for _, r in v) / len(v)]
        print("   %-28s %-12s epochs %d-: %.1f steps/s, epoch %.2f ms, step %.4f ms" %
              (key[0], key[1], first, means[key][0], 1e3 * sum(secs) / len(secs), 1e3 * sum(secs) / sum(s for s, _ in v)))
    # The ratio of builds compares time: steps/s inverted.
    table(OrderedDict((k, [1e3 / v[0]]) for k, v in means.items()), "", "%.4f", rows=False)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("steps")
    e = sub.add_parser("epochs")
    e.add_argument("--from", dest="first", type=int, default=2)
    for q in (s, e):
        q.add_argument("--skip", type=int, default=0, help="lines of FILE to pass over (earlier scenarios' runs)")
        q.add_argument("file")
    a = p.parse_args()
    if a.what == "steps":
        steps(a.file, a.skip)
    else:
        epochs(a.file, a.skip, a.first)


if __name__ == "__main__":
    main()
