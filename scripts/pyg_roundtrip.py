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

Typed models (the metadata's model rsage, rgcn or rgat; DATASET_DIR a
typed dataset, read by pyg_hetero.py's load): the wrapper pyg_hetero.py
trains, a torch.nn.Embedding per featureless type (embed.<type>.weight)
and gnn, a to_hetero module (a sum over the relations into a type) over
the types and relations of the metadata, in its order: for rsage
to_hetero(GraphSAGE), for rgcn to_hetero(RGCN) below (per relation a
neighbour mean through its weight, no bias; per type its own row through a
Linear with bias). Their input widths are lazy (-1): one forward pass over
the whole graph sets them from the data, so that loading with strict=True
then also checks every width of the file against the data's. For rgat,
RGAT below: per layer and relation a GATConv(add_self_loops=False), keyed
as to_hetero keys its copies, summed into each type as HeteroConv sums
them; its widths come from the metadata, which is checked against the
data. Inference runs on the whole graph with every neighbour, in eval
mode; the valid and test accuracies of the target type are printed, to
compare with `fanout eval` of a model trained with --fanouts -1,... (every
neighbour).

usage: pyg_roundtrip.py DATASET_DIR MODEL.safetensors
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
from safetensors.torch import load_file, safe_open
from torch_geometric.nn import BatchNorm, GATConv, LayerNorm, Linear, SAGEConv, to_hetero
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


class RGCN(torch.nn.Module):
    """fanout's rgcn for to_hetero: per layer, SAGEConv without root weight
    or bias (the mean of a relation's sources through lin_l) plus a Linear
    of the vertex's own row (its type's root weight and bias); to_hetero
    sums the relations into a type and gives every type its own Linear.
    ReLU between layers (dropout, training's only, is left out)."""

    def __init__(self, hidden, out, layers, norm=None, jk=None):
        super().__init__()
        # With jumping knowledge every layer is hidden and lin maps the
        # layers' outputs (cat, max or the last) to the classes, as
        # BasicGNN's jk and lin.
        widths = [hidden] * (layers - 1) + [hidden if jk else out]
        self.convs = torch.nn.ModuleList(SAGEConv((-1, -1), d, aggr="mean", root_weight=False, bias=False)
                                         for d in widths)
        self.lins = torch.nn.ModuleList(Linear(-1, d) for d in widths)
        self.hidden_layers = layers if jk else layers - 1
        # The hidden layers' normalisation, as BasicGNN's norms (metadata norm).
        make = {"batch_norm": lambda: BatchNorm(hidden), "layer_norm": lambda: LayerNorm(hidden, mode="node")}
        self.norms = torch.nn.ModuleList(make[norm]() for _ in range(self.hidden_layers)) if norm else None
        self.jk = jk
        if jk:
            self.lin = Linear(-1, out)

    def forward(self, x, edge_index):
        xs = []
        for i, (conv, lin) in enumerate(zip(self.convs, self.lins)):
            x = conv(x, edge_index) + lin(x)
            if i < self.hidden_layers:
                if self.norms is not None:
                    x = self.norms[i](x)
                x = x.relu()
            xs.append(x)
        if self.jk == "cat":
            x = torch.cat(xs, dim=-1)
        elif self.jk == "max":
            x = torch.stack(xs, dim=-1).max(dim=-1)[0]
        return self.lin(x) if self.jk else x


class RGAT(torch.nn.Module):
    """fanout's rgat, MLPerf's RGNN(model="rgat") with fanout's options: in
    each layer, per relation (its module keyed src__rel__dst, as to_hetero
    keys its copies), PyG's GATConv(add_self_loops=False): GATConv(in, ...)
    with one lin where the relation's source and destination rows have one
    width, GATConv((in_src, in_dst), ...) with lin_src and lin_dst where
    they differ; heads concatenated below the top, out_heads averaged at it.
    The relations into a type are summed (HeteroConv(aggr="sum")); between
    layers each type's rows are normalised (norm, BasicGNN's) and go
    through ReLU; with jk every layer is hidden and lin (one per type, as
    to_hetero gives BasicGNN's lin to each) maps the jumping knowledge of
    the layers to the classes. Dropout, training's only, is left out."""

    def __init__(self, node_types, edge_types, in_channels, hidden, out, layers, heads, out_heads, norm=None,
                 jk=None):
        super().__init__()
        self.edge_types = [(f"{s}__{r}__{d}", (s, r, d)) for s, r, d in edge_types]
        self.hidden_layers = layers if jk else layers - 1
        self.convs = torch.nn.ModuleList()
        for i in range(layers):
            convs = {}
            for key, (s, _, d) in self.edge_types:
                src, dst = (in_channels[s], in_channels[d]) if i == 0 else (hidden, hidden)
                width = src if src == dst else (src, dst)
                if i < self.hidden_layers:
                    convs[key] = GATConv(width, hidden // heads, heads=heads, add_self_loops=False)
                else:
                    convs[key] = GATConv(width, out, heads=out_heads, concat=False, add_self_loops=False)
            self.convs.append(torch.nn.ModuleDict(convs))
        make = {"batch_norm": lambda: BatchNorm(hidden), "layer_norm": lambda: LayerNorm(hidden, mode="node")}
        self.norms = None
        if norm:
            self.norms = torch.nn.ModuleList(torch.nn.ModuleDict({t: make[norm]() for t in node_types})
                                             for _ in range(self.hidden_layers))
        self.jk = jk
        if jk:
            width = layers * hidden if jk == "cat" else hidden
            self.lin = torch.nn.ModuleDict({t: Linear(width, out) for t in node_types})

    def forward(self, x, edge_index):
        xs = []
        for i, convs in enumerate(self.convs):
            out = {}
            for key, (s, r, d) in self.edge_types:
                if (s, r, d) not in edge_index or s not in x or d not in x:
                    continue
                y = convs[key](x[s] if s == d else (x[s], x[d]), edge_index[(s, r, d)])
                out[d] = out[d] + y if d in out else y
            x = out
            if i < self.hidden_layers:
                if self.norms is not None:
                    x = {t: self.norms[i][t](v) for t, v in x.items()}
                x = {t: v.relu() for t, v in x.items()}
            xs.append(x)
        if not self.jk:
            return x
        if self.jk == "cat":
            x = {t: torch.cat([h[t] for h in xs], dim=-1) for t in x}
        elif self.jk == "max":
            x = {t: torch.stack([h[t] for h in xs], dim=-1).max(dim=-1)[0] for t in x}
        return {t: self.lin[t](v) for t, v in x.items()}


def typed(args, meta):
    """The round trip of a typed model (rsage, rgcn, rgat): JSON of the
    target's valid and test accuracies under full-graph inference."""
    import pyg_hetero  # beside this file: the typed dataset reader and the wrapper it trains

    data, target, classes = pyg_hetero.load(args.data)
    node_types = json.loads(meta["node_types"])
    edge_types = [tuple(et) for et in json.loads(meta["edge_types"])]
    in_channels = json.loads(meta["in_channels"])
    embeds = {t: tuple(shape) for t, shape in json.loads(meta.get("embed", "{}")).items()}
    layers, hidden, out = int(meta["num_layers"]), int(meta["hidden_channels"]), int(meta["out_channels"])
    problems = []
    if set(node_types) != set(data.node_types):
        problems.append(f"types {node_types}, the dataset's {data.node_types}")
    if set(edge_types) != set(data.edge_types):
        problems.append(f"relations {edge_types}, the dataset's {data.edge_types}")
    if meta.get("target", target) != target or out != classes:
        problems.append(f"target {meta.get('target')} of {out} classes, the dataset's {target} of {classes}")
    for t in node_types:
        if t not in data.node_types:
            continue
        if "x" in data[t]:
            width, what = data[t].x.size(1), "features"
        elif t in embeds:
            width, what = embeds[t][1], "embedding"
            if embeds[t][0] != data[t].num_nodes:
                problems.append(f"{t}: embedding of {embeds[t][0]} rows, {data[t].num_nodes} vertices")
        else:
            problems.append(f"{t}: no features and no embedding")
            continue
        if in_channels.get(t) != width:
            problems.append(f"{t}: in_channels {in_channels.get(t)}, its {what} {width} wide")
    if problems:
        sys.exit(f"{args.weights} does not fit {args.data}: " + "; ".join(problems))

    metadata = (node_types, edge_types)
    norm, norm_kwargs = meta.get("norm"), json.loads(meta.get("norm_kwargs", "null"))
    jk = meta.get("jk")
    if meta["model"] == "rsage":
        gnn = pyg_hetero.rsage(metadata, hidden, layers, out, dropout=0.0, norm=norm, norm_kwargs=norm_kwargs, jk=jk)
    elif meta["model"] == "rgat":
        gnn = RGAT(node_types, edge_types, in_channels, hidden, out, layers, int(meta["heads"]), int(meta["out_heads"]),
                   norm, jk)
    else:
        gnn = to_hetero(RGCN(hidden, out, layers, norm, jk), metadata, aggr="sum")
    model = pyg_hetero.Model(embeds, gnn).to(args.device).eval()
    for t in node_types:  # the whole graph is the batch: every vertex, in order
        data[t].n_id = torch.arange(data[t].num_nodes)
    data = data.to(args.device)
    with torch.no_grad():
        model(data)  # sets the lazy input widths from the data
        model.load_state_dict(load_file(args.weights, device=args.device), strict=True)
        pred = model(data)[target].argmax(dim=1)
    y = data[target].y
    acc = {s: (pred[data[target][f"{s}_idx"]] == y[data[target][f"{s}_idx"]]).float().mean().item()
           for s in ("valid", "test")}
    print(json.dumps({"model": meta["model"], "pyg_model": meta.get("pyg_model", ""), "target": target,
                      "valid_acc": acc["valid"], "test_acc": acc["test"],
                      "valid_vertices": int(data[target].valid_idx.numel()),
                      "test_vertices": int(data[target].test_idx.numel())}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("weights")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = p.parse_args()
    with safe_open(args.weights, framework="pt") as f:
        meta = f.metadata()
    if meta.get("model") in ("rsage", "rgcn", "rgat"):
        return typed(args, meta)
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
