#pragma once
// xsa-bench's measurements as typed records and their JSON file, the one scripts/perf/bench.py reads (the key
// names are its contract, tests/unit/common/test_bench_tables.cpp checks them literally), with the quantities
// derived from them once (MFU, step-time ratios, the fused kernel's FLOPs). The measuring needs LibTorch and
// lives in xsa/train/benchmark.h; the tables are xsa/report/bench_tables.h. Torch-free.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace xsa {

// One matrix product shape, GFLOP/s at 1 and at 2 threads (median of repeats, best torch thread count).
struct GemmShapeRate {
  std::string shape;
  double gflops_1_thread = 0, gflops_2_threads = 0;
};
struct GemmRates {
  std::vector<GemmShapeRate> shapes;
  // The best shape at each thread count: the "peak" MFU is measured against.
  double peak_gflops(int threads) const;
};

// Medians over the timed steps of one variant.
struct StepTiming {
  std::string variant;
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0, step_ms = 0, tokens_per_s = 0;
};

// SA and XSA step time at one shape of the scaling sweeps (sequence length or width).
struct ScalingPoint {
  int seq_len = 0, batch_size = 0, d_model = 0;
  double sa_ms = 0, xsa_ms = 0;
  double sa_flops_per_token = 0, sa_tokens_per_s = 0;
};

// The fused attention kernel alone, one (batch, head) slice at 1 thread, in one instruction set it is
// compiled for (xsa/model/flash_attention.h): medians of repeats, the instruction sets interleaved.
struct FlashKernelTiming {
  std::string isa;  // "baseline", "avx2"
  int seq_len = 0, d_head = 0;
  double forward_ms = 0, backward_ms = 0;
};

struct BenchCpu {
  std::string model;
  std::vector<std::string> flags_present, flags_absent;
  unsigned cores = 0;
  bool bf16_native = false;
};

struct BenchResults {
  nlohmann::json config;  // the measured experiment config (config_to_json)
  int vocab = 0;
  std::string torch_version;
  BenchCpu cpu;
  GemmRates gemm;                      // fp32
  std::optional<GemmRates> gemm_bf16;  // where bf16 was measured
  bool bf16_emulated = false;
  double flops_per_token = 0;  // model FLOPs per token of the config (6N + 12·L·H·Q·T)
  int timed_steps = 0;
  std::vector<StepTiming> steps;       // fp32, 1 thread: SA then XSA
  std::vector<StepTiming> steps_bf16;  // bf16 mixed precision, same order; empty when not measured
  std::vector<ScalingPoint> by_seq_len, by_d_model;
  std::vector<FlashKernelTiming> flash_kernels;

  // XSA's step time over SA's (fp32); 0 when either is missing.
  double xsa_over_sa_step_ratio() const;
};

nlohmann::json bench_results_json(const BenchResults& results);

// Model FLOPs per second over the peak's: the one MFU of the bench (tables and JSON alike).
double bench_mfu(double flops_per_token, double tokens_per_s, double peak_gflops);
// num / den, 0 when den is not positive.
double bench_ratio(double num, double den);

// One step timing with what is derived from it: its MFU against the 1-thread peak, its step time over the
// first (SA's, same precision) and, for bf16 rows, the fp32 step time over this one.
struct StepRow {
  const StepTiming* step;
  double mfu;
  double over_sa;
  double speedup_vs_fp32;
};
std::vector<StepRow> step_rows(const BenchResults& results, const std::vector<StepTiming>& steps);

// FLOPs of the fused kernel's matmuls on one (T, D) slice, counting the causal half of each T × T product:
// forward q·kᵀ and p·v (2 · D · T²), backward the recomputed q·kᵀ and four more (5 · D · T²).
// scripts/perf/bench.py --show repeats the formula (flash_kernel_flops) for a saved bench.json's kernel table.
double flash_kernel_flops(int seq_len, int d_head);

}  // namespace xsa
