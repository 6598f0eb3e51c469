#pragma once
// The measurements behind xsa-bench: matmul throughput at a model's shapes and the trainer's own step,
// timed per phase with the variants interleaved. Results are the typed records of xsa/report/bench_tables.h
// (which also renders them); scripts/bench.sh combines xsa-bench with xsa-train and the PyTorch reference.
#include <ATen/core/ScalarType.h>

#include <cstdint>
#include <string>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/model/precision.h"
#include "xsa/records/bench.h"
#include "xsa/train/ranks.h"

namespace xsa {

// GFLOP/s of (m×k)·(k×n) through LibTorch in `dtype` for the model's matrix shapes (qkv, attention out, MLP,
// LM head and its weight gradient, a 1024 square), at 1 and 2 threads: per thread count N the best over torch
// intra-op counts 1..N with N BLAS threads (a single matmul runs on OpenBLAS's threads; LibTorch's pool only
// competes with them). budget_flops: FLOPs to spend per shape (more repeats for small shapes).
GemmRates measure_gemm(const Config& cfg, int vocab, at::ScalarType dtype, double budget_flops);

// Medians of forward+loss / backward / optimizer / total per step, one record per variant, at the current
// thread count, over `steps` timed steps after `warmup`. The variants' steps are interleaved (A B A B ...),
// so slow drifts of a shared machine hit all alike and their ratios are fair. Synthetic token ids (speed does
// not depend on them).
std::vector<StepTiming> measure_steps(const Config& cfg, const std::vector<VariantSpec>& variants, int vocab,
                                      int steps, int warmup, Precision precision = Precision::kFp32);

// LibTorch's profiler over `steps` untimed steps of `variant`: a chrome trace written to `trace_path`.
void profile_steps(const Config& cfg, const VariantSpec& variant, int vocab, int steps,
                   const std::string& trace_path);

// SA and XSA (fixed λ 0 and 1) at `cfg`, measured by measure_steps.
ScalingPoint measure_sa_xsa(const Config& cfg, int vocab, int steps, int warmup);

VariantSpec fixed_lambda_variant(double lambda);

// The fused attention kernel on one (T, d_head) slice at each T, forward then backward, in every instruction
// set this build and CPU have (baseline first), at the current thread count (1 for a per-core figure). Random
// inputs from a fixed seed; the instruction sets alternate within each repeat, about `budget_s` per shape.
std::vector<FlashKernelTiming> measure_flash_kernels(int d_head, const std::vector<int>& seq_lens,
                                                     double budget_s = 1.0);

// The sum of one float32 buffer of `bytes` over the data-parallel ranks through RankGroup::start_sum, the
// path training's gradient buckets take (xsa-bench --allreduce-mb; scripts/bench.sh compares it with
// PyTorch's Gloo all-reduce on the same size). Per repeat, after a barrier: the time until this rank's sum is
// complete.
struct AllReduceTiming {
  std::int64_t bytes = 0;
  int world_size = 1;
  std::vector<double> samples_ms;
  double ms_median = 0;
  double mb_per_s =
      0;  // bytes / median time, in 10^6 bytes per second (the buffer's size, not bytes on the wire)
};
AllReduceTiming measure_allreduce(const RankInfo& ranks, int timeout_s, std::int64_t bytes, int repeats,
                                  int warmup);

}  // namespace xsa
