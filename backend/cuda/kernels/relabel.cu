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
