// peerreduce.cu: the sum of one F32 buffer over the GPUs of one process,
// through peer memory (NVLink), in place of a collective library's
// all-reduce for the small buffers of a step (the gradients).
//
// Each rank has a receive area of two slots, each holding one entry per
// rank. In round r (this rank's ctl[0], equal on every rank) rank i writes
// its buffer into its entry of slot r%2 of every peer's area (stores only:
// nothing waits on a remote read), then tells each peer it has arrived by
// writing r+1 into flags[peer][i]. Once every peer has arrived, rank i sums
// the entries of its own slot in rank order (its own buffer standing in for
// its entry), so every rank computes the same bits, and overwrites its
// buffer. One barrier is enough: a rank writes slot r%2 again only in round
// r+2, after every peer has arrived at round r+1, which a peer does only
// after its round r (its reading of that slot) is over. The flags only
// grow, so nothing is reset; a replayed graph advances ctl[0] on the device.
//
// A rank may hand over a few I32 flag words (at most PEER_FLAGS) with its
// buffer: they travel in the last four floats of its entry (the stride
// leaves them free) and every rank ends with their element-wise maximum,
// so a step's overflow flag needs no collective of its own.
//
// Blocks wait for the peers inside the kernel, so the grid is at most one
// block per SM (the host's launch): every block that has not yet written
// its part can still be scheduled. A peer that never arrives (its process
// failed) ends the wait after PEER_TIMEOUT_NS with an error record.
#include "common.cuh"

#define PEER_MAX 8
#define PEER_FLAGS 4
#define PEER_TIMEOUT_NS 120000000000ull

struct PeerGroup {
    float* recv[PEER_MAX];  // each rank's receive area: [2 slots][n ranks][stride], flags in an entry's last PEER_FLAGS
    u64* flags[PEER_MAX];   // each rank's flag words: flags[i][j] is rank j's last round at rank i
    i64 stride;             // floats per entry
    int n, me;
};
// peerreduce.go lays this out by hand.
typedef char peer_group_layout_check[sizeof(PeerGroup) == 144 ? 1 : -1];

__device__ __forceinline__ u64 load_acquire_sys(const u64* p) {
    u64 v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_release_sys(u64* p, u64 v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// peer_wait spins until every other rank has written at least v to this
// rank; false after the timeout (recorded in err).
__device__ bool peer_wait(const PeerGroup& g, u64 v, int* err) {
    u64 t0 = global_ns();
    for (int j = 0; j < g.n; j++) {
        if (j == g.me) continue;
        while (load_acquire_sys(&g.flags[g.me][j]) < v) {
            if (global_ns() - t0 > PEER_TIMEOUT_NS) {
                report_error(err, ERR_PEER_TIMEOUT, j, (int)(v & 0x7fffffff), g.me);
                return false;
            }
        }
    }
    return true;
}

// peer_sum runs round ctl[0] for buf[:n] (16-byte aligned, as are the
// areas and the stride; n <= stride - PEER_FLAGS) and flag[:nflag] (nflag
// <= PEER_FLAGS; flag may be null when nflag is 0). Thread t handles the
// same float4s (and tail floats) in both phases, so its reads of buf
// precede its own writes only; thread 0 of block 0 handles the flags.
// ctl = {round, blocks that pushed, blocks that summed}.
extern "C" __global__ void peer_sum(PeerGroup g, float* buf, i64 n, int* flag, int nflag, u32* ctl, int* err) {
    __shared__ bool ok;
    u32 r = ctl[0];
    i64 slot = (i64)(r & 1) * g.n * g.stride;
    i64 flagAt = g.stride - PEER_FLAGS;  // an entry's flag words
    if (blockIdx.x == 0 && threadIdx.x == 0)
        for (int j = 0; j < g.n; j++)
            if (j != g.me)
                for (int i = 0; i < nflag; i++) ((int*)(g.recv[j] + slot + g.me * g.stride + flagAt))[i] = flag[i];
    i64 n4 = n / 4, tail = n4 * 4 + gtid();
    const float4* b4 = (const float4*)buf;
    for (i64 k = gtid(); k < n4; k += gthreads()) {
        float4 v = b4[k];
        for (int j = 0; j < g.n; j++)
            if (j != g.me) ((float4*)(g.recv[j] + slot + g.me * g.stride))[k] = v;
    }
    if (tail < n)
        for (int j = 0; j < g.n; j++)
            if (j != g.me) g.recv[j][slot + g.me * g.stride + tail] = buf[tail];
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        if (atomicAdd(&ctl[1], 1u) == gridDim.x - 1) {
            ctl[1] = 0;
            __threadfence_system();
            for (int j = 0; j < g.n; j++)
                if (j != g.me) store_release_sys(&g.flags[j][g.me], (u64)r + 1);
        }
        ok = peer_wait(g, (u64)r + 1, err);
    }
    __syncthreads();
    if (ok) {
        const float* in = g.recv[g.me] + slot;
        if (blockIdx.x == 0 && threadIdx.x == 0)
            for (int i = 0; i < nflag; i++) {
                int m = flag[i];
                for (int j = 0; j < g.n; j++)
                    if (j != g.me) m = max(m, ((const int*)(in + j * g.stride + flagAt))[i]);
                flag[i] = m;
            }
        for (i64 k = gtid(); k < n4; k += gthreads()) {
            float4 s = g.me == 0 ? b4[k] : ((const float4*)in)[k];
            for (int j = 1; j < g.n; j++) {
                float4 v = j == g.me ? b4[k] : ((const float4*)(in + j * g.stride))[k];
                s.x += v.x;
                s.y += v.y;
                s.z += v.z;
                s.w += v.w;
            }
            ((float4*)buf)[k] = s;
        }
        if (tail < n) {
            float s = g.me == 0 ? buf[tail] : in[tail];
            for (int j = 1; j < g.n; j++) s += j == g.me ? buf[tail] : in[j * g.stride + tail];
            buf[tail] = s;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(&ctl[2], 1u) == gridDim.x - 1) {
        ctl[2] = 0;
        ctl[0] = r + 1;
    }
}
