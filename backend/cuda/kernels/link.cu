// link.cu: link prediction's ops (backend.Link): a step's ends and drawn
// negatives, the batch's edges taken out of a sampled hop, positions
// grouped by row, pair products and their gathered gradient, and binary
// cross-entropy. Twins of backend/cpu/link.go.
#include "common.cuh"
#include "rng.cuh"


// edge_seeds: thread t < b·(1+k): t < b writes positive t's ends, else
// negative j = (t-b) % k of positive i = (t-b) / k: word j of the Philox
// sequence of index ids[i], uniform over nodes or, with dist, by degree
// (the first v with dist[v+1] > the drawn position).
extern "C" __global__ void edge_seeds(const int* pairs, int edges, const int* ids, const int* nP, int cap, int k,
                                      int nodes, const int* dist, u32 k0, u32 k1, const int* clock, u32 stream,
                                      int* ends, int* nEnds, int* nPairs, int* err) {
    int b = live_count(nP, cap);
    if (gtid() == 0) {
        *nEnds = b * (2 + k);
        *nPairs = b * (1 + k);
    }
    u32 hi = rand_hi(clock, stream), step = (u32)clock[1];
    i64 total = (i64)b * (1 + k);
    for (i64 t = gtid(); t < total; t += gthreads()) {
        int q = (int)(t - b);
        int i = t < b ? (int)t : q / k;
        int e = ids[i];
        if (e < 0 || e >= edges) {
            report_error(err, ERR_LINK_EDGE, i, e, edges);
            continue;
        }
        if (t < b) {
            ends[i] = pairs[2 * (i64)e];
            ends[b + i] = pairs[2 * (i64)e + 1];
            continue;
        }
        int j = q % k;
        uint4 w4 = philox4x32_10(make_uint4((u32)e, (u32)(j >> 2), step, hi), k0, k1);
        u32 w = philox_word(w4, j & 3);
        int v;
        if (dist == 0) {
            v = (int)uniform_below(w, (u32)nodes);
        } else {
            int at = (int)uniform_below(w, (u32)dist[nodes]);
            int lo = 0, up = nodes;
            while (lo < up) {
                int mid = (lo + up) >> 1;
                if (dist[mid + 1] > at) {
                    up = mid;
                } else {
                    lo = mid + 1;
                }
            }
            v = lo;
        }
        ends[2 * b + q] = v;
    }
}

// pair_key packs a pair; pair_slot is its first slot (Fibonacci hashing,
// size a power of two), as backend/cpu/link.go's pairSet.
__device__ __forceinline__ u64 pair_key(int u, int w) { return ((u64)(u32)u << 32) | (u64)(u32)w; }
__device__ __forceinline__ int pair_slot(u64 key, int size) {
    return (int)(((key * 0x9E3779B97F4A7C15ull) >> 32) & (u64)(size - 1));
}

// exclude_clear empties the table (slots of -1).
extern "C" __global__ void exclude_clear(u64* table, int size) {
    for (i64 t = gtid(); t < size; t += gthreads()) table[t] = ~0ull;
}

__device__ __forceinline__ void pair_insert(u64* table, int size, u64 key) {
    for (int s = pair_slot(key, size);; s = (s + 1) & (size - 1)) {
        u64 old = atomicCAS(table + s, ~0ull, key);
        if (old == ~0ull || old == key) return;
    }
}

__device__ __forceinline__ bool pair_has(const u64* table, int size, u64 key) {
    for (int s = pair_slot(key, size);; s = (s + 1) & (size - 1)) {
        u64 v = table[s];
        if (v == key) return true;
        if (v == ~0ull) return false;
    }
}

// exclude_insert puts the b positives (ends[i], ends[b+i]) into the table,
// and their reverses with reverse.
extern "C" __global__ void exclude_insert(const int* ends, const int* nP, int cap, int reverse, u64* table,
                                          int size) {
    int b = live_count(nP, cap);
    for (i64 i = gtid(); i < b; i += gthreads()) {
        int u = ends[i], v = ends[b + i];
        pair_insert(table, size, pair_key(u, v));
        if (reverse) pair_insert(table, size, pair_key(v, u));
    }
}

// overflowed reports whether a block's edge count exceeds its capacity
// (then ExcludeEdges leaves it as it is).
__device__ __forceinline__ bool overflowed(const int* neP, int edgeCap) { return *neP > edgeCap; }

// exclude_count saves destination d's row (offsets and neighbours) and
// writes the number of its neighbours that stay into keep[d]; keep[nDst]
// = 0 for the scan's total. An overflowed block keeps every neighbour.
extern "C" __global__ void exclude_count(const int* indptr, const int* nbrs, const int* ids, const int* ndP,
                                         int dstCap, const int* neP, int edgeCap, const u64* table, int size,
                                         int* keep, int* savedPtr, int* savedNbrs) {
    int nd = live_count(ndP, dstCap);
    bool over = overflowed(neP, edgeCap);
    for (i64 d = gtid(); d <= nd; d += gthreads()) {
        savedPtr[d] = indptr[d];
        if (d == nd) {
            keep[d] = 0;
            continue;
        }
        int lo = indptr[d], hi = indptr[d + 1], n = 0, x = ids[d];
        for (int e = lo; e < hi; e++) {
            if (over) {
                n++;
                continue;
            }
            int w = nbrs[e];
            savedNbrs[e] = w;
            if (!pair_has(table, size, pair_key(x, w))) n++;
        }
        keep[d] = n;
    }
}

// exclude_write writes the neighbours that stay at their new offsets.
extern "C" __global__ void exclude_write(const int* ids, const int* ndP, int dstCap, const int* neP, int edgeCap,
                                         const u64* table, int size, const int* savedPtr, const int* savedNbrs,
                                         const int* indptr, int* nbrs) {
    if (overflowed(neP, edgeCap)) return;
    int nd = live_count(ndP, dstCap);
    for (i64 d = gtid(); d < nd; d += gthreads()) {
        int out = indptr[d], x = ids[d];
        for (int e = savedPtr[d]; e < savedPtr[d + 1]; e++) {
            int w = savedNbrs[e];
            if (!pair_has(table, size, pair_key(x, w))) nbrs[out++] = w;
        }
    }
}

// group_count counts each live row's positions into cnt (zeroed first);
// cnt[nRows] stays 0 for the scan's total.
extern "C" __global__ void group_count(const int* rows, const int* nEndsP, int endCap, const int* nRowsP, int rowCap,
                                       int* cnt, int* err) {
    int m = live_count(nEndsP, endCap), u = live_count(nRowsP, rowCap);
    for (i64 q = gtid(); q < m; q += gthreads()) {
        int r = rows[q];
        if (r < 0 || r >= u) {
            report_error(err, ERR_LINK_ROW, (int)q, r, u);
            continue;
        }
        atomicAdd(cnt + r, 1);
    }
}

// group_place puts each position into its row's segment at ptr[r] plus
// the row's positions placed so far (placed, zeroed first: any order
// within a row, which group_sort then sorts).
extern "C" __global__ void group_place(const int* rows, const int* nEndsP, int endCap, const int* nRowsP, int rowCap,
                                       const int* ptr, int* placed, int* order) {
    int m = live_count(nEndsP, endCap), u = live_count(nRowsP, rowCap);
    for (i64 q = gtid(); q < m; q += gthreads()) {
        int r = rows[q];
        if (r < 0 || r >= u) continue;
        order[ptr[r] + atomicAdd(placed + r, 1)] = (int)q;
    }
}

// group_sort sorts each row's positions (insertion sort: rows hold few).
extern "C" __global__ void group_sort(const int* ptr, const int* nRowsP, int rowCap, int* order) {
    int u = live_count(nRowsP, rowCap);
    for (i64 r = gtid(); r < u; r += gthreads()) {
        int lo = ptr[r], hi = ptr[r + 1];
        for (int i = lo + 1; i < hi; i++) {
            int v = order[i], j = i - 1;
            while (j >= lo && order[j] > v) {
                order[j + 1] = order[j];
                j--;
            }
            order[j + 1] = v;
        }
    }
}

// pair_ends is the positions (a, c) of pair p of b positives with k
// negatives each.
__device__ __forceinline__ void pair_ends(int p, int b, int k, int* a, int* c) {
    if (p < b) {
        *a = p;
        *c = b + p;
        return;
    }
    int q = p - b;
    *a = q / (k > 0 ? k : 1);
    *c = 2 * b + q;
}

// pair_product: one thread per element of the live pairs' products.
extern "C" __global__ void pair_product(const float* x, int dim, const int* nP, int cap, int k, const int* rows,
                                        float* h) {
    int b = live_count(nP, cap);
    i64 total = (i64)b * (1 + k) * dim;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        int p = (int)(t / dim), j = (int)(t % dim), a, c;
        pair_ends(p, b, k, &a, &c);
        h[t] = x[(i64)rows[a] * dim + j] * x[(i64)rows[c] * dim + j];
    }
}

// pair_product_bwd: one thread per element of a live row's gradient,
// summing its positions' terms in GroupRows's order (no atomics).
extern "C" __global__ void pair_product_bwd(const float* x, const float* dh, int dim, const int* nP, int cap, int k,
                                            const int* rows, const int* ptr, const int* order, const int* nRowsP,
                                            int rowCap, float* dx) {
    int b = live_count(nP, cap), u = live_count(nRowsP, rowCap);
    i64 total = (i64)u * dim;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        int r = (int)(t / dim), j = (int)(t % dim);
        float acc = 0.0f;
        for (int s = ptr[r]; s < ptr[r + 1]; s++) {
            int q = order[s];
            if (q < b) {  // a source: its positive, then its negatives
                acc += dh[(i64)q * dim + j] * x[(i64)rows[b + q] * dim + j];
                for (int n = 0; n < k; n++) {
                    int p = b + q * k + n;
                    acc += dh[(i64)p * dim + j] * x[(i64)rows[2 * b + q * k + n] * dim + j];
                }
            } else if (q < 2 * b) {  // a positive's destination
                acc += dh[(i64)(q - b) * dim + j] * x[(i64)rows[q - b] * dim + j];
            } else {  // a negative of source (q - 2b) / k
                int p = b + (q - 2 * b);
                acc += dh[(i64)p * dim + j] * x[(i64)rows[(q - 2 * b) / k] * dim + j];
            }
        }
        dx[t] = acc;
    }
}

#define LOSS_THREADS 256

// pair_loss: one block. Thread i takes pairs i, i + 256, ... (the
// gradient, its loss terms and hits), then a fixed tree adds the threads'
// sums: the same bits every run.
extern "C" __global__ void __launch_bounds__(LOSS_THREADS)
pair_loss(const float* scores, const int* nP, int cap, int k, float* loss, float* dscores, int* correct) {
    __shared__ double sums[LOSS_THREADS];
    __shared__ int hits[LOSS_THREADS];
    int b = live_count(nP, cap), pairs = b * (1 + k), i = threadIdx.x;
    double inv = 1.0 / (double)(pairs > 0 ? pairs : 1), s = 0.0;
    int h = 0;
    for (int p = i; p < pairs; p += LOSS_THREADS) {
        float sc = scores[p];
        double x = (double)sc, y = p < b ? 1.0 : 0.0;
        s += fmax(x, 0.0) - x * y + log1p(exp(-fabs(x)));
        double sig = x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
        dscores[p] = (float)((sig - y) * inv);
        if ((p < b && sc > 0.0f) || (p >= b && sc < 0.0f)) h++;
    }
    sums[i] = s;
    hits[i] = h;
    __syncthreads();
    for (int w = LOSS_THREADS / 2; w > 0; w >>= 1) {
        if (i < w) {
            sums[i] += sums[i + w];
            hits[i] += hits[i + w];
        }
        __syncthreads();
    }
    if (i == 0) {
        *loss = (float)(sums[0] * inv);
        *correct = hits[0];
    }
}
