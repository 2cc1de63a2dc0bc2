"""PyTorch Geometric's link-prediction training step on a fanout link
dataset, everything on the GPU: the yardstick of fanout's link step.

The dataset is the directory `fanout gen PRESET --link-split ...` writes,
read with numpy alone (indptr.npy, indices.npy, feat.npy, link_train.npy).
A step, as fanout's `--task link` step with the dot decoder: --batch
positive training edges (u, v) in the order of a shuffled epoch, and
--negatives negatives (u, w) each, w uniform over the vertices; the ends
made unique (torch.unique); their neighbourhoods sampled hop by hop with
--fanouts, without replacement, with torch ops on the device
(pyg_sampler.sample_neighbours and relabel); PyG's GraphSAGE or GCN
(--model, --layers, --hidden, the output --hidden wide) over the sampled
subgraph; each pair scored by the dot product of its ends' embeddings;
binary cross-entropy over all pairs; Adam. The batch's own edges stay in
its neighbourhoods (LinkNeighborLoader's default), which spares this
pipeline the work fanout's exclusion does.

Times --steps steps after --warmup between torch.cuda.synchronize calls and
prints one JSON line: {"step_ms": ..., ...}.

    python3 scripts/pyg_link.py DATASET_DIR [--steps 100] [--warmup 10]
        [--batch 1024] [--negatives 1] [--fanouts 15,10,5] [--layers 3]
        [--hidden 256] [--model sage|gcn] [--dropout 0.5] [--lr 0.003]
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import GCN, GraphSAGE

from pyg_sampler import relabel, sample_neighbours


def manifest(path):
    """The manifest's top-level scalars (key: value lines)."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith((" ", "#", "-")) or ":" not in line:
                continue
            key, _, value = line.partition(":")
            out[key.strip()] = value.strip().strip("'\"")
    return out


def load(root, device):
    """The graph (CSR, int64), the features (float32) and the training
    edges ([m, 2] int64), on device."""
    m = manifest(os.path.join(root, "manifest.yaml"))
    arr = lambda name: np.load(os.path.join(root, name), mmap_mode="r")
    indptr = torch.from_numpy(np.asarray(arr("indptr.npy"), dtype=np.int64)).to(device)
    indices = torch.from_numpy(np.asarray(arr("indices.npy"), dtype=np.int64)).to(device)
    feat = np.ascontiguousarray(arr("feat.npy"))
    if m.get("feature_dtype") == "bfloat16":
        x = torch.from_numpy(feat.view(np.int16)).view(torch.bfloat16).float()
    else:
        x = torch.from_numpy(feat.astype(np.float32, copy=False))
    train = torch.from_numpy(np.asarray(arr("link_train.npy"), dtype=np.int64)).to(device)
    return indptr, indices, x.to(device), train.view(-1, 2)


def sample(indptr, indices, seeds, fanouts):
    """The seeds' sampled neighbourhood: every vertex (the seeds first) and
    the edges of every hop in local ids (source, destination)."""
    n_id, first, frontier, edges = seeds, 0, seeds, []
    for k in fanouts:
        row, src = sample_neighbours(indptr, indices, frontier, k)
        old = n_id.numel()
        n_id, local, new = relabel(n_id, src)
        edges.append(torch.stack([local, first + row]))
        first, frontier = old, new
    return n_id, torch.cat(edges, 1)


def step(model, opt, indptr, indices, x, u, v, w, fanouts, k):
    """One training step on positives (u, v) and negatives (u repeated k
    times, w); returns the loss (a device tensor)."""
    ends, inv = torch.unique(torch.cat([u, v, w]), return_inverse=True)
    n_id, edge_index = sample(indptr, indices, ends, fanouts)
    h = model(x[n_id], edge_index)[: ends.numel()]
    b = u.numel()
    hu, hv, hw = h[inv[:b]], h[inv[b : 2 * b]], h[inv[2 * b :]]
    pos = (hu * hv).sum(-1)
    neg = (hu.repeat_interleave(k, 0) * hw).sum(-1)
    scores = torch.cat([pos, neg])
    labels = torch.cat([torch.ones_like(pos), torch.zeros_like(neg)])
    loss = F.binary_cross_entropy_with_logits(scores, labels)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def synchronized():
    torch.cuda.synchronize()
    return time.perf_counter()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--negatives", type=int, default=1)
    p.add_argument("--fanouts", default="15,10,5")
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--model", choices=("sage", "gcn"), default="sage")
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("pyg_link.py times the GPU pipeline: no CUDA device")
    torch.manual_seed(a.seed)
    device = torch.device("cuda")
    fanouts = [int(f) for f in a.fanouts.split(",")]
    indptr, indices, x, train = load(a.data, device)
    net = GraphSAGE if a.model == "sage" else GCN
    model = net(x.size(1), a.hidden, a.layers, out_channels=a.hidden, dropout=a.dropout).to(device)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    order = torch.randperm(train.size(0), device=device)
    n, b, k = indptr.numel() - 1, a.batch, a.negatives
    t0 = 0.0
    for s in range(a.warmup + a.steps):
        if s == a.warmup:
            t0 = synchronized()
        ids = order[(s * b) % (order.numel() - b) :][:b]
        u, v = train[ids, 0], train[ids, 1]
        w = torch.randint(0, n, (b * k,), device=device)
        loss = step(model, opt, indptr, indices, x, u, v, w, fanouts, k)
    ms = (synchronized() - t0) * 1e3 / a.steps
    print(json.dumps({"pipeline": "pyg-link-torch-sampler", "model": a.model, "batch": b, "negatives": k,
                      "fanouts": fanouts, "steps": a.steps, "step_ms": round(ms, 4), "loss": float(loss)}))


if __name__ == "__main__":
    main()
