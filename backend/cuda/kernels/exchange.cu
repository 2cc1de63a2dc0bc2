// exchange.cu: the device side of a row exchange between the ranks of a
// group (backend.Exchange; the collectives between the ops are NCCL's).
// where[v] >= 0 is the row of held that is v's; where[v] < 0 names the rank
// -(1+where[v]) to ask. A peer's chunk of ask is its count, then up to
// chunk vertex ids; pos says where each asked row goes in the output. Rows
// are moved as 4-byte words, one thread per word. Counters (u64, optional):
// 0 held, 1 asked of the same host, 2 asked of another host, 3 reused,
// 4 the chunk (once per gather), 5 rows that did not fit a chunk, 6 gathers.
// need (optional, int [2]): the most rows this gather asks of one peer, and
// the most since the host cleared it. A row that does not fit its chunk is
// tagged XCH_LOST, so that xch_tag does not keep it.
#include "common.cuh"

#define XCH_LOST (-0x7fffffff)       // math.MinInt32 + 1 (backend.ExchangeLost)
#define XCH_UNTAGGED (-0x7fffffff - 1) // math.MinInt32

// xch_reset zeroes every peer's count and this gather's need, and counts
// the chunk and the gather: before xch_ask.
extern "C" __global__ void xch_reset(int* ask, int ranks, int chunk, unsigned long long* stats, int* need) {
    for (i64 p = gtid(); p < ranks; p += gthreads()) ask[p * (i64)(chunk + 1)] = 0;
    if (gtid() == 0 && need) need[0] = 0;
    if (gtid() == 0 && stats) {
        atomicAdd(&stats[4], (unsigned long long)chunk);
        atomicAdd(&stats[6], 1ull);
    }
}

// xch_ask: one thread per word of each live row. A held row, or one the
// previous gather kept (tag[v] = gen - 1, read only here), is copied into
// out (a kept one also into the current half of keep); the first word's
// thread of any other row appends it to its peer's chunk and counts it.
// A row past its chunk is tagged XCH_LOST by that thread: the row's other
// threads, which read its tag, find it no more the previous gather's than
// before.
extern "C" __global__ void xch_ask(const int* where, i64 numRows, const u32* held, int dim, int rank, int ranks,
                                   int perHost, int chunk, int* ask, int* pos, const int* ids, const int* nP, int cap,
                                   u32* out, u32* keep, int keepRows, int* tag, const int* slot,
                                   const int* genP, unsigned long long* stats, int* need, int* err) {
    __shared__ unsigned int counts[6];
    if (threadIdx.x < 6) counts[threadIdx.x] = 0;
    __syncthreads();
    int g = keep ? *genP : 0;
    u64 half = (u64)keepRows * (u64)dim;
    const u32* prev = keep + (u64)((g - 1) & 1) * half;
    u32* cur = keep + (u64)(g & 1) * half;
    u64 total = (u64)live_count(nP, cap) * (u64)dim;
    for (u64 t = gtid(); t < total; t += gthreads()) {
        u64 i = t / (u64)dim;
        u64 c = t - i * (u64)dim;
        int v = ids[i];
        if (v < 0 || v >= numRows) {
            if (c == 0) report_error(err, ERR_GATHER_ID, (int)i, v, (int)(numRows > INT32_MAX_ ? INT32_MAX_ : numRows));
            continue;
        }
        int w = where[v];
        if (w >= 0) {
            out[t] = held[(u64)w * (u64)dim + c];
            if (c == 0) atomicAdd(&counts[0], 1u);
            continue;
        }
        if (keep) {
            int s = slot[v];
            if (tag[v] == g - 1 && s >= 0 && s < keepRows) {
                u32 x = prev[(u64)s * (u64)dim + c];
                out[t] = x;
                if (i < (u64)keepRows) cur[t] = x;
                if (c == 0) atomicAdd(&counts[3], 1u);
                continue;
            }
        }
        if (c != 0) continue;
        int p = -w - 1;
        if (p >= ranks || p == rank) {
            report_error(err, ERR_GATHER_ID, (int)i, v, w);
            continue;
        }
        atomicAdd(&counts[p / perHost == rank / perHost ? 1 : 2], 1u);
        int k = atomicAdd(&ask[p * (i64)(chunk + 1)], 1);
        if (need) {
            atomicMax(&need[0], k + 1);
            atomicMax(&need[1], k + 1);
        }
        if (k >= chunk) {
            atomicAdd(&counts[5], 1u);
            if (keep && i < (u64)keepRows) tag[v] = XCH_LOST;
            continue;
        }
        ask[p * (i64)(chunk + 1) + 1 + k] = v;
        pos[p * (i64)chunk + k] = (int)i;
    }
    if (stats) {
        __syncthreads();
        if (threadIdx.x < 6 && threadIdx.x != 4 && counts[threadIdx.x])
            atomicAdd(&stats[threadIdx.x], (unsigned long long)counts[threadIdx.x]);
    }
}

// xch_serve: one thread per word of every peer's chunk; the rows a peer
// asked for (its count, clamped to the chunk) are copied from held.
extern "C" __global__ void xch_serve(const int* where, i64 numRows, const u32* held, int dim, int ranks, int chunk,
                                     const int* asked, u32* reply, int* err) {
    u64 per = (u64)chunk * (u64)dim;
    u64 total = (u64)ranks * per;
    for (u64 t = gtid(); t < total; t += gthreads()) {
        u64 p = t / per;
        u64 r = t - p * per;
        u64 k = r / (u64)dim;
        u64 c = r - k * (u64)dim;
        const int* a = asked + p * (u64)(chunk + 1);
        int m = a[0];
        if ((i64)k >= (i64)(m < chunk ? m : chunk)) continue;
        int v = a[1 + k];
        int w = (v >= 0 && v < numRows) ? where[v] : -1;
        if (w < 0) {
            if (c == 0) report_error(err, ERR_GATHER_ID, (int)k, v, (int)p);
            continue;
        }
        reply[t] = held[(u64)w * (u64)dim + c];
    }
}

// xch_take: one thread per word of every peer's chunk; the rows a peer sent
// go to out at the rows pos recorded (and, among the first keepRows, into
// the current half of keep).
extern "C" __global__ void xch_take(int dim, int ranks, int chunk, const int* ask, const int* pos, const u32* got,
                                    u32* out, u32* keep, int keepRows, const int* genP) {
    u64 per = (u64)chunk * (u64)dim;
    u64 total = (u64)ranks * per;
    u32* cur = keep ? keep + (u64)(*genP & 1) * (u64)keepRows * (u64)dim : 0;
    for (u64 t = gtid(); t < total; t += gthreads()) {
        u64 p = t / per;
        u64 r = t - p * per;
        u64 k = r / (u64)dim;
        u64 c = r - k * (u64)dim;
        int m = ask[p * (u64)(chunk + 1)];
        if ((i64)k >= (i64)(m < chunk ? m : chunk)) continue;
        int i = pos[p * (u64)chunk + k];
        u32 x = got[t];
        out[(u64)i * (u64)dim + c] = x;
        if (cur && i < keepRows) cur[(u64)i * (u64)dim + c] = x;
    }
}

// xch_tag records which gather kept each row not held here among the first
// keepRows, and where, but for the rows that did not fit their chunks
// (XCH_LOST), which it untags; peer_rows_advance then moves the counter on.
extern "C" __global__ void xch_tag(const int* where, i64 numRows, const int* ids, const int* nP, int cap,
                                   int keepRows, int* tag, int* slot, const int* genP) {
    int n = live_count(nP, cap);
    int g = *genP;
    for (i64 i = gtid(); i < n && i < keepRows; i += gthreads()) {
        int v = ids[i];
        if (v < 0 || v >= numRows || where[v] >= 0) continue;
        if (tag[v] == XCH_LOST)
            tag[v] = XCH_UNTAGGED;
        else
            tag[v] = g, slot[v] = (int)i;
    }
}
