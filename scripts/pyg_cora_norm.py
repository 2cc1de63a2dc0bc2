"""What batch normalisation costs PyTorch Geometric's own models on Cora.

The yardstick for fanout's Cora figures with --norm batch (docs/perf.md,
issue 26): PyG's GCN, GraphSAGE and GIN (BasicGNN, norm=None against
norm="batch_norm") with the settings of fanout's Cora runs, trained full-batch
and, where PyG's neighbour sampler is installed, on mini-batches of the 140
training vertices with their whole two-hop neighbourhoods (what fanout's
--fanouts -1,-1 --batch 1024 does). Test accuracy at the best validation
epoch, mean over seeds 1-5.

    python3 scripts/pyg_cora_norm.py PLANETOID_DIR [--epochs 200]

PLANETOID_DIR holds the raw ind.cora.* files.
"""
import argparse
import os
import shutil
import tempfile

import torch
import torch.nn.functional as F
from torch_geometric.datasets import Planetoid
from torch_geometric.nn import GCN, GIN, GraphSAGE
import torch_geometric.transforms as T

SETTINGS = {  # model: (class, hidden, lr, input dropout)
    "gcn": (GCN, 16, 0.01, 0.0),
    "sage": (GraphSAGE, 16, 0.01, 0.5),
    "gin": (GIN, 64, 0.005, 0.5),
}


def load(raw_dir):
    root = tempfile.mkdtemp()
    os.makedirs(os.path.join(root, "Cora", "raw"))
    for f in os.listdir(raw_dir):
        shutil.copy(os.path.join(raw_dir, f), os.path.join(root, "Cora", "raw", f))
    return Planetoid(root, "Cora", transform=T.NormalizeFeatures())[0]


def model_for(name, norm, classes, in_dim):
    cls, hidden, lr, in_drop = SETTINGS[name]
    m = cls(in_dim, hidden, num_layers=2, out_channels=classes, dropout=0.5, norm=norm)
    return m, lr, in_drop


def accuracy(out, y, mask):
    return float((out[mask].argmax(-1) == y[mask]).float().mean())


def run(data, name, norm, seed, epochs, dev, train_epoch):
    """Trains with train_epoch(model, optimiser, input dropout) per epoch;
    the test accuracy at the best validation epoch (full-graph inference)."""
    torch.manual_seed(seed)
    m, lr, in_drop = model_for(name, norm, int(data.y.max()) + 1, data.num_features)
    m = m.to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=lr, weight_decay=5e-4)
    best_val, test_at = -1.0, 0.0
    for _ in range(epochs):
        m.train()
        train_epoch(m, opt, in_drop)
        m.eval()
        with torch.no_grad():
            out = m(data.x, data.edge_index)
        v = accuracy(out, data.y, data.val_mask)
        if v > best_val:
            best_val, test_at = v, accuracy(out, data.y, data.test_mask)
    return test_at


def run_full(data, name, norm, seed, epochs, dev):
    def train_epoch(m, opt, in_drop):
        opt.zero_grad()
        x = F.dropout(data.x, in_drop, training=True)
        F.cross_entropy(m(x, data.edge_index)[data.train_mask], data.y[data.train_mask]).backward()
        opt.step()

    return run(data, name, norm, seed, epochs, dev, train_epoch)


def run_sampled(data, name, norm, seed, epochs, dev):
    from torch_geometric.loader import NeighborLoader

    loader = NeighborLoader(data, num_neighbors=[-1, -1], batch_size=140, input_nodes=data.train_mask, shuffle=True)

    def train_epoch(m, opt, in_drop):
        for b in loader:
            b = b.to(dev)
            opt.zero_grad()
            x = F.dropout(b.x, in_drop, training=True)
            out = m(x, b.edge_index)[: b.batch_size]
            F.cross_entropy(out, b.y[: b.batch_size]).backward()
            opt.step()

    return run(data, name, norm, seed, epochs, dev, train_epoch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("planetoid_dir")
    ap.add_argument("--epochs", type=int, default=200)
    args = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    data = load(args.planetoid_dir).to(dev)
    modes = [("full-batch", run_full)]
    try:
        from torch_geometric.loader import NeighborLoader  # noqa: F401
        import torch_geometric.typing as tgt

        if tgt.WITH_PYG_LIB or tgt.WITH_TORCH_SPARSE:
            modes.append(("sampled 140 seeds", run_sampled))
        else:
            print("no pyg-lib or torch-sparse: the sampled runs are skipped")
    except ImportError as e:
        print(f"the sampled runs are skipped: {e}")
    for mode, fn in modes:
        for name in SETTINGS:
            row = []
            for norm in (None, "batch_norm"):
                accs = [fn(data, name, norm, s, args.epochs, dev) for s in range(1, 6)]
                row.append(sum(accs) / len(accs))
                print(f"{mode} {name} norm={norm}: " + " ".join(f"{a:.3f}" for a in accs) + f" mean {row[-1]:.4f}", flush=True)
            print(f"== {mode} {name}: without {row[0]:.4f}, batch norm {row[1]:.4f} ({100 * (row[1] - row[0]):+.1f} points)", flush=True)


if __name__ == "__main__":
    main()
