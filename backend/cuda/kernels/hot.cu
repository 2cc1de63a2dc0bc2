// hot.cu: the hybrid mode's hot rows. replace_rows overwrites row i < n of
// out when s = slot[ids[i]] >= 0: with row base + s of table (host memory
// read in place over PCIe, or device memory), or with zeros when table is
// null (the backward pass: the CPU's rows are constants). One thread per
// element; other rows are not touched.
#include "common.cuh"

// hot_slot is the slot of row i's vertex (-1: not hot); an id outside the
// slot table is reported once per row (by the thread of its column 0).
__device__ __forceinline__ int hot_slot(const int* slot, i64 slotLen, const int* ids, i64 i, int c, int* err) {
    int v = ids[i];
    if (v < 0 || v >= slotLen) {
        if (c == 0) report_error(err, ERR_HOT_ROW, (int)i, v, (int)(slotLen > INT32_MAX_ ? INT32_MAX_ : slotLen));
        return -1;
    }
    return slot[v];
}

// report_row reports that row i's vertex has a slot outside a table of
// rows rows.
__device__ __forceinline__ void report_row(const int* ids, i64 i, int c, i64 rows, int* err) {
    if (c == 0) report_error(err, ERR_HOT_ROW, (int)i, ids[i], (int)(rows > INT32_MAX_ ? INT32_MAX_ : rows));
}

// hot_row is the table row (base + slot) of row i's vertex, or -1 when it
// is not hot or (reported) its row lies outside a table of rows rows.
__device__ __forceinline__ i64 hot_row(const int* slot, i64 slotLen, const int* ids, i64 i, int c, i64 base,
                                       i64 rows, int* err) {
    int s = hot_slot(slot, slotLen, ids, i, c, err);
    if (s < 0) return -1;
    i64 r = base + s;
    if (r < 0 || r >= rows) {
        report_row(ids, i, c, rows, err);
        return -1;
    }
    return r;
}

extern "C" __global__ void replace_rows(const int* slot, i64 slotLen, const float* table, i64 tableRows,
                                        const int* baseP, int dim, const int* ids, const int* nP, int cap,
                                        float* out, int* err) {
    int n = live_count(nP, cap);
    i64 base = table ? (i64)*baseP : 0;
    i64 total = (i64)n * dim;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        i64 i = t / dim;
        int c = (int)(t - i * dim);
        if (!table) {
            if (hot_slot(slot, slotLen, ids, i, c, err) >= 0) out[t] = 0.0f;
            continue;
        }
        i64 r = hot_row(slot, slotLen, ids, i, c, base, tableRows, err);
        if (r >= 0) out[t] = table[r * dim + c];
    }
}

// add_rows: out[i, off + c] += table[base + slot[ids[i]], c] for the live
// rows of hot vertices (out's rows are ld wide).
extern "C" __global__ void add_rows(const int* slot, i64 slotLen, const float* table, i64 tableRows,
                                    const int* baseP, int dim, const int* ids, const int* nP, int cap,
                                    float* out, int ld, int off, int* err) {
    int n = live_count(nP, cap);
    i64 base = (i64)*baseP;
    i64 total = (i64)n * dim;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        i64 i = t / dim;
        int c = (int)(t - i * dim);
        i64 r = hot_row(slot, slotLen, ids, i, c, base, tableRows, err);
        if (r < 0) continue;
        float* o = out + i * ld + off + c;
        *o = fmaf(1.0f, table[r * dim + c], *o);
    }
}

// scatter_add_rows: acc[slot[ids[i]], :] += src[i, :] for the live rows of
// hot vertices (ids does not repeat a vertex, so no two threads add to one
// element), unless the flag unless (optional) is set.
extern "C" __global__ void scatter_add_rows(const int* slot, i64 slotLen, float* acc, i64 accRows, int dim,
                                            const int* ids, const int* nP, int cap, const float* src,
                                            const int* unless, int* err) {
    if (flag_set(unless)) return;
    int n = live_count(nP, cap);
    i64 total = (i64)n * dim;
    for (i64 t = gtid(); t < total; t += gthreads()) {
        i64 i = t / dim;
        int c = (int)(t - i * dim);
        i64 s = hot_row(slot, slotLen, ids, i, c, 0, accRows, err);
        if (s < 0) continue;
        float* a = acc + s * dim + c;
        *a = fmaf(1.0f, src[t], *a);
    }
}

// axpy: y[i] += alpha * x[i].
extern "C" __global__ void axpy(float alpha, const float* x, float* y, i64 n) {
    for (i64 i = gtid(); i < n; i += gthreads()) y[i] = fmaf(alpha, x[i], y[i]);
}
