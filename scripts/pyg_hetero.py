"""PyTorch Geometric's heterogeneous GNNs on a typed fanout dataset:
to_hetero(GraphSAGE), or MLPerf Training's reference RGAT.

The yardstick for fanout's typed training (issue 40): the dataset directory
fanout writes (gen mag-sim, gen igbh-sim, import edges with types, import
ogb of ogbn-mag's layout), read with numpy alone, becomes a
torch_geometric.data.HeteroData; types without features get a
torch.nn.Embedding of --embed columns. Models (--model):
- rsage: GraphSAGE (mean aggregation in each relation, --layers layers of
  --hidden, dropout), made heterogeneous by to_hetero (a sum over the
  relations into a type).
- rgat: the RGAT of MLPerf Training's GNN benchmark (its rgnn.py): per
  layer a GATConv of --heads heads per relation, summed over the
  relations into a type, LeakyReLU and dropout between layers, a linear
  head; as its dataset does, every relation within one type (cites) gets
  a self loop per vertex (--no-self-loops leaves them out).
Either learns the target type's labels on mini-batches with --fanouts
neighbours per hop and relation.

Samplers (--sampler; the one that ran is in the first and last lines):
- torch: everything on the GPU (each relation's CSR, the features, labels
  and embeddings); per step the seeds' neighbourhood is sampled with torch
  ops on the device, hop by hop and relation by relation, without
  replacement, its vertices made unique per type with torch.unique and
  relabelled (the seeds first), and the batch is a HeteroData as
  NeighborLoader gives it (pyg_sampler.py beside this file).
- cugraph: cuGraph-PyG's NeighborLoader, which samples on the GPU.
- pyg: PyG's NeighborLoader (pyg-lib's or torch-sparse's sampling ops on
  the CPU, the features on the GPU, as PyG's ogbn-mag example keeps them).
- auto: cugraph where cuGraph-PyG is installed and works on a CUDA device,
  else torch there; pyg without a GPU.
One JSON line per epoch (its time, loss and accuracies; the time between
two torch.cuda.synchronize calls around the training pass; with --steps N
the time of its first N steps, scaled to the epoch's and marked
"extrapolated"), then a summary line.

    python3 scripts/pyg_hetero.py DATASET_DIR [--model rsage|rgat] [--epochs 10]
        [--steps N] [--fanouts 15,10,5] [--batch 1024] [--hidden 256] [--heads 4]
        [--embed 128] [--dropout 0.5] [--lr 0.003] [--workers 4]
        [--sampler auto|torch|pyg|cugraph] [--no-self-loops] [--seed 1]
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import HeteroData
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GATConv, GraphSAGE, HeteroConv, to_hetero
from torch_geometric.utils import add_self_loops

from pyg_sampler import TorchLoader, TorchSampler


def scalar(text):
    """A manifest scalar: an int where it is one, else the text unquoted."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        return text


def read_manifest(path):
    """The subset of YAML fanout writes in a typed manifest: top-level
    scalars, and the lists types and relations of flat mappings."""
    top, current, item = {}, None, None
    with open(path) as f:
        for raw in f:
            line = raw.rstrip()
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            indent = len(line) - len(line.lstrip())
            body = line.strip()
            if indent == 0:
                key, _, value = body.partition(":")
                value = value.strip()
                current = None
                if value == "":
                    current = top.setdefault(key, [])
                else:
                    top[key] = scalar(value)
                continue
            if current is None:
                raise ValueError(f"{path}: unexpected line {raw!r}")
            if body.startswith("- "):
                item = {}
                current.append(item)
                body = body[2:]
            key, _, value = body.partition(":")
            item[key.strip()] = scalar(value)
    if top.get("format_version") != 2:
        sys.exit(f"{path}: format_version {top.get('format_version')}: not a typed fanout dataset")
    return top


def load_features(path, bf16):
    """A type's feature table as float32 (bfloat16 bit patterns widened)."""
    a = np.load(path, mmap_mode="r")
    if bf16:
        bits = torch.from_numpy(np.ascontiguousarray(a).view(np.int16))
        return bits.view(torch.bfloat16).float()
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


def load(root):
    """The typed dataset at root as HeteroData, with its target's name and
    classes; featureless types carry num_nodes only."""
    m = read_manifest(os.path.join(root, "manifest.yaml"))
    bf16 = m.get("feature_dtype") == "bfloat16"
    data = HeteroData()
    for t in m["types"]:
        data[t["name"]].num_nodes = t["count"]
        if t.get("feat_dim", 0) > 0:
            data[t["name"]].x = load_features(os.path.join(root, "types", t["name"], "feat.npy"), bf16)
    for r in m["relations"]:
        sub = os.path.join(root, "relations", f"{r['src']}.{r['name']}.{r['dst']}")
        indptr = np.load(os.path.join(sub, "indptr.npy"))
        indices = np.load(os.path.join(sub, "indices.npy"))
        # Rows are the destinations, each listing its sources: messages
        # flow from edge_index[0] (source) to edge_index[1] (destination).
        dst = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
        data[r["src"], r["name"], r["dst"]].edge_index = torch.from_numpy(np.stack([indices.astype(np.int64), dst]))
    target = m["target"]
    data[target].y = torch.from_numpy(np.load(os.path.join(root, "label.npy")).astype(np.int64))
    for split in ("train", "valid", "test"):
        ids = np.load(os.path.join(root, f"{split}_idx.npy")).astype(np.int64)
        data[target][f"{split}_idx"] = torch.from_numpy(ids)
    return data, target, int(m["num_classes"])


def rsage(metadata, hidden, layers, classes, dropout, norm=None, norm_kwargs=None, jk=None):
    """to_hetero(GraphSAGE): in each layer, per relation a SAGEConv (the mean
    of the sources through lin_l with its bias, the destination's own row
    through lin_r), summed over the relations into a type; ReLU and dropout
    between layers (after norm, BasicGNN's normalisation, where given;
    with jk, BasicGNN's jumping knowledge and its lin head).
    Input widths are lazy (-1): set by the first forward pass, or by
    loading a state dict."""
    sage = GraphSAGE((-1, -1), hidden, num_layers=layers, out_channels=classes, dropout=dropout, aggr="mean",
                     norm=norm, norm_kwargs=norm_kwargs, jk=jk)
    return to_hetero(sage, metadata, aggr="sum")


class RGAT(torch.nn.Module):
    """MLPerf Training's reference RGAT (rgnn.py, model "rgat"): layers
    HeteroConvs, each a GATConv per relation (hidden/heads channels in each
    of heads heads, concatenated; no self loops of its own) summed into the
    destination's type; LeakyReLU and dropout between layers; a linear head
    from the target's last hidden rows to the classes. A layer's input
    width is in_dim where every type has it (IGB-H's 1024: one linear map
    for a relation's sources and destinations, as the reference has it),
    else lazy and separate for the two ends. forward returns {target:
    logits}, as to_hetero's models return every type's."""

    def __init__(self, edge_types, target, in_dim, hidden, classes, layers, heads, dropout):
        super().__init__()
        self.target, self.dropout = target, dropout
        self.convs = torch.nn.ModuleList()
        for i in range(layers):
            d = in_dim if i == 0 else hidden
            self.convs.append(HeteroConv({et: GATConv(d if d > 0 else (-1, -1), hidden // heads, heads=heads,
                                                      add_self_loops=False) for et in edge_types}, aggr="sum"))
        self.lin = torch.nn.Linear(hidden, classes)

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            # A type that received nothing in the layer below has no rows now.
            x = conv(x, {et: e for et, e in edge_index.items() if et[0] in x and et[2] in x})
            if i < len(self.convs) - 1:
                x = {t: F.dropout(F.leaky_relu(h), self.dropout, self.training) for t, h in x.items()}
        return {self.target: self.lin(x[self.target])}


def within_type_self_loops(data):
    """Adds a self loop per vertex to each relation within one type (cites),
    as MLPerf's reference dataset does (fanout's datasets have none)."""
    for et in data.edge_types:
        if et[0] == et[2]:
            data[et].edge_index = add_self_loops(data[et].edge_index, num_nodes=data[et[0]].num_nodes)[0]


class Model(torch.nn.Module):
    """A learned input table per featureless type (embeds: type -> (rows,
    width)), then gnn over the types' inputs (a to_hetero module, or
    RGAT), which returns rows per type, the target's among them. A batch
    is a HeteroData whose featureless types carry n_id, their rows'
    global ids (NeighborLoader's batches, TorchSampler's, or the whole
    graph with n_id = arange)."""

    def __init__(self, embeds, gnn):
        super().__init__()
        self.embed = torch.nn.ModuleDict({t: torch.nn.Embedding(rows, dim) for t, (rows, dim) in embeds.items()})
        self.gnn = gnn

    def forward(self, batch):
        x = {t: batch[t].x for t in batch.node_types if "x" in batch[t]}
        for t, emb in self.embed.items():
            x[t] = emb(batch[t].n_id.to(emb.weight.device))
        return self.gnn(x, batch.edge_index_dict)


def torch_loaders(data, target, args, device):
    """TorchSampler's loader for each split: graph, features and labels on
    the device."""
    sampler = TorchSampler(data, target, args.fanouts, device)
    return {s: TorchLoader(sampler, data[target][f"{s}_idx"], args.batch, shuffle=s == "train")
            for s in ("train", "valid", "test")}


def pyg_loaders(data, target, args, device):
    """PyG's NeighborLoader for each split: sampling with pyg-lib's (or
    torch-sparse's) ops on the CPU, features and labels on the device."""
    data = data.to(device, "x", "y")
    common = dict(num_neighbors=args.fanouts, batch_size=args.batch, num_workers=args.workers,
                  persistent_workers=args.workers > 0)
    return {s: NeighborLoader(data, input_nodes=(target, data[target][f"{s}_idx"]), shuffle=s == "train", **common)
            for s in ("train", "valid", "test")}


def cugraph_loaders(data, target, args, device):
    """cuGraph-PyG's NeighborLoader, which samples on the GPU: the graph in
    its GraphStore (a process group of one), the features from the
    HeteroData on the device."""
    import torch.distributed as dist
    from cugraph_pyg.data import GraphStore
    from cugraph_pyg.loader import NeighborLoader as GPUNeighborLoader

    for k, v in (("MASTER_ADDR", "localhost"), ("MASTER_PORT", "29505"), ("RANK", "0"), ("LOCAL_RANK", "0"),
                 ("WORLD_SIZE", "1"), ("LOCAL_WORLD_SIZE", "1")):
        os.environ.setdefault(k, v)
    if not dist.is_initialized():
        dist.init_process_group("nccl")
    graph = GraphStore()
    for et in data.edge_types:
        size = (data[et[0]].num_nodes, data[et[2]].num_nodes)
        graph[et, "coo", False, size] = data[et].edge_index.to(device)
    data = data.to(device, "x", "y")
    return {s: GPUNeighborLoader((data, graph), num_neighbors=args.fanouts, batch_size=args.batch,
                                 input_nodes=(target, data[target][f"{s}_idx"].to(device)), shuffle=s == "train")
            for s in ("train", "valid", "test")}


def loaders(data, target, args, device):
    """The loaders of --sampler, and a line saying which sample where."""
    cuda = device.type == "cuda"
    if args.sampler == "cugraph" and not cuda:
        sys.exit("--sampler cugraph: no CUDA device")
    if args.sampler in ("auto", "cugraph") and cuda:
        try:
            import cugraph_pyg  # noqa: F401
            return cugraph_loaders(data, target, args, device), "cugraph-pyg (GPU)"
        except Exception as e:  # not installed, or this version's API differs
            if args.sampler == "cugraph":
                raise
            note = f"cugraph-pyg: {type(e).__name__}: {str(e)[:200]}"
            print(json.dumps({"note": note + "; sampling with torch ops on the GPU"}), flush=True)
    if args.sampler == "torch" or (args.sampler == "auto" and cuda):
        return torch_loaders(data, target, args, device), f"torch ops ({'GPU' if cuda else 'CPU'})"
    import torch_geometric.typing as tgt
    ops = "pyg-lib" if tgt.WITH_PYG_LIB else "torch-sparse" if tgt.WITH_TORCH_SPARSE else "none"
    return pyg_loaders(data, target, args, device), f"NeighborLoader ({ops}, CPU)"


def run_epoch(model, loader, target, device, opt=None, steps=0):
    """One pass: (mean loss, accuracy, batches) over the loader's seeds, or
    its first steps batches where steps > 0; trains where an optimiser is
    given."""
    model.train(opt is not None)
    loss_sum = correct = seen = done = 0
    with torch.set_grad_enabled(opt is not None):
        for batch in loader:
            if 0 < steps <= done:
                break
            done += 1
            batch = batch.to(device, "edge_index")
            n = batch[target].batch_size
            out = model(batch)[target][:n]
            y = batch[target].y[:n].to(device)
            loss = F.cross_entropy(out, y)
            if opt is not None:
                opt.zero_grad()
                loss.backward()
                opt.step()
            loss_sum += float(loss) * n
            correct += int((out.argmax(-1) == y).sum())
            seen += n
    return loss_sum / max(seen, 1), correct / max(seen, 1), done


def parse_args():
    """The command line, checked."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data")
    p.add_argument("--model", choices=("rsage", "rgat"), default="rsage")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--steps", type=int, default=0,
                   help="train the first N steps of each epoch and scale their time to the epoch's (0: every step)")
    p.add_argument("--fanouts", default="15,10,5", help="neighbours per hop and relation, from the seeds")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--heads", type=int, default=4, help="rgat's attention heads (--hidden is heads x width per head)")
    p.add_argument("--embed", type=int, default=128, help="embedding width of the types without features")
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--workers", type=int, default=4, help="NeighborLoader's worker processes")
    p.add_argument("--sampler", choices=("auto", "torch", "pyg", "cugraph"), default="auto",
                   help="torch: torch ops on the device; pyg: NeighborLoader on the CPU; cugraph: cuGraph-PyG; "
                        "auto: cugraph where it works on a GPU, else torch there, pyg without one")
    p.add_argument("--no-self-loops", action="store_true",
                   help="rgat: leave the relations within one type without the self loops the reference adds")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    args.fanouts = [int(f) for f in args.fanouts.split(",")]
    if args.epochs < 1 or args.steps < 0 or not args.fanouts or min(args.fanouts) < 1:
        p.error("--epochs and every fanout must be at least 1, --steps at least 0")
    if args.model == "rgat" and (args.heads < 1 or args.hidden % args.heads != 0):
        p.error(f"--hidden {args.hidden} must be a multiple of --heads {args.heads}")
    return args


def build_model(args, data, target, classes, device):
    """The --model on the device: embeddings for the featureless types, then
    rsage's to_hetero(GraphSAGE) or RGAT."""
    embeds = {t: (data[t].num_nodes, args.embed) for t in data.node_types if "x" not in data[t]}
    layers = len(args.fanouts)
    if args.model == "rsage":
        return Model(embeds, rsage(data.metadata(), args.hidden, layers, classes, args.dropout)).to(device)
    widths = {data[t].x.shape[1] if "x" in data[t] else args.embed for t in data.node_types}
    in_dim = widths.pop() if len(widths) == 1 else -1
    gnn = RGAT(data.edge_types, target, in_dim, args.hidden, classes, layers, args.heads, args.dropout)
    return Model(embeds, gnn).to(device)


def synchronized(device):
    """time.perf_counter after the device's queued work has finished."""
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    t0 = time.perf_counter()
    data, target, classes = load(args.data)
    if args.model == "rgat" and not args.no_self_loops:
        within_type_self_loops(data)
    load_s = time.perf_counter() - t0
    loader, sampler = loaders(data, target, args, device)
    model = build_model(args, data, target, classes, device)
    with torch.no_grad():  # the lazy (-1) widths, from one batch
        model(next(iter(loader["train"])).to(device, "edge_index"))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    print(json.dumps({"dataset": args.data, "model": args.model, "target": target, "classes": classes,
                      "types": data.node_types, "relations": [list(et) for et in data.edge_types],
                      "parameters": sum(q.numel() for q in model.parameters()), "sampler": sampler,
                      "device": str(device), "load_s": round(load_s, 2), "torch": torch.__version__,
                      "pyg": __import__("torch_geometric").__version__}), flush=True)

    best = {"valid_acc": -1.0}
    times = []
    for epoch in range(1, args.epochs + 1):
        t = synchronized(device)
        loss, train_acc, steps = run_epoch(model, loader["train"], target, device, opt, args.steps)
        epoch_s = synchronized(device) - t
        line = {"epoch": epoch}
        if args.steps and steps == args.steps and steps < len(loader["train"]):
            epoch_s *= len(loader["train"]) / steps
            line.update(steps=steps, extrapolated=True)
        times.append(epoch_s)
        # With --steps the splits are judged on as many batches each (a timing run).
        _, valid_acc, _ = run_epoch(model, loader["valid"], target, device, steps=args.steps)
        _, test_acc, _ = run_epoch(model, loader["test"], target, device, steps=args.steps)
        line.update(epoch_s=round(epoch_s, 3), loss=round(loss, 4), train_acc=round(train_acc, 4),
                    valid_acc=round(valid_acc, 4), test_acc=round(test_acc, 4))
        print(json.dumps(line), flush=True)
        if valid_acc > best["valid_acc"]:
            best = line
    steady = times[1:] or times
    print(json.dumps({"summary": True, "model": args.model, "best_epoch": best["epoch"],
                      "best_valid_acc": best["valid_acc"], "test_acc_at_best": best["test_acc"],
                      "mean_epoch_s": round(sum(steady) / len(steady), 3), "epochs": args.epochs,
                      "steps": args.steps or None, "sampler": sampler}), flush=True)


if __name__ == "__main__":
    main()
