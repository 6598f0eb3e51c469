#include "xsa/report/bench_tables.h"

#include <algorithm>
#include <cstdint>

#include "xsa/report/columns.h"

namespace xsa::report {

namespace {

using json = nlohmann::json;

// Model FLOPs per second over the peak's: the one MFU of the bench (tables and JSON alike).
double mfu(double flops_per_token, double tokens_per_s, double peak_gflops) {
  return peak_gflops > 0 ? flops_per_token * tokens_per_s / (peak_gflops * 1e9) : 0.0;
}

double ratio(double num, double den) {
  return den > 0 ? num / den : 0.0;
}

struct StepRow {
  const StepTiming* step;
  double mfu;
  double over_sa;          // step time over SA's (same precision)
  double speedup_vs_fp32;  // bf16 rows: fp32 step time over this one
};

std::vector<StepRow> step_rows(const BenchResults& r, const std::vector<StepTiming>& steps) {
  std::vector<StepRow> rows;
  const double peak = r.gemm.peak_gflops(1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double fp32_ms = i < r.steps.size() ? r.steps[i].step_ms : 0.0;
    rows.push_back({&steps[i], mfu(r.flops_per_token, steps[i].tokens_per_s, peak),
                    ratio(steps[i].step_ms, steps[0].step_ms), ratio(fp32_ms, steps[i].step_ms)});
  }
  return rows;
}

Columns<StepRow> step_columns() {
  return {
      {{"variant", "variant"}, [](const StepRow& r) { return Cell(r.step->variant); }},
      {{"forward_ms", "forward+loss ms", 1}, [](const StepRow& r) { return Cell(r.step->forward_ms); }},
      {{"backward_ms", "backward ms", 1}, [](const StepRow& r) { return Cell(r.step->backward_ms); }},
      {{"optimizer_ms", "optimizer ms", 1}, [](const StepRow& r) { return Cell(r.step->optimizer_ms); }},
      {{"step_ms", "step ms", 1}, [](const StepRow& r) { return Cell(r.step->step_ms); }},
      {{"over_sa", "step / SA's", 3}, [](const StepRow& r) { return Cell(r.over_sa); }},
      {{"tokens_per_s", "tokens/s", 0}, [](const StepRow& r) { return Cell(r.step->tokens_per_s); }},
  };
}

json step_json(const StepRow& row) {
  const StepTiming& s = *row.step;
  return {{"variant", s.variant},
          {"forward_ms", s.forward_ms},
          {"backward_ms", s.backward_ms},
          {"optimizer_ms", s.optimizer_ms},
          {"step_ms", s.step_ms},
          {"tokens_per_s", s.tokens_per_s},
          {"mfu", row.mfu}};
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
  return steps.size() >= 2 ? ratio(steps[1].step_ms, steps[0].step_ms) : 0.0;
}

json bench_results_json(const BenchResults& r) {
  json out = {{"config", r.config},
              {"vocab", r.vocab},
              {"torch", r.torch_version},
              {"cpu",
               {{"model", r.cpu.model},
                {"flags_present", r.cpu.flags_present},
                {"flags_absent", r.cpu.flags_absent},
                {"cores", r.cpu.cores},
                {"bf16_native", r.cpu.bf16_native}}},
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
      by_width.push_back({{"d_model", p.d_model},
                          {"sa_ms", p.sa_ms},
                          {"xsa_ms", p.xsa_ms},
                          {"sa_mfu", mfu(p.sa_flops_per_token, p.sa_tokens_per_s, r.gemm.peak_gflops(1))}});
    out["by_seq_len"] = by_seq;
    out["by_d_model"] = by_width;
  }
  if (!r.flash_kernels.empty()) {
    json kernels = json::array();
    for (const auto& k : r.flash_kernels)
      kernels.push_back({{"isa", k.isa},
                         {"seq_len", k.seq_len},
                         {"d_head", k.d_head},
                         {"forward_ms", k.forward_ms},
                         {"backward_ms", k.backward_ms}});
    out["flash_kernels"] = kernels;
  }
  return out;
}

Table gemm_table(const BenchResults& r) {
  struct Row {
    std::string shape;
    double fp32_1, fp32_2;
    std::optional<double> bf16_1, bf16_2;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < r.gemm.shapes.size(); ++i) {
    const auto& s = r.gemm.shapes[i];
    Row row{s.shape, s.gflops_1_thread, s.gflops_2_threads, std::nullopt, std::nullopt};
    if (r.gemm_bf16 && i < r.gemm_bf16->shapes.size()) {
      row.bf16_1 = r.gemm_bf16->shapes[i].gflops_1_thread;
      row.bf16_2 = r.gemm_bf16->shapes[i].gflops_2_threads;
    }
    rows.push_back(row);
  }
  Row peak{"**peak**", r.gemm.peak_gflops(1), r.gemm.peak_gflops(2), std::nullopt, std::nullopt};
  if (r.gemm_bf16) {
    peak.bf16_1 = r.gemm_bf16->peak_gflops(1);
    peak.bf16_2 = r.gemm_bf16->peak_gflops(2);
  }
  rows.push_back(peak);
  Columns<Row> columns = {
      {{"shape", "shape"}, [](const Row& x) { return Cell(x.shape); }},
      {{"fp32_1_thread", "fp32 1 thread", 1}, [](const Row& x) { return Cell(x.fp32_1); }},
      {{"fp32_2_threads", "fp32 2 threads", 1}, [](const Row& x) { return Cell(x.fp32_2); }},
  };
  if (r.gemm_bf16) {
    columns.push_back(
        {{"bf16_1_thread", "bf16 1 thread", 1}, [](const Row& x) { return opt_cell(x.bf16_1); }});
    columns.push_back(
        {{"bf16_2_threads", "bf16 2 threads", 1}, [](const Row& x) { return opt_cell(x.bf16_2); }});
  }
  Table t;
  t.key = "gemm";
  t.title = "matmul through LibTorch (GFLOP/s, median)";
  fill_table(t, columns, rows);
  return t;
}

Table steps_table(const BenchResults& r) {
  Columns<StepRow> columns = step_columns();
  columns.push_back(
      {{"mfu_pct", "MFU % (1-core peak)", 1}, [](const StepRow& x) { return Cell(100 * x.mfu); }});
  Table t;
  t.key = "steps";
  t.title = "step time at 1 thread (median of " + std::to_string(r.timed_steps) + " steps)";
  fill_table(t, columns, step_rows(r, r.steps));
  return t;
}

Table steps_bf16_table(const BenchResults& r) {
  Columns<StepRow> columns = step_columns();
  columns.push_back(
      {{"speedup_vs_fp32", "vs fp32", 2}, [](const StepRow& x) { return Cell(x.speedup_vs_fp32); }});
  Table t;
  t.key = "steps_bf16";
  t.title = std::string("step time at 1 thread in bf16 mixed precision") +
            (r.bf16_emulated ? " (NO native bf16 on this CPU: emulated)" : "");
  fill_table(t, columns, step_rows(r, r.steps_bf16));
  return t;
}

Table by_seq_len_table(const BenchResults& r) {
  const Columns<ScalingPoint> columns = {
      {{"seq_len", "T", 0}, [](const ScalingPoint& p) { return Cell(std::int64_t{p.seq_len}); }},
      {{"batch_size", "batch", 0}, [](const ScalingPoint& p) { return Cell(std::int64_t{p.batch_size}); }},
      {{"sa_ms", "SA ms", 1}, [](const ScalingPoint& p) { return Cell(p.sa_ms); }},
      {{"xsa_ms", "XSA ms", 1}, [](const ScalingPoint& p) { return Cell(p.xsa_ms); }},
      {{"xsa_over_sa", "XSA/SA", 3}, [](const ScalingPoint& p) { return Cell(ratio(p.xsa_ms, p.sa_ms)); }},
  };
  Table t;
  t.key = "by_seq_len";
  t.title = "step time vs sequence length (4096 tokens per step)";
  fill_table(t, columns, r.by_seq_len);
  return t;
}

Table by_d_model_table(const BenchResults& r) {
  const double peak = r.gemm.peak_gflops(1);
  const Columns<ScalingPoint> columns = {
      {{"d_model", "d_model", 0}, [](const ScalingPoint& p) { return Cell(std::int64_t{p.d_model}); }},
      {{"sa_ms", "SA ms", 1}, [](const ScalingPoint& p) { return Cell(p.sa_ms); }},
      {{"xsa_ms", "XSA ms", 1}, [](const ScalingPoint& p) { return Cell(p.xsa_ms); }},
      {{"xsa_over_sa", "XSA/SA", 3}, [](const ScalingPoint& p) { return Cell(ratio(p.xsa_ms, p.sa_ms)); }},
      {{"sa_mfu_pct", "SA MFU %", 1},
       [peak](const ScalingPoint& p) {
         return Cell(100 * mfu(p.sa_flops_per_token, p.sa_tokens_per_s, peak));
       }},
  };
  Table t;
  t.key = "by_d_model";
  t.title = "step time vs width (d_head = d_model / heads)";
  fill_table(t, columns, r.by_d_model);
  return t;
}

double flash_kernel_flops(int seq_len, int d_head) {
  const double T = seq_len;
  return 7.0 * d_head * T * T;
}

Table flash_kernels_table(const BenchResults& r) {
  struct Row {
    const FlashKernelTiming* kernel;
    double speedup;  // the baseline compilation's forward+backward time over this one's, same shape
  };
  std::vector<Row> rows;
  for (const auto& k : r.flash_kernels) {
    double baseline_ms = 0;
    for (const auto& b : r.flash_kernels)
      if (b.isa == "baseline" && b.seq_len == k.seq_len && b.d_head == k.d_head)
        baseline_ms = b.forward_ms + b.backward_ms;
    rows.push_back({&k, ratio(baseline_ms, k.forward_ms + k.backward_ms)});
  }
  const Columns<Row> columns = {
      {{"seq_len", "T", 0}, [](const Row& w) { return Cell(std::int64_t{w.kernel->seq_len}); }},
      {{"d_head", "d_head", 0}, [](const Row& w) { return Cell(std::int64_t{w.kernel->d_head}); }},
      {{"isa", "instruction set"}, [](const Row& w) { return Cell(w.kernel->isa); }},
      {{"forward_ms", "forward ms", 2}, [](const Row& w) { return Cell(w.kernel->forward_ms); }},
      {{"backward_ms", "backward ms", 2}, [](const Row& w) { return Cell(w.kernel->backward_ms); }},
      {{"gflops", "GFLOP/s", 1},
       [](const Row& w) {
         const auto& k = *w.kernel;
         return Cell(ratio(flash_kernel_flops(k.seq_len, k.d_head), (k.forward_ms + k.backward_ms) * 1e6));
       }},
      {{"speedup", "speed-up over baseline", 2}, [](const Row& w) { return Cell(w.speedup); }},
  };
  Table t;
  t.key = "flash_kernels";
  t.title = "fused attention kernel per instruction set (one slice, 1 thread; GFLOP/s of the causal half)";
  fill_table(t, columns, rows);
  return t;
}

}  // namespace xsa::report
