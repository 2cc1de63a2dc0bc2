// relabel.cu: local ids for a sampled block, deterministic.
//
// Destinations keep ids 0..n-1; every other vertex gets the next id in order
// of its first appearance in nbrs (edge order). A per-graph table map[vertex]
// holds tag << 32 | key, where key is a position (i for destination i, n + e
// for edge e) and tag = ~generation, one generation per Relabel call (a
// device counter, so replayed graphs advance it too). A newer generation has
// a smaller tag, so atomicMin overwrites entries of earlier calls and the
// table never needs clearing:
//   relabel_claim      atomicMin(map[v], tag << 32 | key) over positions, so
//                      map[v] ends as v's first position in this call;
//   relabel_flag_scan  with flag(e) = 1 iff edge e is its vertex's first
//                      position, pos[e] = number of flagged edges before e
//                      (each new vertex's rank) and numSrc = n + number of new
//                      vertices, in one launch (scan.cuh);
//   relabel_write      indices[e] = local id of nbrs[e]; the first edge of
//                      each new vertex also writes srcIDs[local] (when it
//                      fits); the last block to finish advances the
//                      generation (and, once in 2^32 - 2 calls, clears the
//                      table).
//
// RelabelStart and RelabelAdd relabel one vertex space over several blocks
// with the same table: RelabelStart claims the destinations (key i) with
// the next generation's tag and advances the generation; each RelabelAdd
// then works in the current generation, whose entries hold local ids
// (below 2^31). It claims new vertices with keys RELABEL_NEW + e (above any
// local id, so atomicMin keeps a vertex already in the space), flags and
// scans them as Relabel does, and the first edge of each new vertex writes
// its local id over its key, so that the table holds local ids again for
// the next RelabelAdd. The space's count in memory is the base of the new
// ids: relabel_add_claim copies it to scratch, and the scan writes the new
// count (base plus the new vertices) over it.
#include "common.cuh"
#include "scan.cuh"

// RelabelState is the per-graph device state: {generation, finished blocks}.
__device__ __forceinline__ u64 relabel_tag(const u32* state) { return (u64)(~(state[0] + 1u)) << 32; }

extern "C" __global__ void relabel_claim(const int* srcIDs, const int* nDstP, int dstCap, int srcCap, const int* nbrs,
                                         const int* nEP, int edgeCap, u64* map, i64 numNodes, const u32* state,
                                         int* err) {
    int n = min(live_count(nDstP, dstCap), srcCap), ne = live_count(nEP, edgeCap);
    u64 tag = relabel_tag(state);
    i64 total = (i64)n + ne;
    for (i64 p = gtid(); p < total; p += gthreads()) {
        int v = p < n ? srcIDs[p] : nbrs[p - n];
        if (v < 0 || v >= numNodes) {
            report_error(err, ERR_RELABEL_ID, (int)p, v, n);
            continue;
        }
        atomicMin(map + v, tag | (u64)p);  // key: i for destinations, n + e for edges
    }
}

// RelabelFlags produces 1 for an edge that is its vertex's first position.
struct RelabelFlags {
    const int* __restrict__ nbrs;
    const u64* __restrict__ map;
    i64 numNodes;
    u64 tag;
    int n, ne;
    __device__ __forceinline__ int key(int e) const { return e < ne ? nbrs[e] : -1; }
    __device__ __forceinline__ int value(int e, int v) const {
        return (v >= 0 && v < numNodes && map[v] == (tag | (u64)(n + e))) ? 1 : 0;
    }
};

extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
relabel_flag_scan(const int* nDstP, int dstCap, int srcCap, const int* nbrs, const int* nEP, int edgeCap,
                  const u64* map, i64 numNodes, const u32* state, int* pos, int* numSrc, u64* status, int* ctr) {
    int addCap = min(dstCap, srcCap);
    RelabelFlags p = {nbrs, map, numNodes, relabel_tag(state), min(live_count(nDstP, dstCap), srcCap),
                      live_count(nEP, edgeCap)};
    ScanState st = {status, ctr};
    scan_tiles(p, p.ne + 1, pos, numSrc, nDstP, addCap, st);
}

extern "C" __global__ void relabel_write(const int* nDstP, int dstCap, int* srcIDs, int srcCap, const int* nbrs,
                                         const int* nEP, int edgeCap, u64* map, i64 numNodes, u32* state,
                                         const int* pos, int* indices) {
    __shared__ int last;
    int n = min(live_count(nDstP, dstCap), srcCap), ne = live_count(nEP, edgeCap);
    for (i64 e = gtid(); e < ne; e += gthreads()) {
        int v = nbrs[e];
        if (v < 0 || v >= numNodes) {
            indices[e] = -1;
            continue;
        }
        int key = (int)(u32)map[v];
        int local = key < n ? key : n + pos[key - n];
        indices[e] = local;
        if (key == n + (int)e && local < srcCap) srcIDs[local] = v;
    }
    // The last block to finish advances the generation.
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(state + 1, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    u32 gen = state[0] + 1u;
    if (gen == 0xfffffffeu) {  // tags would run out: clear the table
        for (i64 v = threadIdx.x; v < numNodes; v += blockDim.x) map[v] = ~0ull;
        gen = 0;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        state[0] = gen;
        state[1] = 0;
    }
}

// relabel_cur_tag is the tag of the current generation: the space of the
// last RelabelStart (or the last Relabel's).
__device__ __forceinline__ u64 relabel_cur_tag(const u32* state) { return (u64)(~state[0]) << 32; }

#define RELABEL_NEW 0x80000000u  // keys of positions in a RelabelAdd, above any local id

// relabel_advance is run by the block of a launch that finishes last: it
// advances the generation of state and zeroes its block counter. When the
// tags would run out it clears the table but for the entries of the
// generation just used (tag), which keep their keys under generation 1.
__device__ void relabel_advance(u64* map, i64 numNodes, u32* state, u64 tag) {
    u32 gen = state[0] + 1u;
    if (gen == 0xfffffffeu) {
        u64 keep = (u64)(~1u) << 32;
        for (i64 v = threadIdx.x; v < numNodes; v += blockDim.x) {
            u64 x = map[v];
            map[v] = (x & 0xffffffff00000000ull) == tag ? keep | (x & 0xffffffffull) : ~0ull;
        }
        gen = 1;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        state[0] = gen;
        state[1] = 0;
    }
}

// last_block reports, to every thread of a block, whether the block is the
// last of the grid to get here (counted in *ctr after a fence).
__device__ __forceinline__ bool last_block(u32* ctr) {
    __shared__ int last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(ctr, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    return last != 0;
}

extern "C" __global__ void relabel_start(const int* dst, const int* nDstP, int dstCap, int* srcIDs, int* nSrcP,
                                         int srcCap, u64* map, i64 numNodes, u32* state, int* err) {
    int n = live_count(nDstP, dstCap);
    u64 tag = relabel_tag(state);
    for (i64 i = gtid(); i < n; i += gthreads()) {
        int v = dst[i];
        if (i < srcCap) srcIDs[i] = v;
        if (v < 0 || v >= numNodes) {
            report_error(err, ERR_RELABEL_START_ID, (int)i, v, (int)min(numNodes, (i64)INT32_MAX_));
            continue;
        }
        atomicMin(map + v, tag | (u64)i);
    }
    if (last_block(state + 1)) {
        if (threadIdx.x == 0) *nSrcP = n;
        relabel_advance(map, numNodes, state, tag);
    }
}

extern "C" __global__ void relabel_add_claim(const int* nbrs, const int* nEP, int edgeCap, u64* map, i64 numNodes,
                                             const u32* state, const int* nSrcP, int* base, int* err) {
    int ne = live_count(nEP, edgeCap);
    u64 tag = relabel_cur_tag(state);
    if (gtid() == 0) *base = max(*nSrcP, 0);
    for (i64 e = gtid(); e < ne; e += gthreads()) {
        int v = nbrs[e];
        if (v < 0 || v >= numNodes) {
            report_error(err, ERR_RELABEL_ADD_ID, (int)e, v, (int)min(numNodes, (i64)INT32_MAX_));
            continue;
        }
        atomicMin(map + v, tag | (u64)(RELABEL_NEW + (u32)e));
    }
}

// RelabelAddFlags produces 1 for an edge that is a new vertex's first.
struct RelabelAddFlags {
    const int* __restrict__ nbrs;
    const u64* __restrict__ map;
    i64 numNodes;
    u64 tag;
    int ne;
    __device__ __forceinline__ int key(int e) const { return e < ne ? nbrs[e] : -1; }
    __device__ __forceinline__ int value(int e, int v) const {
        return (v >= 0 && v < numNodes && map[v] == (tag | (u64)(RELABEL_NEW + (u32)e))) ? 1 : 0;
    }
};

extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
relabel_add_scan(const int* nbrs, const int* nEP, int edgeCap, const u64* map, i64 numNodes, const u32* state, int* pos,
                 const int* base, int* nSrcP, u64* status, int* ctr) {
    RelabelAddFlags p = {nbrs, map, numNodes, relabel_cur_tag(state), live_count(nEP, edgeCap)};
    ScanState st = {status, ctr};
    scan_tiles(p, p.ne + 1, pos, nSrcP, base, INT32_MAX_, st);
}

// relabel_add_write: a key below RELABEL_NEW is a local id (of the space
// before this call, or one the first edge of its vertex has just written);
// RELABEL_NEW + j names the vertex's first edge j, whose id is base plus
// the new vertices before it. Either read gives the same id.
extern "C" __global__ void relabel_add_write(const int* nbrs, const int* nEP, int edgeCap, u64* map, i64 numNodes,
                                             const u32* state, const int* pos, const int* base, int* srcIDs,
                                             int srcCap, int* indices) {
    int ne = live_count(nEP, edgeCap);
    u64 tag = relabel_cur_tag(state);
    i64 b = *base;
    for (i64 e = gtid(); e < ne; e += gthreads()) {
        int v = nbrs[e];
        if (v < 0 || v >= numNodes) {
            indices[e] = -1;
            continue;
        }
        u32 key = (u32)map[v];
        i64 local = key;
        if (key >= RELABEL_NEW) {
            u32 j = key - RELABEL_NEW;
            if (j >= (u32)ne) {  // not this call's (no RelabelStart began the space)
                indices[e] = -1;
                continue;
            }
            local = b + pos[j];
            if (j == (u32)e) {
                if (local < srcCap) srcIDs[local] = v;
                map[v] = tag | (u64)min(local, (i64)INT32_MAX_);
            }
        }
        indices[e] = (int)min(local, (i64)INT32_MAX_);
    }
}
