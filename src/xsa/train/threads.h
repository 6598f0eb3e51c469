#pragma once
// Thread policy: LibTorch intra-op threads and OpenBLAS threads are set together. On 2 cores,
// 2 torch threads x 2 OpenBLAS threads oversubscribe (measured 3x slower than 1 + 2).
#include <string>

namespace xsa {

struct ThreadInfo {
  int torch_threads = 0;
  int blas_threads = 0;  // -1 if the BLAS does not say
  std::string blas;      // e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Haswell"
};

// Sets LibTorch's intra-op threads (for the calling thread's OpenMP team too) and OpenBLAS's
// thread count (found at run time with dlsym, so a non-OpenBLAS BLAS is not an error).
// Call it in every thread that runs LibTorch ops.
void apply_thread_policy(int threads);

// LibTorch intra-op and OpenBLAS thread counts set separately, for measurements (xsa-bench's matmul
// peak) that must try every configuration; training uses apply_thread_policy.
void set_thread_counts(int torch_threads, int blas_threads);
ThreadInfo current_thread_info();

// Keeps large tensors' memory in the heap between steps. glibc serves allocations above its mmap
// threshold (at most 32 MiB) with fresh mmaps, so the (B·T, V) logits and their gradients were
// page-faulted in anew every step (~15% of a step in kernel page-fault code, measured with perf).
void keep_large_allocations_in_heap();

}  // namespace xsa
