"""Neighbour sampling of a typed graph with torch ops on the device, for
scripts/pyg_hetero.py's --sampler torch: from the seeds, hop by hop and
relation by relation, up to a fanout of each destination's sources
without replacement, its vertices made unique per type and relabelled
(the seeds first), each batch a torch_geometric.data.HeteroData as
NeighborLoader gives it.
"""
import torch
from torch_geometric.data import HeteroData


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
