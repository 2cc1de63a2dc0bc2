// gather.cu: row gather out[i, :] = table[ids[i], :] for live rows i. Rows are
// moved as 16-byte words (gather_rows4, when the row width and both base
// addresses allow it) or 4-byte words (gather_rows1); the element type does
// not matter (float32 and int32 alike). Each thread moves up to four words
// with all loads issued before the stores. An id outside the table is
// reported and its row left unwritten.
#include "common.cuh"

template <typename W, typename I>
__device__ __forceinline__ void gather_body(const W* table, i64 tableRows, I words, const int* ids, I total, W* out,
                                            int* err) {
    I stride = (I)gthreads();
    for (I t0 = (I)gtid(); t0 < total; t0 += 4 * stride) {
        W v[4];
        bool ok[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            I t = t0 + (I)u * stride;
            ok[u] = false;
            if (t < total) {
                I i = t / words;
                I c = t - i * words;
                int id = ids[i];
                if (id >= 0 && id < tableRows) {
                    v[u] = table[(u64)id * words + c];
                    ok[u] = true;
                } else if (c == 0) {
                    report_error(err, ERR_GATHER_ID, (int)i, id, (int)(tableRows > INT32_MAX_ ? INT32_MAX_ : tableRows));
                }
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (ok[u]) out[t0 + (I)u * stride] = v[u];
    }
}

template <typename W>
__device__ __forceinline__ void gather_rows(const W* table, i64 tableRows, int words, const int* ids, const int* nP,
                                            int cap, W* out, int* err) {
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    if (total + 4 * (u64)gthreads() < 0xffffffffull)
        gather_body<W, u32>(table, tableRows, (u32)words, ids, (u32)total, out, err);
    else
        gather_body<W, u64>(table, tableRows, (u64)words, ids, total, out, err);
}

extern "C" __global__ void gather_rows4(const uint4* table, i64 tableRows, int words, const int* ids, const int* nP,
                                        int cap, uint4* out, int* err) {
    gather_rows<uint4>(table, tableRows, words, ids, nP, cap, out, err);
}

extern "C" __global__ void gather_rows1(const u32* table, i64 tableRows, int words, const int* ids, const int* nP,
                                        int cap, u32* out, int* err) {
    gather_rows<u32>(table, tableRows, words, ids, nP, cap, out, err);
}

// bfloat16 tables widen to float32 rows: gather_bf16x4 moves four values a
// thread (8-byte loads, 16-byte stores) when the width allows, gather_bf16x1
// one. A value's float32 bits are its bfloat16 bits shifted up 16.
extern "C" __global__ void gather_bf16x4(const uint2* table, i64 tableRows, int words, const int* ids, const int* nP,
                                         int cap, float4* out, int* err) {
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    for (u64 t = gtid(); t < total; t += gthreads()) {
        u64 i = t / (u64)words, c = t - i * (u64)words;
        int id = ids[i];
        if (id < 0 || id >= tableRows) {
            if (c == 0) report_error(err, ERR_GATHER_ID, (int)i, id, (int)(tableRows > INT32_MAX_ ? INT32_MAX_ : tableRows));
            continue;
        }
        uint2 w = table[(u64)id * words + c];
        out[t] = bf16x4_to_float4(w);
    }
}

extern "C" __global__ void gather_bf16x1(const unsigned short* table, i64 tableRows, int words, const int* ids,
                                         const int* nP, int cap, float* out, int* err) {
    u64 total = (u64)live_count(nP, cap) * (u64)words;
    for (u64 t = gtid(); t < total; t += gthreads()) {
        u64 i = t / (u64)words, c = t - i * (u64)words;
        int id = ids[i];
        if (id < 0 || id >= tableRows) {
            if (c == 0) report_error(err, ERR_GATHER_ID, (int)i, id, (int)(tableRows > INT32_MAX_ ? INT32_MAX_ : tableRows));
            continue;
        }
        out[t] = bf16_to_float(table[(u64)id * words + c]);
    }
}
