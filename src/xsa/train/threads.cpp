#include "xsa/train/threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <malloc.h>

namespace xsa {

namespace {
using SetThreadsFn = void (*)(int);
using GetThreadsFn = int (*)();
using GetConfigFn = char* (*)();

template <typename Fn>
Fn find_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}
}  // namespace

void apply_thread_policy(int threads) {
  set_thread_counts(threads, threads);
}

void set_thread_counts(int torch_threads, int blas_threads) {
  at::set_num_threads(torch_threads);
  if (auto set_blas = find_symbol<SetThreadsFn>("openblas_set_num_threads")) set_blas(blas_threads);
}

void keep_large_allocations_in_heap() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // allocations below 1 GiB come from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  // and freed memory is kept for the next step
}

ThreadInfo current_thread_info() {
  ThreadInfo info;
  info.torch_threads = at::get_num_threads();
  auto get_blas = find_symbol<GetThreadsFn>("openblas_get_num_threads");
  info.blas_threads = get_blas ? get_blas() : -1;
  auto get_config = find_symbol<GetConfigFn>("openblas_get_config");
  info.blas =
      get_config ? std::string(get_config()) : std::string("not OpenBLAS (reference or unknown BLAS)");
  return info;
}

}  // namespace xsa
