"""Reads an ncu CSV (ncu --csv --metrics ...) for ncu-step.py and
ncu-work.py: every launch in order with its metrics, and the launches of
one replayed step (from the end of the second-to-last run of Adam launches
to the end of the last; a step's Adam launches come in a run)."""
import csv
import sys


def launches(path):
    """[(kernel name, {"metric (unit)": value})] in launch order."""
    by_id = {}
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(lines):
        name, metrics = by_id.setdefault(r["ID"], (r["Kernel Name"].split("(")[0], {}))
        try:
            metrics[r["Metric Name"] + " (" + r.get("Metric Unit", "") + ")"] = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            pass
    return [by_id[i] for i in sorted(by_id, key=int)]


def last_step(rows, path):
    """The launches of the last whole step in rows (launches' output)."""
    ends = [i for i, (n, _) in enumerate(rows) if n.startswith("adam") and (i + 1 >= len(rows) or not rows[i + 1][0].startswith("adam"))]
    if len(ends) < 2:
        sys.exit("fewer than two steps in " + path)
    return rows[ends[-2] + 1: ends[-1] + 1]


def duration_us(metrics):
    """A launch's gpu__time_duration.sum in µs, whatever unit ncu gave."""
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3}
    for k, v in metrics.items():
        if k.startswith("gpu__time_duration.sum ("):
            return v * scale.get(k[len("gpu__time_duration.sum ("):-1], 1e-3)
    return 0.0
