#include "xsa/report/bench_tables.h"

#include <algorithm>
#include <cstdint>

#include "xsa/report/columns.h"

namespace xsa::report {

namespace {

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

}  // namespace

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

namespace {

// `leading` (the shape's columns), then SA's and XSA's step times and their ratio, as both scaling tables
// show them.
Columns<ScalingPoint> with_sa_xsa_columns(Columns<ScalingPoint> leading) {
  leading.push_back({{"sa_ms", "SA ms", 1}, [](const ScalingPoint& p) { return Cell(p.sa_ms); }});
  leading.push_back({{"xsa_ms", "XSA ms", 1}, [](const ScalingPoint& p) { return Cell(p.xsa_ms); }});
  leading.push_back({{"xsa_over_sa", "XSA/SA", 3},
                     [](const ScalingPoint& p) { return Cell(bench_ratio(p.xsa_ms, p.sa_ms)); }});
  return leading;
}

}  // namespace

Table by_seq_len_table(const BenchResults& r) {
  const Columns<ScalingPoint> columns = with_sa_xsa_columns({
      {{"seq_len", "T", 0}, [](const ScalingPoint& p) { return Cell(std::int64_t{p.seq_len}); }},
      {{"batch_size", "batch", 0}, [](const ScalingPoint& p) { return Cell(std::int64_t{p.batch_size}); }},
  });
  return make_table("by_seq_len", "step time vs sequence length (4096 tokens per step)", columns,
                    r.by_seq_len);
}

Table by_d_model_table(const BenchResults& r) {
  const double peak = r.gemm.peak_gflops(1);
  Columns<ScalingPoint> columns = with_sa_xsa_columns(
      {{{"d_model", "d_model", 0}, [](const ScalingPoint& p) { return Cell(std::int64_t{p.d_model}); }}});
  columns.push_back({{"sa_mfu_pct", "SA MFU %", 1}, [peak](const ScalingPoint& p) {
                       return Cell(100 * bench_mfu(p.sa_flops_per_token, p.sa_tokens_per_s, peak));
                     }});
  return make_table("by_d_model", "step time vs width (d_head = d_model / heads)", columns, r.by_d_model);
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
    rows.push_back({&k, bench_ratio(baseline_ms, k.forward_ms + k.backward_ms)});
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
         return Cell(
             bench_ratio(flash_kernel_flops(k.seq_len, k.d_head), (k.forward_ms + k.backward_ms) * 1e6));
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
