// link.cu: link prediction's ops (backend.Link): a step's ends and drawn
// negatives (its exclusion and the sampling through it: exclude.cu,
// sample.cu), positions grouped by row, pair products and their gathered gradient, binary
// cross-entropy, and the ranks of held-out scores for evaluation. Twins of
// backend/cpu/link.go and link_rank.go.
#include "common.cuh"
#include "rng.cuh"


// The negatives' layouts (backend.NegOwn, NegShared, NegInBatch) and the
// Philox index of a step's shared negatives (backend.SharedIndex).
#define NEG_OWN 0
#define NEG_SHARED 1
#define NEG_IN_BATCH 2
#define SHARED_INDEX 0x80000000u

// in_batch_shift is how many positives on, of b, the j-th in-batch
// negative lies (backend's inBatchShift).
__device__ __forceinline__ int in_batch_shift(int j, int b) { return 1 + j % (b > 1 ? b - 1 : 1); }

// neg_at is the position of positive i's j-th negative (backend.NegativeAt).
__device__ __forceinline__ int neg_at(int i, int j, int b, int k, int layout) {
    if (layout == NEG_SHARED) return 2 * b + j;
    if (layout == NEG_IN_BATCH) return b + (i + in_batch_shift(j, b)) % b;
    return 2 * b + i * k + j;
}

// negative_vertex is the vertex a draw's word w gives (sample.Negative):
// uniform over nodes, or by degree with the cumulative degrees dist (the
// first v with dist[v+1] > the drawn position).
__device__ __forceinline__ int negative_vertex(u32 w, int nodes, const int* dist) {
    if (dist == 0) return (int)uniform_below(w, (u32)nodes);
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
    return lo;
}

// edge_seeds: thread t < b writes positive t's ends; with NegOwn, thread
// t in [b, b·(1+k)) draws negative j = (t-b) % k of positive i = (t-b) / k
// from word j of the Philox sequence of index ids[i].
extern "C" __global__ void edge_seeds(const int* pairs, int edges, const int* ids, const int* nP, int cap, int k,
                                      int layout, int nodes, const int* dist, u32 k0, u32 k1, const int* clock,
                                      u32 stream, int* ends, int* nEnds, int* nPairs, int* err) {
    int b = live_count(nP, cap);
    if (gtid() == 0) {
        *nEnds = b == 0 ? 0 : (layout == NEG_SHARED ? 2 * b + k : (layout == NEG_IN_BATCH ? 2 * b : b * (2 + k)));
        *nPairs = b * (1 + k);
    }
    u32 hi = rand_hi(clock, stream), step = (u32)clock[1];
    i64 total = layout == NEG_OWN ? (i64)b * (1 + k) : (i64)b;
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
        ends[2 * b + q] = negative_vertex(philox_word(w4, j & 3), nodes, dist);
    }
}

// shared_insert adds v to the set (slots a power of two; v+1 stored, 0
// empty) and reports whether it was absent.
__device__ __forceinline__ bool shared_insert(u32* set, int slots, u32 v) {
    for (u32 s = ((v * 0x9E3779B1u) >> 16) & (u32)(slots - 1);; s = (s + 1) & (u32)(slots - 1)) {
        u32 old = set[s];
        if (old == v + 1) return false;
        if (old == 0) {
            set[s] = v + 1;
            return true;
        }
    }
}

// edge_shared: one block, with NegShared. Its threads empty a set of slots
// (a power of two, at least 2k) in shared memory, then thread 0 draws the
// step's k shared negatives into ends[2b + j] as sample.SharedNegatives
// does: uniform by Floyd's sampling, or by degree rejecting repeats within
// the first budget draws.
extern "C" __global__ void edge_shared(const int* nP, int cap, int k, int nodes, const int* dist, u32 k0, u32 k1,
                                       const int* clock, u32 stream, int budget, int slots, int* ends) {
    extern __shared__ u32 set[];
    int b = live_count(nP, cap);
    if (b == 0) return;
    for (int s = threadIdx.x; s < slots; s += blockDim.x) set[s] = 0;
    __syncthreads();
    if (threadIdx.x != 0) return;
    u32 hi = rand_hi(clock, stream), step = (u32)clock[1];
    int* out = ends + 2 * b;
    uint4 w4 = make_uint4(0, 0, 0, 0);
    if (dist == 0) {
        u32 t = (u32)(nodes - k);
        for (int j = 0; j < k; j++, t++) {
            if ((j & 3) == 0) w4 = philox4x32_10(make_uint4(SHARED_INDEX, (u32)(j >> 2), step, hi), k0, k1);
            u32 r = uniform_below(philox_word(w4, j & 3), t + 1);
            if (!shared_insert(set, slots, r)) {
                r = t;
                shared_insert(set, slots, r);
            }
            out[j] = (int)r;
        }
        return;
    }
    for (int a = 0, n = 0; n < k; a++) {
        if ((a & 3) == 0) w4 = philox4x32_10(make_uint4(SHARED_INDEX, (u32)(a >> 2), step, hi), k0, k1);
        int v = negative_vertex(philox_word(w4, a & 3), nodes, dist);
        if (shared_insert(set, slots, (u32)v) || a >= budget) out[n++] = v;
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
// negatives each in layout.
__device__ __forceinline__ void pair_ends(int p, int b, int k, int layout, int* a, int* c) {
    if (p < b) {
        *a = p;
        *c = b + p;
        return;
    }
    int q = p - b, i = q / (k > 0 ? k : 1);
    *a = i;
    *c = neg_at(i, q - i * k, b, k, layout);
}

// pair_product: one thread per element of the live pairs' products.
extern "C" __global__ void pair_product(const float* x, int dim, const int* nP, int cap, int k, int layout,
                                        const int* rows, float* h) {
    int b = live_count(nP, cap);
    i64 total = (i64)b * (1 + k) * dim;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        int p = (int)(t / dim), j = (int)(t % dim), a, c;
        pair_ends(p, b, k, layout, &a, &c);
        h[t] = x[(i64)rows[a] * dim + j] * x[(i64)rows[c] * dim + j];
    }
}

// pair_term is dh[p, j] · x[rows[o], j].
__device__ __forceinline__ float pair_term(const float* dh, const float* x, const int* rows, int dim, int p, int o,
                                           int j) {
    return dh[(i64)p * dim + j] * x[(i64)rows[o] * dim + j];
}

// pair_product_bwd: one thread per element of a live row's gradient,
// summing its positions' terms in GroupRows's order (no atomics), each
// position's pairs in the order of the op's description.
extern "C" __global__ void pair_product_bwd(const float* x, const float* dh, int dim, const int* nP, int cap, int k,
                                            int layout, const int* rows, const int* ptr, const int* order,
                                            const int* nRowsP, int rowCap, float* dx) {
    int b = live_count(nP, cap), u = live_count(nRowsP, rowCap);
    i64 total = (i64)u * dim;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        int r = (int)(t / dim), j = (int)(t % dim);
        float acc = 0.0f;
        for (int s = ptr[r]; s < ptr[r + 1]; s++) {
            int q = order[s];
            if (q < b) {  // a source: its positive, then its negatives
                acc += pair_term(dh, x, rows, dim, q, b + q, j);
                for (int n = 0; n < k; n++) acc += pair_term(dh, x, rows, dim, b + q * k + n, neg_at(q, n, b, k, layout), j);
            } else if (q < 2 * b) {  // a positive's destination, and in-batch negative
                int m = q - b;
                acc += pair_term(dh, x, rows, dim, m, m, j);
                if (layout == NEG_IN_BATCH) {
                    for (int n = 0; n < k; n++) {
                        int i = (m - in_batch_shift(n, b) % b + b) % b;
                        acc += pair_term(dh, x, rows, dim, b + i * k + n, i, j);
                    }
                }
            } else if (layout == NEG_SHARED) {  // shared negative n: every positive's
                int n = q - 2 * b;
                for (int i = 0; i < b; i++) acc += pair_term(dh, x, rows, dim, b + i * k + n, i, j);
            } else {  // a negative of source (q - 2b) / k
                acc += pair_term(dh, x, rows, dim, b + (q - 2 * b), (q - 2 * b) / k, j);
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

// pair_ranks: a warp per live positive i, its lanes over its k negatives:
// ranks[2i] = those scoring above it, ranks[2i+1] = those equal.
extern "C" __global__ void pair_ranks(const float* scores, const int* nP, int cap, int k, int* ranks) {
    int b = live_count(nP, cap);
    for (int i = gwarp(); i < b; i += gwarps()) {
        float s = scores[i];
        int above = 0, tied = 0;
        for (int j = lane_id(); j < k; j += 32) {
            float v = scores[b + (i64)i * k + j];
            above += v > s;
            tied += v == s;
        }
        for (int o = 16; o > 0; o >>= 1) {
            above += __shfl_down_sync(FULL_MASK, above, o);
            tied += __shfl_down_sync(FULL_MASK, tied, o);
        }
        if (lane_id() == 0) {
            ranks[2 * (i64)i] = above;
            ranks[2 * (i64)i + 1] = tied;
        }
    }
}

// level_counts: a thread per live negative score: the levels below it by
// binary search, then an integer atomic add to its slot.
extern "C" __global__ void level_counts(const float* levels, int m, const float* scores, const int* nP, int cap,
                                        int k, int* counts) {
    int b = live_count(nP, cap);
    i64 total = (i64)b * k;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        float s = scores[b + t];
        if (!isfinite(s)) {
            atomicAdd(counts + 2 * m + 1, 1);
            continue;
        }
        int lo = 0, up = m;
        while (lo < up) {
            int mid = (lo + up) >> 1;
            if (levels[mid] < s) {
                lo = mid + 1;
            } else {
                up = mid;
            }
        }
        atomicAdd(counts + 2 * lo + (lo < m && levels[lo] == s ? 1 : 0), 1);
    }
}
