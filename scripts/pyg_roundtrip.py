#!/usr/bin/env python3
"""Checks a `fanout export` file in PyTorch Geometric.

Builds torch_geometric's GraphSAGE or GCN with the architecture recorded in
the file's metadata, loads the exported state dict with strict=True, runs
full-neighbour inference on the whole graph of a fanout dataset directory,
and prints the test accuracy as JSON, to compare with
`fanout eval --full-eval` on the same checkpoint and data.

usage: pyg_roundtrip.py DATASET_DIR MODEL.safetensors
"""
import argparse
import json
import os

import numpy as np
import torch
from safetensors.torch import load_file, safe_open
from torch_geometric.nn.models import GCN, GIN, GraphSAGE


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
    cls = {"GraphSAGE": GraphSAGE, "GCN": GCN, "GIN": GIN}[kind]
    kw = dict(in_channels=int(meta["in_channels"]), hidden_channels=int(meta["hidden_channels"]),
              out_channels=int(meta["out_channels"]), num_layers=int(meta["num_layers"]))
    if kind == "GraphSAGE":
        kw["aggr"] = "mean"
    if kind == "GIN":
        kw["train_eps"] = meta.get("train_eps") == "true"
    model = cls(**kw).to(args.device)
    model.load_state_dict(load_file(args.weights, device=args.device), strict=True)
    model.eval()
    x, edge_index, y, test = load_dataset(args.data)
    with torch.no_grad():
        logits = model(x.to(args.device), edge_index.to(args.device))
    pred = logits.argmax(dim=1).cpu()
    acc = (pred[test] == y[test]).float().mean().item()
    print(json.dumps({"model": kind, "test_acc": acc, "test_vertices": int(len(test))}))


if __name__ == "__main__":
    main()
