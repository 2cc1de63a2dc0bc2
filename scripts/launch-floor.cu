// The per-kernel floor of a replayed CUDA graph: a chain of N dependent
// kernels captured once and replayed, each either empty or touching n
// floats, timed with events. Build and run on the device machine:
//   scripts/measure launch-floor
// Prints microseconds per kernel for each chain length and size.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void touch(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

static float chain(float *x, int n, int kernels, int reps) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t g;
  cudaGraphExec_t e;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  int blocks = n > 0 ? (n + 255) / 256 : 1;
  for (int k = 0; k < kernels; k++) touch<<<blocks, 256, 0, s>>>(x, n);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&e, g, 0);
  for (int i = 0; i < 20; i++) cudaGraphLaunch(e, s);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, s);
  for (int i = 0; i < reps; i++) cudaGraphLaunch(e, s);
  cudaEventRecord(b, s);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  cudaGraphExecDestroy(e);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  return ms * 1e3f / reps;
}

int main() {
  float *x;
  cudaMalloc(&x, (64 << 20) * sizeof(float));
  cudaMemset(x, 0, (64 << 20) * sizeof(float));
  int sizes[] = {0, 1 << 12, 1 << 16, 1 << 20};
  int lens[] = {1, 10, 30, 60};
  for (int si = 0; si < 4; si++)
    for (int li = 0; li < 4; li++) {
      float us = chain(x, sizes[si], lens[li], 500);
      printf("floats %8d kernels %3d: %8.2f us per graph, %6.2f us per kernel\n", sizes[si], lens[li], us, us / lens[li]);
    }
  return 0;
}
