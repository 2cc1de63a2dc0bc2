"""PyTorch Geometric's to_hetero(GraphSAGE) on a typed fanout dataset.

The yardstick for fanout's typed training (issue 40): the dataset directory
fanout writes (gen mag-sim, import edges with types, import ogb of
ogbn-mag's layout), read with numpy alone, becomes a
torch_geometric.data.HeteroData; types without features get a
torch.nn.Embedding of --embed columns; GraphSAGE (mean aggregation in each
relation, --layers layers of --hidden, dropout), made heterogeneous by
to_hetero (a sum over the relations into a type), learns the target type's
labels on mini-batches with --fanouts neighbours per hop and relation.

Samplers (--sampler; the one that ran is in the first and last lines):
- torch: everything on the GPU (each relation's CSR, the features, labels
  and embeddings); per step the seeds' neighbourhood is sampled with torch
  ops on the device, hop by hop and relation by relation, without
  replacement, its vertices made unique per type with torch.unique and
  relabelled (the seeds first), and the batch is a HeteroData as
  NeighborLoader gives it (TorchSampler below).
- cugraph: cuGraph-PyG's NeighborLoader, which samples on the GPU.
- pyg: PyG's NeighborLoader (pyg-lib's or torch-sparse's sampling ops on
  the CPU, the features on the GPU, as PyG's ogbn-mag example keeps them).
- auto: cugraph where cuGraph-PyG is installed and works on a CUDA device,
  else torch there; pyg without a GPU.
One JSON line per epoch (its time, loss and accuracies; the time between
two torch.cuda.synchronize calls around the training pass), then a summary
line.

    python3 scripts/pyg_hetero.py DATASET_DIR [--epochs 10] [--fanouts 15,10,5]
        [--batch 1024] [--hidden 256] [--embed 128] [--dropout 0.5]
        [--lr 0.003] [--workers 4] [--sampler auto|torch|pyg|cugraph] [--seed 1]
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


class Model(torch.nn.Module):
    """A learned input table per featureless type (embeds: type -> (rows,
    width)), then gnn, a to_hetero module over the types' inputs. A batch
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


def ragged_arange(counts):
    """Rows of counts[i] items each, laid end to end: every item's row and
    its offset within the row ([sum(counts)] int64 each)."""
    total = int(counts.sum())
    rows = torch.arange(counts.numel(), device=counts.device)
    row = torch.repeat_interleave(rows, counts, output_size=total)
    first = torch.cumsum(counts, 0) - counts
    return row, torch.arange(total, device=counts.device) - first[row]


def smallest_keys(deg, k, width):
    """k distinct offsets in [0, deg[i]) for each row, uniformly ([m, k];
    every deg[i] in (k, width]): the k smallest of deg[i] random keys, in
    a [m, width] block where the positions past a row's end never win."""
    keys = torch.rand(deg.numel(), width, device=deg.device)
    keys[torch.arange(width, device=deg.device) >= deg[:, None]] = 2.0
    return keys.topk(k, dim=1, largest=False).indices


def first_distinct(deg, k, draws):
    """k distinct offsets in [0, deg[i]) for rows i, uniformly: the first k
    distinct values, in draw order, of `draws` draws with replacement (each
    new value is uniform among those not drawn yet, so the first k are a
    uniform subset, whether the row reaches k or not). Returns ok [m],
    false for rows whose draws held fewer than k distinct values, and the
    offsets of the other rows ([ok.sum(), k])."""
    u = torch.rand(deg.numel(), draws, device=deg.device, dtype=torch.float64)
    d = torch.minimum((u * deg[:, None]).long(), deg[:, None] - 1)
    s, order = torch.sort(d, dim=1, stable=True)  # equal values keep draw order
    first = torch.ones_like(s, dtype=torch.bool)
    first[:, 1:] = s[:, 1:] != s[:, :-1]
    new = torch.zeros_like(first).scatter_(1, order, first)  # back in draw order
    take = new & (torch.cumsum(new, 1) <= k)
    ok = take.sum(1) == k
    return ok, d[ok][take[ok]].view(-1, k)  # a mask keeps row-major order: draw order


def sample_offsets(deg, k, width, draws):
    """k distinct offsets per row (every deg[i] > k), uniformly ([m, k]):
    rows of at most width by smallest_keys, longer rows by
    first_distinct, drawing again for the rows it left short."""
    off = torch.empty(deg.numel(), k, dtype=torch.long, device=deg.device)
    short = deg <= width
    off[short] = smallest_keys(deg[short], k, width)
    todo = torch.nonzero(~short).flatten()
    while todo.numel() > 0:
        ok, got = first_distinct(deg[todo], k, draws)
        off[todo[ok]] = got
        todo = todo[~ok]
    return off


def sample_neighbours(indptr, indices, rows, k):
    """Up to k neighbours of each of rows (a CSR's row ids) without
    replacement, each subset uniform: all of a row's neighbours where it
    has at most k. Returns each sampled edge's position in rows and its
    column (indices' value), [E'] int64 each, rows in no particular order.
    Work is O(k) per row: rows of up to 4k neighbours draw a key per
    neighbour, longer ones 2k draws (hubs are never read whole)."""
    start = indptr[rows]
    deg = indptr[rows + 1] - start
    pos = torch.arange(rows.numel(), device=rows.device)
    few = deg <= k
    row, off = ragged_arange(deg[few])
    out_row, out_edge = [pos[few][row]], [start[few][row] + off]
    many = ~few
    if bool(many.any()):
        off = sample_offsets(deg[many], k, width=4 * k, draws=2 * k)
        out_row.append(pos[many].repeat_interleave(k))
        out_edge.append((start[many][:, None] + off).flatten())
    edge = torch.cat(out_edge)
    return torch.cat(out_row), indices[edge]


def relabel(n_id, found):
    """Local ids for the vertices found (global ids of one type, repeats
    allowed) where n_id (unique) lists that type's vertices so far: those
    keep their positions, the new ones follow in ascending id. Returns
    (n_id with the new vertices appended, each found vertex's local id,
    the new vertices)."""
    uniq, inv = torch.unique(torch.cat([n_id, found]), return_inverse=True)
    old = n_id.numel()
    local = torch.full((uniq.numel(),), -1, dtype=torch.long, device=found.device)
    local[inv[:old]] = torch.arange(old, device=found.device)
    is_new = local < 0
    new = uniq[is_new]
    local[is_new] = torch.arange(old, old + new.numel(), device=found.device)
    return torch.cat([n_id, new]), local[inv[old:]], new


def csr(edge_index, num_dst):
    """An edge type's CSR over its destinations (indptr [num_dst+1],
    indices: the sources, grouped by destination), on edge_index's
    device."""
    dst, perm = torch.sort(edge_index[1], stable=True)
    indptr = torch.zeros(num_dst + 1, dtype=torch.long, device=dst.device)
    indptr[1:] = torch.cumsum(torch.bincount(dst, minlength=num_dst), 0)
    return indptr, edge_index[0][perm]


class TorchSampler:
    """Neighbour sampling with torch ops on the device, as NeighborLoader
    samples a HeteroData: from the seeds (target vertices), per hop and
    per relation up to fanouts[hop] sources of each destination the last
    hop added (the seeds at the first), without replacement; a type's
    sources new to the batch are the next hop's destinations. The batch's
    vertices of each type are unique (the seeds first among the target's),
    its edges those of every hop in local ids."""

    def __init__(self, data, target, fanouts, device):
        self.target, self.fanouts, self.device = target, fanouts, device
        self.node_types, self.edge_types = data.node_types, data.edge_types
        self.csr = {et: csr(data[et].edge_index.to(device), data[et[2]].num_nodes) for et in self.edge_types}
        self.x = {t: data[t].x.to(device) for t in self.node_types if "x" in data[t]}
        self.y = data[target].y.to(device)

    def sample(self, seeds):
        """The batch of seeds (unique target ids on the device): a
        HeteroData with n_id (and x where the type has features) per type,
        edge_index per relation, y and batch_size on the target."""
        empty = torch.empty(0, dtype=torch.long, device=self.device)
        n_id = {t: empty for t in self.node_types}
        n_id[self.target] = seeds
        frontier = {self.target: (0, seeds)}  # per type: local id of the first, the global ids
        edges = {et: [] for et in self.edge_types}
        for k in self.fanouts:
            found = {}  # source type -> [(edge type, destination local ids, source global ids)]
            for et in self.edge_types:
                if et[2] not in frontier:
                    continue
                first, rows = frontier[et[2]]
                row, src = sample_neighbours(*self.csr[et], rows, k)
                found.setdefault(et[0], []).append((et, first + row, src))
            frontier = {}
            for t, parts in found.items():
                old = n_id[t].numel()
                n_id[t], local, new = relabel(n_id[t], torch.cat([src for _, _, src in parts]))
                if new.numel() > 0:
                    frontier[t] = (old, new)
                for (et, dst, src), src_local in zip(parts, local.split([src.numel() for _, _, src in parts])):
                    edges[et].append(torch.stack([src_local, dst]))
        batch = HeteroData()
        for t in self.node_types:
            batch[t].n_id = n_id[t]
            if t in self.x:
                batch[t].x = self.x[t][n_id[t]]
        batch[self.target].y = self.y[seeds]
        batch[self.target].batch_size = seeds.numel()
        for et in self.edge_types:
            batch[et].edge_index = torch.cat(edges[et], 1) if edges[et] else empty.view(2, 0)
        return batch


class TorchLoader:
    """Batches of TorchSampler over ids (target vertices), in --batch
    slices, shuffled on the device each pass where asked."""

    def __init__(self, sampler, ids, batch, shuffle):
        self.sampler, self.ids, self.batch, self.shuffle = sampler, ids.to(sampler.device), batch, shuffle

    def __len__(self):
        return (self.ids.numel() + self.batch - 1) // self.batch

    def __iter__(self):
        ids = self.ids
        if self.shuffle:
            ids = ids[torch.randperm(ids.numel(), device=ids.device)]
        for seeds in ids.split(self.batch):
            yield self.sampler.sample(seeds)


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
    p.add_argument("--sampler", choices=("auto", "torch", "pyg", "cugraph"), default="auto",
                   help="torch: torch ops on the device; pyg: NeighborLoader on the CPU; cugraph: cuGraph-PyG; "
                        "auto: cugraph where it works on a GPU, else torch there, pyg without one")
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
    embeds = {t: (data[t].num_nodes, args.embed) for t in data.node_types if "x" not in data[t]}
    model = Model(embeds, rsage(data.metadata(), args.hidden, len(args.fanouts), classes, args.dropout)).to(device)
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
