// relabel.cu: local ids for a sampled block, deterministic.
//
// Destinations keep ids 0..n-1; every other vertex gets the next id in order
// of its first appearance in nbrs (edge order). With a per-graph table
// map[vertex] (all INT32_MAX between calls):
//   relabel_claim  atomicMin(map[v], key) over positions: key i for
//                  destination i, n + e for edge e, so map[v] ends as the
//                  first position of v;
//   relabel_flag_scan  with flag(e) = 1 iff edge e is v's first position,
//                  pos[e] = number of flagged edges before e (each new
//                  vertex's rank) and numSrc = n + number of new vertices,
//                  in one launch (scan.cuh);
//   relabel_write  indices[e] = local id of nbrs[e]; the first edge of each
//                  new vertex also writes srcIDs[local] (when it fits);
//   relabel_reset  map[v] = INT32_MAX again for every vertex touched.
#include "common.cuh"
#include "scan.cuh"

__device__ __forceinline__ int position_vertex(int p, int dstCap, int n, int ne, const int* srcIDs, const int* nbrs,
                                               int* key) {
    if (p < dstCap) {
        if (p >= n) return -1;
        *key = p;
        return srcIDs[p];
    }
    int e = p - dstCap;
    if (e >= ne) return -1;
    *key = n + e;
    return nbrs[e];
}

extern "C" __global__ void relabel_claim(const int* srcIDs, const int* nDstP, int dstCap, int srcCap, const int* nbrs,
                                         const int* nEP, int edgeCap, int* map, i64 numNodes, int* err) {
    int n = min(live_count(nDstP, dstCap), srcCap), ne = live_count(nEP, edgeCap);
    i64 total = (i64)dstCap + edgeCap;
    for (i64 p = gtid(); p < total; p += gthreads()) {
        int key = 0;
        int v = position_vertex((int)p, dstCap, n, ne, srcIDs, nbrs, &key);
        if (p >= dstCap && (int)p - dstCap >= ne) break;
        if (p < dstCap && p >= n) continue;
        if (v < 0 || v >= numNodes) {
            report_error(err, ERR_RELABEL_ID, (int)p, v, dstCap);
            continue;
        }
        atomicMin(map + v, key);
    }
}

// RelabelFlags produces 1 for an edge that is its vertex's first position.
struct RelabelFlags {
    const int* nbrs;
    const int* map;
    i64 numNodes;
    int n, ne;
    __device__ __forceinline__ int item(int e) const {
        if (e >= ne) return 0;
        int v = nbrs[e];
        return (v >= 0 && v < numNodes && map[v] == n + e) ? 1 : 0;
    }
};

// relabel_flag_scan: pos[e] = rank of edge e among first appearances (for
// e <= ne); *numSrc = n + number of new vertices. One launch (scan.cuh).
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
relabel_flag_scan(const int* nDstP, int dstCap, int srcCap, const int* nbrs, const int* nEP, int edgeCap,
                  const int* map, i64 numNodes, int* pos, int* numSrc, u64* status, int* ctr) {
    int addCap = min(dstCap, srcCap);
    RelabelFlags p = {nbrs, map, numNodes, min(live_count(nDstP, dstCap), srcCap), live_count(nEP, edgeCap)};
    ScanState st = {status, ctr};
    scan_tiles(p, p.ne + 1, pos, numSrc, nDstP, addCap, st);
}

extern "C" __global__ void relabel_write(const int* nDstP, int dstCap, int* srcIDs, int srcCap, const int* nbrs,
                                         const int* nEP, int edgeCap, const int* map, i64 numNodes, const int* pos,
                                         int* indices) {
    int n = min(live_count(nDstP, dstCap), srcCap), ne = live_count(nEP, edgeCap);
    for (i64 e = gtid(); e < ne; e += gthreads()) {
        int v = nbrs[e];
        if (v < 0 || v >= numNodes) {
            indices[e] = -1;
            continue;
        }
        int key = map[v];
        int local = key < n ? key : n + pos[key - n];
        indices[e] = local;
        if (key == n + (int)e && local < srcCap) srcIDs[local] = v;
    }
}

extern "C" __global__ void relabel_reset(const int* srcIDs, const int* nDstP, int dstCap, int srcCap, const int* nbrs,
                                         const int* nEP, int edgeCap, int* map, i64 numNodes) {
    int n = min(live_count(nDstP, dstCap), srcCap), ne = live_count(nEP, edgeCap);
    i64 total = (i64)dstCap + edgeCap;
    for (i64 p = gtid(); p < total; p += gthreads()) {
        int key = 0;
        if (p >= dstCap && (int)p - dstCap >= ne) break;
        if (p < dstCap && p >= n) continue;
        int v = position_vertex((int)p, dstCap, n, ne, srcIDs, nbrs, &key);
        if (v >= 0 && v < numNodes) map[v] = INT32_MAX_;
    }
}
