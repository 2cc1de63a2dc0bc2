#!/usr/bin/env python3
"""Writes two tiny link-prediction datasets in Open Graph Benchmark's raw
layout, with split files written by torch.save as OGB's are, for the test
that imports and trains them (cmd/fanout/import_ogb_fixture_test.go):

  OUT/ogbl_collab_tiny/     raw/{num-node-list,num-edge-list,edge,edge_weight,
                            edge_year,node-feat}.csv.gz, split/time/{train,valid,test}.pt
                            as ogbl-collab: 'edge' [E, 2], 'weight' and 'year' [E],
                            and for valid and test a pool 'edge_neg' [M, 2]
  OUT/ogbl_citation2_tiny/  raw/{num-node-list,num-edge-list,edge,node-feat,
                            node_year}.csv.gz, split/time/{train,valid,test}.pt as
                            ogbl-citation2: 'source_node' and 'target_node' [E] (two
                            strided views of one [E, 2] storage), and for valid and
                            test 'target_node_neg' [E, K]

Each folder also gets expected.json: what importing it must give. The
graphs are 160 vertices in 4 communities (features: the community's
indicator plus noise), a few hundred edges; every draw comes from a fixed
SplitMix64 sequence, so the data is the same on every run and machine.
The collaboration split lists repeats (a pair in several years) and puts
two training edges in validation, as ogbl-collab does; the importer
dedups the one and drops the other, and expected.json counts what stays.

Usage: python3 scripts/make_ogbl_fixture.py OUT   (needs only PyTorch)
"""
import gzip
import json
import os
import sys

import torch

NODES, COMMUNITIES, FEATS, NEGATIVES = 160, 4, 8, 20


class Draws:
    """SplitMix64: deterministic 64-bit words, independent of Python's random."""

    def __init__(self, seed):
        self.s = seed & (2**64 - 1)

    def word(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & (2**64 - 1)
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
        return z ^ (z >> 31)

    def below(self, n):
        return self.word() % n

    def unit(self):
        return self.word() / 2.0**64


def community(v):
    return v * COMMUNITIES // NODES


def edges(draws):
    """Undirected pairs (u, v), u != v, each once, in the order drawn: each
    vertex draws three partners, its own community's 9 times in 10."""
    size = NODES // COMMUNITIES
    seen, out = set(), []
    for u in range(NODES):
        for _ in range(3):
            c = community(u) if draws.below(10) < 9 else draws.below(COMMUNITIES)
            v = c * size + draws.below(size)
            key = (min(u, v), max(u, v))
            if u != v and key not in seen:
                seen.add(key)
                out.append((u, v))
    return out


def features(draws):
    rows = []
    for v in range(NODES):
        row = [round(draws.unit() - 0.5, 4) for _ in range(FEATS)]
        row[community(v)] += 1.0
        rows.append(row)
    return rows


def negatives(draws, sources, adjacent, k):
    """k destinations per source, none the source nor adjacent to it."""
    out = []
    for u in sources:
        row = []
        while len(row) < k:
            w = draws.below(NODES)
            if w != u and (min(u, w), max(u, w)) not in adjacent:
                row.append(w)
        out.append(row)
    return out


def write_gz(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as g:
        g.write("".join(line + "\n" for line in lines).encode())


def csv(rows):
    return [",".join(str(x) for x in row) for row in rows]


def long(rows):
    return torch.tensor(rows, dtype=torch.long)


def write_raw(root, train_pairs, feat, extra):
    raw = os.path.join(root, "raw")
    write_gz(os.path.join(raw, "num-node-list.csv.gz"), [str(NODES)])
    write_gz(os.path.join(raw, "num-edge-list.csv.gz"), [str(len(train_pairs))])
    write_gz(os.path.join(raw, "edge.csv.gz"), csv(train_pairs))
    write_gz(os.path.join(raw, "node-feat.csv.gz"), csv(feat))
    for name, rows in extra.items():
        write_gz(os.path.join(raw, name + ".csv.gz"), csv(rows))


def save_split(root, parts):
    split = os.path.join(root, "split", "time")
    os.makedirs(split, exist_ok=True)
    for name, d in parts.items():
        torch.save(d, os.path.join(split, name + ".pt"))


def write_expected(root, **counts):
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump(dict(counts, nodes=NODES, feat_dim=FEATS), f, indent=2, sort_keys=True)
        f.write("\n")


def collab(out):
    """ogbl-collab's layout: positives as 'edge' [E, 2] with 'weight' and
    'year', held-out negatives as one pool 'edge_neg' [M, 2]."""
    d = Draws(1)
    pairs, feat = edges(d), features(d)
    years = [2010 + d.below(10) for _ in pairs]
    train = [(p, y) for p, y in zip(pairs, years) if y <= 2017]
    valid = [p for p, y in zip(pairs, years) if y == 2018]
    test = [p for p, y in zip(pairs, years) if y == 2019]
    train_set = {(min(u, v), max(u, v)) for (u, v), _ in train}
    repeats = [(train[i][0], 2018 + i % 2) for i in range(0, 6, 2)]  # collaborations again, later
    train_rows = train + repeats
    valid = valid + [train[1][0], train[3][0]]  # training edges: the importer drops them
    root = os.path.join(out, "ogbl_collab_tiny")
    write_raw(root, [p for p, _ in train_rows], feat, {
        "edge_weight": [[1 + i % 3] for i in range(len(train_rows))],
        "edge_year": [[y] for _, y in train_rows],
    })

    def held(pos, seed):
        neg = negatives(Draws(seed), [u for u, _ in pos], train_set, NEGATIVES)
        pool = [(u, w) for (u, _), row in zip(pos, neg) for w in row]
        pool += [(0, 1), (2, 3), (4, 5)]  # a pool longer than E·K: its tail is unused
        return {"edge": long(pos), "weight": long([1] * len(pos)), "year": long([2018] * len(pos)),
                "edge_neg": long(pool)}

    save_split(root, {
        "train": {"edge": long([p for p, _ in train_rows]), "weight": long([1 + i % 3 for i in range(len(train_rows))]),
                  "year": long([y for _, y in train_rows])},
        "valid": held(valid, 2),
        "test": held(test, 3),
    })
    write_expected(root, train_edges=len(train_set), valid=len(valid) - 2, test=len(test), negatives=NEGATIVES, dropped=2)


def citation2(out):
    """ogbl-citation2's layout: positives as 'source_node' and
    'target_node' [E], negatives 'target_node_neg' [E, K]."""
    d = Draws(4)
    pairs, feat = edges(d), features(d)
    cited, train, valid, test = {}, [], [], []
    for u, v in pairs:  # every third source's first citation to validation, its second to test
        n = cited.get(u, 0)
        if u % 3 == 0 and n < 2:
            (valid if n == 0 else test).append((u, v))
            cited[u] = n + 1
        else:
            train.append((u, v))
    train_set = {(min(u, v), max(u, v)) for u, v in train}
    root = os.path.join(out, "ogbl_citation2_tiny")
    write_raw(root, train, feat, {"node_year": [[2000 + v % 20] for v in range(NODES)]})

    def positives(pos):
        both = long(pos)  # one storage: the two columns are strided views of it
        return {"source_node": both[:, 0], "target_node": both[:, 1]}

    def with_negatives(pos, seed):
        d = positives(pos)
        d["target_node_neg"] = long(negatives(Draws(seed), [u for u, _ in pos], train_set, NEGATIVES))
        return d

    save_split(root, {"train": positives(train), "valid": with_negatives(valid, 5), "test": with_negatives(test, 6)})
    write_expected(root, train_edges=len(train_set), valid=len(valid), test=len(test), negatives=NEGATIVES, dropped=0)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_ogbl_fixture.py OUT")
    out = sys.argv[1]
    collab(out)
    citation2(out)
    print("wrote", os.path.join(out, "ogbl_collab_tiny"), "and", os.path.join(out, "ogbl_citation2_tiny"))


if __name__ == "__main__":
    main()
