// gather.cu: row gather out[i, :] = table[ids[i], :] for live rows i
// (rows.cuh). Rows are moved in the widest words that the row's bytes and
// both base addresses allow: 16 bytes (gather_rows4), 8 (gather_rows2), 4
// (gather_rows1) or 2 (gather_rows_h, bfloat16);
// the element type does not matter (float32, int32, bfloat16 pairs). Each
// thread moves up to four words with all loads issued before the stores. An id
// outside the table is reported and its row left unwritten.
#include "rows.cuh"

// TableRows: vertex id's row is row id of the table.
template <typename W>
struct TableRows {
    const W* table;
    u64 words;
    __device__ __forceinline__ const W* row(int id, int& k) const { return table + (u64)id * words; }
    __device__ __forceinline__ void count(unsigned int* my, int id, int k) const {}
    __device__ __forceinline__ void took(u64 i, u64 c, int k, W v) const {}
};

template <typename W>
__device__ __forceinline__ void gather_rows(const W* table, i64 tableRows, int words, const int* ids, const int* nP,
                                            int cap, W* out, int* err) {
    TableRows<W> src = {table, (u64)words};
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    if (total + 4 * (u64)gthreads() < 0xffffffffull)
        gather_rows_from<4, 0, u32, W, W>(src, tableRows, (u32)words, ids, (u32)total, out, 0, err);
    else
        gather_rows_from<4, 0, u64, W, W>(src, tableRows, (u64)words, ids, total, out, 0, err);
}

extern "C" __global__ void gather_rows4(const uint4* table, i64 tableRows, int words, const int* ids, const int* nP,
                                        int cap, uint4* out, int* err) {
    gather_rows<uint4>(table, tableRows, words, ids, nP, cap, out, err);
}

extern "C" __global__ void gather_rows1(const u32* table, i64 tableRows, int words, const int* ids, const int* nP,
                                        int cap, u32* out, int* err) {
    gather_rows<u32>(table, tableRows, words, ids, nP, cap, out, err);
}

extern "C" __global__ void gather_rows2(const uint2* table, i64 tableRows, int words, const int* ids, const int* nP,
                                        int cap, uint2* out, int* err) {
    gather_rows<uint2>(table, tableRows, words, ids, nP, cap, out, err);
}

// gather_rows_h copies bfloat16 rows as they are, one value a word (a
// row of an odd width, or at an address of 2-byte alignment).
extern "C" __global__ void gather_rows_h(const unsigned short* table, i64 tableRows, int words, const int* ids,
                                         const int* nP, int cap, unsigned short* out, int* err) {
    gather_rows<unsigned short>(table, tableRows, words, ids, nP, cap, out, err);
}

// bfloat16 tables widen to float32 rows: gather_bf16x4 moves four values a
// thread (8-byte loads, 16-byte stores) when the width allows, gather_bf16x1
// one; one word a thread per pass.
template <typename W, typename O>
__device__ __forceinline__ void gather_bf16(const W* table, i64 tableRows, int words, const int* ids, const int* nP,
                                            int cap, O* out, int* err) {
    TableRows<W> src = {table, (u64)words};
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    gather_rows_from<1, 0, u64, W, O>(src, tableRows, (u64)words, ids, total, out, 0, err);
}

extern "C" __global__ void gather_bf16x4(const uint2* table, i64 tableRows, int words, const int* ids, const int* nP,
                                         int cap, float4* out, int* err) {
    gather_bf16<uint2, float4>(table, tableRows, words, ids, nP, cap, out, err);
}

extern "C" __global__ void gather_bf16x1(const unsigned short* table, i64 tableRows, int words, const int* ids,
                                         const int* nP, int cap, float* out, int* err) {
    gather_bf16<unsigned short, float>(table, tableRows, words, ids, nP, cap, out, err);
}
