#include "xsa/records/bench.h"

#include <algorithm>

namespace xsa {

using json = nlohmann::json;

double bench_mfu(double flops_per_token, double tokens_per_s, double peak_gflops) {
  return peak_gflops > 0 ? flops_per_token * tokens_per_s / (peak_gflops * 1e9) : 0.0;
}

double bench_ratio(double num, double den) {
  return den > 0 ? num / den : 0.0;
}

std::vector<StepRow> step_rows(const BenchResults& r, const std::vector<StepTiming>& steps) {
  std::vector<StepRow> rows;
  const double peak = r.gemm.peak_gflops(1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double fp32_ms = i < r.steps.size() ? r.steps[i].step_ms : 0.0;
    rows.push_back({&steps[i], bench_mfu(r.flops_per_token, steps[i].tokens_per_s, peak),
                    bench_ratio(steps[i].step_ms, steps[0].step_ms), bench_ratio(fp32_ms, steps[i].step_ms)});
  }
  return rows;
}

double flash_kernel_flops(int seq_len, int d_head) {
  const double T = seq_len;
  return 7.0 * d_head * T * T;
}

// The records written as they are, each key the member's name (the JSON keys scripts/perf/bench.py reads).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepTiming, variant, forward_ms, backward_ms, optimizer_ms, step_ms,
                                   tokens_per_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FlashKernelTiming, isa, seq_len, d_head, forward_ms, backward_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BenchCpu, model, flags_present, flags_absent, cores, bf16_native)

namespace {

json step_json(const StepRow& row) {
  json s = *row.step;
  s["mfu"] = row.mfu;
  return s;
}

json gemm_json(const GemmRates& g) {
  json out = json::object();
  for (int threads : {1, 2}) {
    json shapes = json::object();
    for (const auto& s : g.shapes) shapes[s.shape] = threads == 1 ? s.gflops_1_thread : s.gflops_2_threads;
    out[std::to_string(threads)] = {{"peak_gflops", g.peak_gflops(threads)}, {"shapes", shapes}};
  }
  return out;
}

}  // namespace

double GemmRates::peak_gflops(int threads) const {
  double peak = 0;
  for (const auto& s : shapes) peak = std::max(peak, threads == 1 ? s.gflops_1_thread : s.gflops_2_threads);
  return peak;
}

double BenchResults::xsa_over_sa_step_ratio() const {
  return steps.size() >= 2 ? bench_ratio(steps[1].step_ms, steps[0].step_ms) : 0.0;
}

json bench_results_json(const BenchResults& r) {
  json out = {{"config", r.config},
              {"vocab", r.vocab},
              {"torch", r.torch_version},
              {"cpu", r.cpu},
              {"gemm", gemm_json(r.gemm)},
              {"flops_per_token", r.flops_per_token},
              {"xsa_over_sa_step_ratio", r.xsa_over_sa_step_ratio()}};
  json steps = json::array();
  for (const auto& row : step_rows(r, r.steps)) steps.push_back(step_json(row));
  out["steps"] = steps;
  if (r.gemm_bf16) out["gemm_bf16"] = gemm_json(*r.gemm_bf16);
  if (!r.steps_bf16.empty()) {
    json bf16 = json::array();
    for (const auto& row : step_rows(r, r.steps_bf16)) {
      json s = step_json(row);
      s["speedup_vs_fp32"] = row.speedup_vs_fp32;
      bf16.push_back(s);
    }
    out["steps_bf16"] = bf16;
    out["bf16_emulated"] = r.bf16_emulated;
  }
  if (!r.by_seq_len.empty() || !r.by_d_model.empty()) {
    json by_seq = json::array(), by_width = json::array();
    for (const auto& p : r.by_seq_len)
      by_seq.push_back(
          {{"seq_len", p.seq_len}, {"batch_size", p.batch_size}, {"sa_ms", p.sa_ms}, {"xsa_ms", p.xsa_ms}});
    for (const auto& p : r.by_d_model)
      by_width.push_back(
          {{"d_model", p.d_model},
           {"sa_ms", p.sa_ms},
           {"xsa_ms", p.xsa_ms},
           {"sa_mfu", bench_mfu(p.sa_flops_per_token, p.sa_tokens_per_s, r.gemm.peak_gflops(1))}});
    out["by_seq_len"] = by_seq;
    out["by_d_model"] = by_width;
  }
  if (!r.flash_kernels.empty()) out["flash_kernels"] = r.flash_kernels;
  return out;
}

}  // namespace xsa
