// scan.cu: exclusive prefix sum of an int32 array (scan.cuh), in one launch.
// len = live_count(lenP, lenCap) + lenAdd (lenP may be null: lenCap); in and
// out may be the same array. The total plus the live count at addP (when not
// null) goes to *total (when not null).
#include "common.cuh"
#include "scan.cuh"

struct ArrayItems {
    const int* in;
    __device__ __forceinline__ int key(int i) const { return in[i]; }
    __device__ __forceinline__ int value(int, int k) const { return k; }
};

extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
scan_array(const int* in, int* out, const int* lenP, int lenCap, int lenAdd, int* total, const int* addP, int addCap,
           u64* status, int* ctr) {
    ArrayItems p = {in};
    ScanState st = {status, ctr};
    scan_tiles(p, live_count(lenP, lenCap) + lenAdd, out, total, addP, addCap, st);
}
