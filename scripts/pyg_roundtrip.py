#!/usr/bin/env python3
"""Checks a `fanout export` file in PyTorch Geometric.

Builds torch_geometric's GraphSAGE, GCN, GIN or GAT with the architecture
recorded in the file's metadata, loads the exported state dict with
strict=True, runs full-neighbour inference on the whole graph of a fanout
dataset directory, and prints the test accuracy as JSON, to compare with
`fanout eval --full-eval` on the same checkpoint and data.

GAT: torch_geometric's GAT gives all its GATConv layers the same heads, the
last one with concat=False (heads averaged, as in fanout). Where fanout's
last layer has another head count (--out-heads; the metadata's last_conv),
that GATConv replaces convs[-1] before loading. GATConv's weight is named
lin.weight from torch_geometric 2.5 on (lin_src and lin_dst before), so GAT
needs 2.5 or later.

Normalisation and jumping knowledge (fanout train --norm, --jk): the
metadata's norm ("batch_norm" or "layer_norm"), norm_kwargs (layer_norm's
{"mode": "node"}: fanout normalises each vertex's row) and jk ("last",
"cat" or "max") are passed to the model as they are.

GIN: PyG's GINConv sums every neighbour at weight 1. fanout's GIN layer
trained on k sampled neighbours weighs each of a vertex's deg neighbours
min(deg, k)/deg in full-neighbour inference (the expectation of its
training sum), so the two agree exactly when every layer was trained on all
neighbours (--fanouts -1,...; the metadata's gin_sum "exact"). A model
trained on sampled neighbours (gin_sum "capped") is loaded and run all the
same, with a warning: PyG then sums hubs at a larger scale than the model
was trained for, and its accuracy is not fanout's.

usage: pyg_roundtrip.py DATASET_DIR MODEL.safetensors
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
from safetensors.torch import load_file, safe_open
from torch_geometric.nn import GATConv
from torch_geometric.nn.models import GAT, GCN, GIN, GraphSAGE


def load_dataset(d):
    a = lambda name: np.load(os.path.join(d, name + ".npy"))
    indptr, indices = a("indptr").astype(np.int64), a("indices").astype(np.int64)
    n = len(indptr) - 1
    # Row i of the CSR lists the neighbours of i: messages flow j -> i.
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    edge_index = torch.from_numpy(np.stack([indices, dst]))
    x = torch.from_numpy(a("feat").astype(np.float32))
    y = torch.from_numpy(a("label").astype(np.int64))
    test = torch.from_numpy(a("test_idx").astype(np.int64))
    return x, edge_index, y, test


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("weights")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = p.parse_args()
    with safe_open(args.weights, framework="pt") as f:
        meta = f.metadata()
    kind = meta["pyg_model"].rsplit(".", 1)[1]
    cls = {"GraphSAGE": GraphSAGE, "GCN": GCN, "GIN": GIN, "GAT": GAT}[kind]
    kw = dict(in_channels=int(meta["in_channels"]), hidden_channels=int(meta["hidden_channels"]),
              out_channels=int(meta["out_channels"]), num_layers=int(meta["num_layers"]))
    if "norm" in meta:
        kw["norm"] = meta["norm"]
        if "norm_kwargs" in meta:
            kw["norm_kwargs"] = json.loads(meta["norm_kwargs"])
    if "jk" in meta:
        kw["jk"] = meta["jk"]
    if kind == "GraphSAGE":
        kw["aggr"] = "mean"
    if kind == "GIN":
        kw["train_eps"] = meta.get("train_eps") == "true"
        if meta.get("gin_sum") == "capped":
            print(f"warning: GIN trained on fanouts {meta.get('gin_fanouts')}: fanout weighs a vertex's neighbours "
                  "min(deg, fanout)/deg in full-neighbour inference, PyG's GINConv 1; the accuracies differ "
                  "(train with --fanouts -1,... for an exact round trip)", file=sys.stderr)
    if kind == "GAT":
        # fanout's attention: LeakyReLU slope 0.2, each vertex attends to itself.
        kw.update(heads=int(meta["heads"]), negative_slope=0.2, add_self_loops=True)
    model = cls(**kw)
    if kind == "GAT" and int(meta["out_heads"]) != kw["heads"]:
        last_in = kw["hidden_channels"] if kw["num_layers"] > 1 else kw["in_channels"]
        model.convs[-1] = GATConv(last_in, kw["out_channels"], heads=int(meta["out_heads"]), concat=False,
                                  negative_slope=0.2, add_self_loops=True)
    model = model.to(args.device)
    model.load_state_dict(load_file(args.weights, device=args.device), strict=True)
    model.eval()
    x, edge_index, y, test = load_dataset(args.data)
    loops = int((edge_index[0] == edge_index[1]).sum())
    if kind == "GAT" and loops:
        # fanout attends to a stored self loop besides the one it adds;
        # GATConv removes stored ones before adding its own.
        print(f"warning: {loops} self-loop edges: GAT's attention differs from fanout's on those vertices",
              file=sys.stderr)
    with torch.no_grad():
        logits = model(x.to(args.device), edge_index.to(args.device))
    pred = logits.argmax(dim=1).cpu()
    acc = (pred[test] == y[test]).float().mean().item()
    print(json.dumps({"model": kind, "test_acc": acc, "test_vertices": int(len(test))}))


if __name__ == "__main__":
    main()
