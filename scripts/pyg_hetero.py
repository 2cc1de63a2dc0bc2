"""PyTorch Geometric's to_hetero(GraphSAGE) on a typed fanout dataset.

The yardstick for fanout's typed training (issue 40): the dataset directory
fanout writes (gen mag-sim, import edges with types, import ogb of
ogbn-mag's layout), read with numpy alone, becomes a
torch_geometric.data.HeteroData; types without features get a
torch.nn.Embedding of --embed columns; GraphSAGE (mean aggregation in each
relation, --layers layers of --hidden, dropout), made heterogeneous by
to_hetero (a sum over the relations into a type), learns the target type's
labels on mini-batches of NeighborLoader with --fanouts neighbours per hop
and relation. Sampling runs on the GPU where cuGraph-PyG is installed and
works, otherwise in PyG's NeighborLoader (pyg-lib's or torch-sparse's
sampling ops on the CPU, the features on the GPU, as PyG's ogbn-mag example
keeps them). One JSON line per epoch (its time, loss and accuracies), then
a summary line.

    python3 scripts/pyg_hetero.py DATASET_DIR [--epochs 10] [--fanouts 15,10,5]
        [--batch 1024] [--hidden 256] [--embed 128] [--dropout 0.5]
        [--lr 0.003] [--workers 4] [--sampler auto|pyg|cugraph] [--seed 1]
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
from torch_geometric.nn import GraphSAGE, to_hetero


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


class Model(torch.nn.Module):
    """Embeddings for the featureless types, then to_hetero(GraphSAGE)."""

    def __init__(self, data, classes, args):
        super().__init__()
        self.embed = torch.nn.ModuleDict({
            t: torch.nn.Embedding(data[t].num_nodes, args.embed)
            for t in data.node_types if "x" not in data[t]})
        sage = GraphSAGE((-1, -1), args.hidden, num_layers=len(args.fanouts), out_channels=classes,
                         dropout=args.dropout, aggr="mean")
        self.gnn = to_hetero(sage, data.metadata(), aggr="sum")

    def forward(self, batch):
        x = {t: batch[t].x for t in batch.node_types if "x" in batch[t]}
        for t, emb in self.embed.items():
            x[t] = emb(batch[t].n_id.to(emb.weight.device))
        return self.gnn(x, batch.edge_index_dict)


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
    if args.sampler in ("auto", "cugraph") and device.type == "cuda":
        try:
            import cugraph_pyg  # noqa: F401
            return cugraph_loaders(data, target, args, device), "cugraph-pyg (GPU)"
        except Exception as e:  # not installed, or this version's API differs
            if args.sampler == "cugraph":
                raise
            note = f"cugraph-pyg: {type(e).__name__}: {str(e)[:200]}"
            print(json.dumps({"note": note + "; sampling with PyG's NeighborLoader"}), flush=True)
    import torch_geometric.typing as tgt
    ops = "pyg-lib" if tgt.WITH_PYG_LIB else "torch-sparse" if tgt.WITH_TORCH_SPARSE else "none"
    return pyg_loaders(data, target, args, device), f"NeighborLoader ({ops}, CPU)"


def run_epoch(model, loader, target, device, opt=None):
    """One pass: (mean loss, accuracy) over the loader's seeds; trains
    where an optimiser is given."""
    model.train(opt is not None)
    loss_sum = correct = seen = 0
    with torch.set_grad_enabled(opt is not None):
        for batch in loader:
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
    return loss_sum / max(seen, 1), correct / max(seen, 1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--fanouts", default="15,10,5", help="neighbours per hop and relation, from the seeds")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--embed", type=int, default=128, help="embedding width of the types without features")
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--workers", type=int, default=4, help="NeighborLoader's worker processes")
    p.add_argument("--sampler", choices=("auto", "pyg", "cugraph"), default="auto")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    args.fanouts = [int(f) for f in args.fanouts.split(",")]
    if args.epochs < 1 or not args.fanouts or min(args.fanouts) < 1:
        p.error("--epochs and every fanout must be at least 1")
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    t0 = time.perf_counter()
    data, target, classes = load(args.data)
    load_s = time.perf_counter() - t0
    loader, sampler = loaders(data, target, args, device)
    model = Model(data, classes, args).to(device)
    with torch.no_grad():  # the lazy (-1) widths, from one batch
        model(next(iter(loader["train"])).to(device, "edge_index"))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    print(json.dumps({"dataset": args.data, "target": target, "classes": classes, "types": data.node_types,
                      "relations": [list(et) for et in data.edge_types], "sampler": sampler, "device": str(device),
                      "load_s": round(load_s, 2), "torch": torch.__version__,
                      "pyg": __import__("torch_geometric").__version__}), flush=True)

    best = {"valid_acc": -1.0}
    times = []
    for epoch in range(1, args.epochs + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        loss, train_acc = run_epoch(model, loader["train"], target, device, opt)
        if device.type == "cuda":
            torch.cuda.synchronize()
        epoch_s = time.perf_counter() - t
        times.append(epoch_s)
        _, valid_acc = run_epoch(model, loader["valid"], target, device)
        _, test_acc = run_epoch(model, loader["test"], target, device)
        line = {"epoch": epoch, "epoch_s": round(epoch_s, 3), "loss": round(loss, 4), "train_acc": round(train_acc, 4),
                "valid_acc": round(valid_acc, 4), "test_acc": round(test_acc, 4)}
        print(json.dumps(line), flush=True)
        if valid_acc > best["valid_acc"]:
            best = line
    steady = times[1:] or times
    print(json.dumps({"summary": True, "best_epoch": best["epoch"], "best_valid_acc": best["valid_acc"],
                      "test_acc_at_best": best["test_acc"], "mean_epoch_s": round(sum(steady) / len(steady), 3),
                      "epochs": args.epochs, "sampler": sampler}), flush=True)


if __name__ == "__main__":
    main()
