// adam.cu: Adam as torch.optim.Adam with L2 weight decay added to the
// gradient, the step t read from device memory (1-based):
//   g = grad + wd*param; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g
//   param -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
// The bias corrections are computed in float64 like the CPU backend. While
// the optional flag *skip is non-zero nothing changes (and t is not checked:
// a skipped step never incremented it).
#include "common.cuh"

extern "C" __global__ void adam(float* p, const float* grad, float* m, float* v, i64 n, const int* tP, float lr,
                                float b1, float b2, float eps, float wd, const int* skip, int* err) {
    __shared__ float lrc, rbc2;
    __shared__ int ok;
    if (threadIdx.x == 0) {
        int t = *tP;
        ok = t >= 1;
        if (skip != 0 && *skip != 0) {
            ok = 0;
        } else if (!ok) {
            if (blockIdx.x == 0) report_error(err, ERR_ADAM_STEP, t, 0, 0);
        } else {
            double bc1 = 1.0 - pow((double)b1, (double)t);
            double bc2 = 1.0 - pow((double)b2, (double)t);
            lrc = (float)((double)lr / bc1);
            rbc2 = (float)(1.0 / sqrt(bc2));
        }
    }
    __syncthreads();
    if (!ok) return;
    for (i64 i = gtid(); i < n; i += gthreads()) {
        float g = grad[i];
        if (wd != 0.f) g += wd * p[i];
        float mi = b1 * m[i] + (1.f - b1) * g;
        float vi = b2 * v[i] + (1.f - b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        float denom = sqrtf(vi) * rbc2 + eps;
        p[i] -= lrc * mi / denom;
    }
}
