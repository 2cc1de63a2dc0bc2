// What reading random rows of host memory can reach on this machine: the
// ceilings of the hybrid mode's host tier. A table of TABLE_GIB (4) GiB of
// pinned host memory mapped into the device (papers-sim's 16.8 M bfloat16
// rows of 256 bytes are 4.3 GB), allocated four ways:
//   hostalloc  cudaHostAlloc (what the tiered store used up to now);
//   thp        2 MiB transparent huge pages, then cudaHostRegister;
//   vmm        cuMemCreate of host memory, mapped with cuMemMap;
//   pool       a pinned memory pool of host memory (cudaMallocFromPoolAsync);
// is read at random rows by a kernel in place (zero-copy: 16 bytes a lane,
// U loads a thread issued before their stores), each launch with fresh ids
// as a training step's misses are, or with the same ids every launch, and
// fresh ids confined to the table's first 8 MiB-2 GiB, to a fixed set of
// pages, or partly to the first 512 MiB or 1 GiB (how far locality
// helps: the tiered store's band); beside the link's two ceilings (a
// pinned copy, an in-order read), the copy engines one copy a row, and the
// host's cores copying the rows into pinned staging; and the rows read by
// a few blocks, alone and beside a device copy on a stream of higher
// priority (can a narrow gather hide behind a step's work?).
// KINDS picks allocations by name, PARTS the figures (ceilings random
// locality grids overlap copies; all by default). Build and run on the device machine:
//   scripts/measure zero-copy
#include <algorithm>
#include <chrono>
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/mman.h>

typedef unsigned long long u64;

#define CK(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)
#define DK(x) (drv(#x, (x)))

static bool drv(const char* what, CUresult r) {
    if (r == CUDA_SUCCESS) return true;
    const char* s = "?";
    cuGetErrorString(r, &s);
    printf("  %s: %s\n", what, s);
    return false;
}

template <int U>
__global__ void gather(const uint4* __restrict__ host, const int* __restrict__ ids, int n, int words, uint4* out) {
    u64 total = (u64)n * words, stride = (u64)gridDim.x * blockDim.x;
    for (u64 base = (u64)blockIdx.x * blockDim.x + threadIdx.x; base < total; base += stride * U) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            u64 i = base + u * stride;
            if (i < total) v[u] = host[(u64)ids[i / words] * words + i % words];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            u64 i = base + u * stride;
            if (i < total) out[i] = v[u];
        }
    }
}

__global__ void copyWords(const uint4* __restrict__ src, uint4* dst, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) dst[i] = src[i];
}

__global__ void spin(float* out, int iters) {
    float x = threadIdx.x, y = blockIdx.x;
    for (int i = 0; i < iters; i++) x = fmaf(x, 0.999f, y), y = fmaf(y, 0.999f, x);
    if (x == 1234.5f) out[0] = y;
}

static const int REPS = 20;

// Table is the host table: dev, the address kernels read; cpu, the host's
// (null when the host cannot reach it).
struct Table {
    const char* kind;
    char* dev = nullptr;
    char* cpu = nullptr;
    size_t bytes = 0;
    void* raw = nullptr;
    CUmemGenericAllocationHandle h = 0;
    cudaMemPool_t pool = nullptr;
};

static sigjmp_buf probeJump;
static void probeFault(int) { siglongjmp(probeJump, 1); }

// cpu_reaches tells whether the host can write p (a fault is caught).
static bool cpu_reaches(char* p) {
    struct sigaction sa = {}, old;
    sa.sa_handler = probeFault;
    sigaction(SIGSEGV, &sa, &old);
    sigaction(SIGBUS, &sa, nullptr);
    bool ok = false;
    if (sigsetjmp(probeJump, 1) == 0) {
        *(volatile char*)p = 1;
        ok = true;
    }
    sigaction(SIGSEGV, &old, nullptr);
    signal(SIGBUS, SIG_DFL);
    return ok;
}

static bool alloc_table(Table& t, const char* kind, size_t bytes, cudaStream_t s) {
    t = Table();
    t.kind = kind, t.bytes = bytes;
    std::string k = kind;
    if (k == "hostalloc") {
        CK(cudaHostAlloc((void**)&t.cpu, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
        CK(cudaHostGetDevicePointer((void**)&t.dev, t.cpu, 0));
    } else if (k == "thp") {
        size_t huge = 2 << 20;
        t.raw = mmap(nullptr, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (t.raw == MAP_FAILED) return printf("  mmap failed\n"), false;
        t.cpu = (char*)(((uintptr_t)t.raw + huge - 1) & ~(uintptr_t)(huge - 1));
        madvise(t.cpu, bytes, MADV_HUGEPAGE);
        memset(t.cpu, 1, bytes);
        CK(cudaHostRegister(t.cpu, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
        CK(cudaHostGetDevicePointer((void**)&t.dev, t.cpu, 0));
    } else if (k == "vmm") {
        CUmemAllocationProp p = {};
        p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.location.type = CU_MEM_LOCATION_TYPE_HOST;
        size_t g = 0, gr = 0;
        if (!DK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM))) return false;
        DK(cuMemGetAllocationGranularity(&gr, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
        printf("  granularity %zu, recommended %zu\n", g, gr);
        bytes = (bytes + gr - 1) / gr * gr;
        t.bytes = bytes;
        CUdeviceptr va;
        if (!DK(cuMemCreate(&t.h, bytes, &p, 0))) return false;
        if (!DK(cuMemAddressReserve(&va, bytes, gr, 0, 0))) return false;
        if (!DK(cuMemMap(va, bytes, 0, t.h, 0))) return false;
        CUmemAccessDesc d = {};
        d.location.type = CU_MEM_LOCATION_TYPE_DEVICE, d.location.id = 0;
        d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if (!DK(cuMemSetAccess(va, bytes, &d, 1))) return false;
        t.dev = (char*)va;
        CUmemAccessDesc hd = {};
        hd.location.type = CU_MEM_LOCATION_TYPE_HOST;
        hd.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        bool hostAccess = DK(cuMemSetAccess(va, bytes, &hd, 1));
        if (hostAccess && cpu_reaches(t.dev)) t.cpu = t.dev;
        printf("  host access: %s\n", t.cpu ? "yes" : "no");
        CK(cudaMemsetAsync(t.dev, 1, bytes, s));
    } else if (k == "pool") {
        cudaMemPoolProps pp = {};
        pp.allocType = cudaMemAllocationTypePinned;
        pp.location.type = cudaMemLocationTypeHostNuma;
        pp.location.id = 0;
        cudaError_t e = cudaMemPoolCreate(&t.pool, &pp);
        if (e != cudaSuccess) return printf("  cudaMemPoolCreate: %s\n", cudaGetErrorString(e)), cudaGetLastError(), false;
        cudaMemAccessDesc d = {};
        d.location.type = cudaMemLocationTypeDevice, d.location.id = 0;
        d.flags = cudaMemAccessFlagsProtReadWrite;
        CK(cudaMemPoolSetAccess(t.pool, &d, 1));
        CK(cudaMallocFromPoolAsync((void**)&t.dev, bytes, t.pool, s));
        CK(cudaStreamSynchronize(s));
        if (cpu_reaches(t.dev)) t.cpu = t.dev;
        printf("  host access: %s\n", t.cpu ? "yes" : "no");
        CK(cudaMemsetAsync(t.dev, 1, bytes, s));
    }
    CK(cudaStreamSynchronize(s));
    return true;
}

static void free_table(Table& t, cudaStream_t s) {
    std::string k = t.kind;
    if (k == "hostalloc") CK(cudaFreeHost(t.cpu));
    if (k == "thp") {
        CK(cudaHostUnregister(t.cpu));
        munmap(t.raw, t.bytes + (2 << 20));
    }
    if (k == "vmm") {
        DK(cuMemUnmap((CUdeviceptr)t.dev, t.bytes));
        DK(cuMemRelease(t.h));
        DK(cuMemAddressFree((CUdeviceptr)t.dev, t.bytes));
    }
    if (k == "pool") {
        CK(cudaFreeAsync(t.dev, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaMemPoolDestroy(t.pool));
    }
}

struct Bench {
    cudaStream_t s;
    int sms;
    cudaEvent_t a, b;
    int* ids;    // device ids: REPS sets of up to maxN
    uint4* out;  // device rows
    char* stage; // pinned staging
    int maxN;

    float elapsed() {
        float ms;
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    }

    void report(const char* kind, const char* what, int rowBytes, int n, float ms) {
        double s_ = ms / 1e3 / REPS;
        printf("  %-9s %-34s row %4d B, %6d rows: %8.1f us, %6.1f M rows/s, %5.1f GB/s\n", kind, what, rowBytes, n,
               s_ * 1e6, n / s_ / 1e6, (double)n * rowBytes / s_ / 1e9);
    }

    // set_ids writes REPS sets of n ids below rows (the same set REPS
    // times when same), or n in order.
    void set_ids(int n, long long rows, bool same, bool inOrder) {
        std::mt19937_64 r(7);
        std::vector<int> v((size_t)n * REPS);
        for (size_t i = 0; i < v.size(); i++)
            v[i] = inOrder ? (int)(i % n) : same && i >= (size_t)n ? v[i % n] : (int)(r() % (u64)rows);
        CK(cudaMemcpy(ids, v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice));
    }

    // locality: fresh random 256-byte rows from the table's first mb MiB,
    // and from a fixed set of n 4 KiB pages (a random row of each page
    // every launch).
    void locality(const Table& t, int n) {
        const int rowBytes = 256, perPage = 4096 / rowBytes;
        std::mt19937_64 r(11);
        std::vector<int> v((size_t)n * REPS);
        for (int mb : {8, 128, 512, 1024, 1536, 2048, 0}) {
            u64 rows = mb ? (u64)mb << 20 : t.bytes;
            rows /= rowBytes;
            for (auto& x : v) x = (int)(r() % rows);
            CK(cudaMemcpy(ids, v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice));
            std::string w = "fresh ids in the first " + (mb ? std::to_string(mb) + " MiB" : std::string("all"));
            report(t.kind, w.c_str(), rowBytes, n, kernel<1>(t, rowBytes, n, 8 * sms));
        }
        u64 pages = t.bytes / 4096;
        std::vector<int> page(n);
        for (auto& x : page) x = (int)(r() % pages);
        for (size_t i = 0; i < v.size(); i++) v[i] = page[i % n] * perPage + (int)(r() % perPage);
        CK(cudaMemcpy(ids, v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice));
        report(t.kind, "the same pages, fresh rows in them", rowBytes, n, kernel<1>(t, rowBytes, n, 8 * sms));
        // A share of each launch's rows from the first mb MiB, the rest
        // from anywhere: does the region stay fast among other reads?
        for (int mb : {512, 1024})
            for (int pct : {50, 70, 90}) {
                u64 near = ((u64)mb << 20) / rowBytes, all = t.bytes / rowBytes;
                for (auto& x : v) x = (int)(r() % 100 < (u64)pct ? r() % near : r() % all);
                CK(cudaMemcpy(ids, v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice));
                std::string w = std::to_string(pct) + "% in the first " + std::to_string(mb) + " MiB, the rest anywhere";
                report(t.kind, w.c_str(), rowBytes, n, kernel<1>(t, rowBytes, n, 8 * sms));
            }
    }

    template <int U>
    float kernel(const Table& t, int rowBytes, int n, int blocks) {
        int words = rowBytes / 16;
        u64 total = (u64)n * words;
        int full = (int)((total + 256 * U - 1) / (256 * U));
        int g = blocks > 0 ? std::min(blocks, full) : full;
        const uint4* h = (const uint4*)t.dev;
        gather<U><<<g, 256, 0, s>>>(h, ids, n, words, out);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(s));
        CK(cudaEventRecord(a, s));
        for (int i = 0; i < REPS; i++) gather<U><<<g, 256, 0, s>>>(h, ids + (size_t)i * n, n, words, out);
        CK(cudaEventRecord(b, s));
        return elapsed();
    }

    void random_rows(const Table& t, int rowBytes, int n, bool same) {
        set_ids(n, (long long)(t.bytes / rowBytes), same, false);
        const char* ids_ = same ? "same ids" : "fresh ids";
        std::string w = std::string("in place, ") + ids_ + ", grid, U=4";
        report(t.kind, w.c_str(), rowBytes, n, kernel<4>(t, rowBytes, n, 0));
        w = std::string("in place, ") + ids_ + ", 8 blocks/SM, U=1";
        report(t.kind, w.c_str(), rowBytes, n, kernel<1>(t, rowBytes, n, 8 * sms));
    }

    // grids: fresh random 256-byte rows read by a grid of a few blocks
    // (U=4): how many of the device's multiprocessors the host tier's
    // reads need to reach the rate of a whole grid.
    void grids(const Table& t, int n) {
        set_ids(n, (long long)(t.bytes / 256), false, false);
        for (int g : {4, 8, 16, 33, 66, 132, 264, 0}) {
            std::string w = "fresh ids, " + (g ? std::to_string(g) + " blocks" : std::string("full grid")) + ", U=4";
            report(t.kind, w.c_str(), 256, n, kernel<4>(t, 256, n, g));
        }
    }

    // overlap: the rows of grids read beside device work on a stream of
    // higher priority: a copy of 512 MiB (memory-bound, every thread slot
    // taken), the same copy from half the slots, a copy that stays in L2,
    // and arithmetic: does a narrow gather hide behind a step's work, and
    // what does it share with it?
    void overlap(const Table& t, int n) {
        set_ids(n, (long long)(t.bytes / 256), false, false);
        size_t words = (size_t)(512 << 20) / 16;
        uint4 *src, *dst;
        CK(cudaMalloc(&src, words * 16));
        CK(cudaMalloc(&dst, words * 16));
        CK(cudaMemset(src, 0, words * 16));
        int lo, hi;
        CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
        cudaStream_t main_, side;
        CK(cudaStreamCreateWithPriority(&main_, cudaStreamNonBlocking, hi));
        CK(cudaStreamCreateWithPriority(&side, cudaStreamNonBlocking, lo));
        cudaEvent_t fork, sideEnd;
        CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&sideEnd, cudaEventDisableTiming));
        const uint4* h = (const uint4*)t.dev;
        int words256 = 256 / 16;
        struct Work {
            const char* name;
            int blocks;
            size_t words;
            int reps;
            bool math;
        };
        const Work works[] = {{"a copy of 512 MiB, every slot", sms * 8, words, 1, false},
                              {"a copy of 512 MiB, half the slots", sms * 4, words, 1, false},
                              {"a copy of 16 MiB in L2, 16 times", sms * 8, (size_t)(16 << 20) / 16, 16, false},
                              {"arithmetic, every slot", sms * 8, 0, 0, true}};
        auto read = [&](int i, int g) { gather<4><<<g, 256, 0, side>>>(h, ids + (size_t)i * n, n, words256, out); };
        // each figure: REPS rounds of (fork, read on side, work on main,
        // join), timed from the first fork to the last join.
        auto round = [&](const Work& w, int g, bool withWork, bool withRead) {
            CK(cudaStreamSynchronize(main_));
            CK(cudaEventRecord(a, main_));
            for (int i = 0; i < REPS; i++) {
                CK(cudaEventRecord(fork, main_));
                CK(cudaStreamWaitEvent(side, fork, 0));
                if (withRead) read(i, g);
                if (withWork && w.math) spin<<<w.blocks, 256, 0, main_>>>((float*)dst, 20000);
                for (int r = 0; withWork && r < w.reps; r++) copyWords<<<w.blocks, 256, 0, main_>>>(src, dst, w.words);
                CK(cudaEventRecord(sideEnd, side));
                CK(cudaStreamWaitEvent(main_, sideEnd, 0));
            }
            CK(cudaEventRecord(b, main_));
            return elapsed() * 1e3f / REPS;
        };
        for (const Work& w : works) {
            round(w, sms, true, true);
            float alone = round(w, 0, true, false);
            printf("  %-9s %s alone: %8.1f us\n", t.kind, w.name, alone);
            for (int g : {8, 33, 132}) {
                float r = round(w, g, false, true), both = round(w, g, true, true);
                printf("  %-9s   %4d blocks: rows alone %8.1f us (%5.1f M rows/s); beside it %8.1f us (sum %8.1f, max %8.1f)\n",
                       t.kind, g, r, n / r, both, alone + r, std::max(alone, r));
            }
        }
        CK(cudaFree(src));
        CK(cudaFree(dst));
        CK(cudaStreamDestroy(main_));
        CK(cudaStreamDestroy(side));
    }

    void ceilings(const Table& t) {
        size_t n = 256 << 20;
        CK(cudaEventRecord(a, s));
        for (int i = 0; i < REPS; i++) CK(cudaMemcpyAsync(out, t.dev, n, cudaMemcpyDefault, s));
        CK(cudaEventRecord(b, s));
        report(t.kind, "ceiling: a copy of 256 MiB", 256, (int)(n / 256), elapsed());
        set_ids((int)(n / 256), 0, false, true);
        report(t.kind, "ceiling: in place, in order", 256, (int)(n / 256), kernel<4>(t, 256, (int)(n / 256), 0));
    }

    void batch_copy(const Table& t, int rowBytes, int n) {
        std::mt19937_64 r(3);
        long long rows = (long long)(t.bytes / rowBytes);
        std::vector<CUdeviceptr> dst(n), src(n);
        std::vector<size_t> size(n, rowBytes);
        for (int i = 0; i < n; i++) {
            dst[i] = (CUdeviceptr)((char*)out + (size_t)i * rowBytes);
            src[i] = (CUdeviceptr)(t.cpu + (size_t)(r() % (u64)rows) * rowBytes);
        }
        CUmemcpyAttributes attr;
        memset(&attr, 0, sizeof attr);
        attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        attr.srcLocHint.type = CU_MEM_LOCATION_TYPE_HOST;
        attr.dstLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
        size_t idx = 0;
        auto one = [&]() {
#if CUDA_VERSION >= 13000
            return DK(cuMemcpyBatchAsync(dst.data(), src.data(), size.data(), n, &attr, &idx, 1, (CUstream)s));
#else
            size_t fail;
            return DK(cuMemcpyBatchAsync(dst.data(), src.data(), size.data(), n, &attr, &idx, 1, &fail, (CUstream)s));
#endif
        };
        if (!one()) return;
        CK(cudaStreamSynchronize(s));
        CK(cudaEventRecord(a, s));
        for (int i = 0; i < REPS; i++) one();
        CK(cudaEventRecord(b, s));
        report(t.kind, "copy engines, a copy a row", rowBytes, n, elapsed());
    }

    // host_stage: the host's cores copy the rows into pinned staging, then
    // one copy to the device; wall time of both.
    void host_stage(const Table& t, int rowBytes, int n) {
        std::mt19937_64 r(5);
        long long rows = (long long)(t.bytes / rowBytes);
        std::vector<int> id(n);
        for (int i = 0; i < n; i++) id[i] = (int)(r() % (u64)rows);
        int threads = std::max(1u, std::thread::hardware_concurrency());
        auto once = [&]() {
            std::vector<std::thread> th;
            for (int k = 0; k < threads; k++)
                th.emplace_back([&, k]() {
                    for (int i = k; i < n; i += threads)
                        memcpy(stage + (size_t)i * rowBytes, t.cpu + (size_t)id[i] * rowBytes, rowBytes);
                });
            for (auto& x : th) x.join();
            CK(cudaMemcpyAsync(out, stage, (size_t)n * rowBytes, cudaMemcpyHostToDevice, s));
            CK(cudaStreamSynchronize(s));
        };
        once();
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < REPS; i++) once();
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::string w = "host cores (" + std::to_string(threads) + ") into staging, a copy";
        report(t.kind, w.c_str(), rowBytes, n, (float)ms);
    }
};

// part tells whether PARTS (a list of names; all when unset) picks name.
static bool part(const char* name) {
    const char* e = getenv("PARTS");
    if (!e) return true;
    std::string ps = std::string(" ") + e + " ";
    return ps.find(std::string(" ") + name + " ") != std::string::npos;
}

int main() {
    double gib = getenv("TABLE_GIB") ? atof(getenv("TABLE_GIB")) : 4.0;
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("%s, %d SMs; table %.1f GiB; %d launches a figure\n", p.name, p.multiProcessorCount, gib, REPS);
    Bench b;
    b.sms = p.multiProcessorCount;
    b.maxN = 262144;
    CK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&b.a));
    CK(cudaEventCreate(&b.b));
    CK(cudaMalloc(&b.ids, (size_t)(1 << 20) * REPS * sizeof(int)));
    CK(cudaMalloc(&b.out, 256 << 20));
    CK(cudaMallocHost(&b.stage, (size_t)b.maxN * 256));
    size_t bytes = (size_t)(gib * (1 << 30));
    std::vector<std::string> kinds = {"hostalloc", "thp", "vmm", "pool"};
    if (const char* e = getenv("KINDS")) {
        kinds.clear();
        std::string ks = e;
        for (size_t i = 0; i <= ks.size();) {
            size_t j = ks.find(' ', i);
            if (j == std::string::npos) j = ks.size();
            if (j > i) kinds.push_back(ks.substr(i, j - i));
            i = j + 1;
        }
    }
    for (const std::string& ks : kinds) {
        const char* k = ks.c_str();
        Table t;
        printf("table: %s\n", k);
        if (!alloc_table(t, k, bytes, b.s)) continue;
        if (part("ceilings")) b.ceilings(t);
        if (part("random")) {
            for (int n : {28500, 262144}) {
                b.random_rows(t, 256, n, false);
                b.random_rows(t, 256, n, true);
            }
            for (int r : {128, 512, 2560}) b.random_rows(t, r, 28500, false);
        }
        if (part("locality")) b.locality(t, 28500);
        if (part("grids")) b.grids(t, 40000);
        if (part("overlap")) b.overlap(t, 40000);
        if (t.cpu && part("copies")) {
            b.batch_copy(t, 256, 28500);
            b.host_stage(t, 256, 28500);
        }
        free_table(t, b.s);
        fflush(stdout);
    }
    return 0;
}
