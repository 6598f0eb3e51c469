// xsa-bench: where a training step's time goes, on this machine, in one run.
//   - the CPU (model name, matmul-relevant flags: is there native bf16?);
//   - sgemm throughput through LibTorch at the model's matrix sizes, 1 and 2 threads (the "peak"), and
//     the bf16 matmul throughput where the CPU has native bf16 (or with --bf16);
//   - per-variant step time split into forward+loss / backward / optimizer, and the XSA/SA ratio, in
//     fp32 and (native bf16 or --bf16) in bf16 mixed precision;
//   - step time as sequence length and width grow;
//   - model FLOPs per token (nanoGPT: 6N + 12·L·H·Q·T) and MFU against the measured peak.
// Synthetic token ids (speed does not depend on them), so it needs no prepared data.
// scripts/bench.sh combines this with xsa-train and the PyTorch reference.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/types.h>
#include <torch/version.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/config/resources.h"
#include "xsa/model/gpt.h"
#include "xsa/model/precision.h"
#include "xsa/report/stats.h"
#include "xsa/train/step.h"
#include "xsa/train/threads.h"
#include "xsa/util/cli_main.h"
#include "xsa/util/fs.h"
#include "xsa/util/timing.h"

namespace {

using json = nlohmann::json;
using xsa::Clock;

struct BenchOptions {
  std::string config_path = "configs/default.yaml";
  std::vector<std::string> overrides;
  int steps = 12;
  int warmup = 3;
  int vocab = 4096;
  bool quick = false;       // skip the scaling sweeps
  bool bf16 = false;        // measure bf16 even without native bf16 (emulated: slow)
  bool flops_only = false;  // print the config's model FLOPs per token and stop (scripts/bench.py's MFU)
  std::string json_path;
  std::string profile_path;  // chrome trace of a few SA steps (LibTorch's profiler)
};

void setup_bench_command(CLI::App& app, BenchOptions& opt) {
  app.description("Measure sgemm peak, step-time breakdown, XSA overhead, scaling and MFU of the xsa model.");
  app.add_option("--config,-c", opt.config_path, "experiment config whose model/batch to measure")
      ->capture_default_str();
  app.add_option("--set", opt.overrides, "override a config key (repeatable)");
  app.add_option("--steps", opt.steps, "timed steps per measurement")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--warmup", opt.warmup, "untimed steps first")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app.add_option("--vocab", opt.vocab, "vocabulary size")->capture_default_str()->check(CLI::Range(8, 65536));
  app.add_flag("--quick", opt.quick, "skip the sequence-length and width scaling");
  app.add_flag("--bf16", opt.bf16,
               "measure bf16 matmuls and bf16 steps even if the CPU has no native bf16 (emulated, slow)");
  app.add_option("--json", opt.json_path, "also write the measurements to this JSON file");
  app.add_flag("--flops-per-token", opt.flops_only,
               "print the model FLOPs per token of the config (6N + 12·L·H·Q·T) as JSON and stop");
  app.add_option("--profile", opt.profile_path,
                 "write chrome://tracing profiles of 3 steps to PATH.sa.json and PATH.xsa.json "
                 "(scripts/profile_summary.py sums them)");
  app.set_version_flag("--version", std::string("xsa ") + XSA_VERSION + " (LibTorch " + TORCH_VERSION + ")");
}

using xsa::seconds_since;

double median(const std::vector<double>& v) {
  return v.empty() ? 0.0 : xsa::report::median(v);
}

// GFLOP/s of (m×k)·(k×n) in `dtype` at the current thread count, median of repeats.
double gemm_gflops(int64_t m, int64_t k, int64_t n, at::ScalarType dtype, double budget_flops) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
  auto a = torch::randn({m, k}, gen).to(dtype), b = torch::randn({k, n}, gen).to(dtype);
  auto c = torch::empty({m, n}, a.options());
  double flops = 2.0 * m * k * n;
  int reps = std::max(3, static_cast<int>(budget_flops / flops));
  for (int i = 0; i < 2; ++i) at::mm_out(c, a, b);
  std::vector<double> rates;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    at::mm_out(c, a, b);
    rates.push_back(flops / seconds_since(t0) / 1e9);
  }
  return median(rates);
}

// budget_flops: FLOPs to spend per shape (more repeats for small shapes).
json measure_gemm(const xsa::Config& cfg, int vocab, at::ScalarType dtype, double budget_flops) {
  const int64_t M = static_cast<int64_t>(cfg.train.batch_size) * cfg.data.seq_len;
  const int64_t C = cfg.model.d_model, HD = cfg.model.n_head * cfg.model.d_head, R = cfg.model.mlp_ratio * C;
  struct Shape {
    const char* name;
    int64_t m, k, n;
  };
  std::vector<Shape> shapes = {{"qkv", M, C, 3 * HD},
                               {"attn_out", M, HD, C},
                               {"mlp_fc", M, C, R},
                               {"mlp_proj", M, R, C},
                               {"lm_head", 512, C, vocab},
                               {"lm_head_grad_w", vocab, 512, C},
                               {"square_1024", 1024, 1024, 1024}};
  json out = json::object();
  // A single matmul runs on OpenBLAS's threads; LibTorch's intra-op pool only competes with them (on
  // 2 cores, torch 2 x OpenBLAS 2 measured 82 GFLOP/s where torch 1 x OpenBLAS 2 gave 125). The peak for
  // N cores is the best over the torch thread counts with N BLAS threads, like the reference's baseline.
  for (int threads : {1, 2}) {
    json per_shape = json::object();
    double peak = 0;
    for (const auto& s : shapes) {
      double best = 0;
      for (int torch_threads = 1; torch_threads <= threads; ++torch_threads) {
        xsa::set_thread_counts(torch_threads, threads);
        best = std::max(best, gemm_gflops(s.m, s.k, s.n, dtype, budget_flops));
      }
      per_shape[s.name] = best;
      peak = std::max(peak, best);
    }
    out[std::to_string(threads)] = {{"peak_gflops", peak}, {"shapes", per_shape}};
  }
  return out;
}

// Median forward+loss / backward / optimizer / total ms per step, one entry per variant, at the
// current thread count. The variants' steps are interleaved (A B A B ...), so slow drifts of a shared
// machine (frequency, other load, heap state) hit both alike and their ratio is fair.
json measure_steps(const xsa::Config& cfg, const std::vector<xsa::VariantSpec>& variants, int vocab,
                   int steps, int warmup, xsa::Precision precision = xsa::Precision::kFp32) {
  struct Run {
    xsa::Gpt model{nullptr};
    std::unique_ptr<torch::optim::AdamW> optimizer;
    std::vector<double> fwd, bwd, opt, total;
  };
  std::vector<Run> runs(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    runs[i].model = xsa::Gpt(cfg.model, cfg.attention, variants[i], vocab, cfg.data.seq_len);
    runs[i].model->init_weights(at::make_generator<at::CPUGeneratorImpl>(cfg.seed));
    runs[i].optimizer = xsa::make_adamw(runs[i].model, cfg.train, cfg.attention.lambda_lr_scale);
  }
  auto gen = at::make_generator<at::CPUGeneratorImpl>(2);
  for (int s = 0; s < warmup + steps; ++s) {
    auto batch = torch::randint(0, vocab, {cfg.train.batch_size, cfg.data.seq_len + 1}, gen, torch::kLong);
    auto x = batch.narrow(1, 0, cfg.data.seq_len), y = batch.narrow(1, 1, cfg.data.seq_len);
    for (size_t i = 0; i < runs.size(); ++i) {
      auto& r = runs[i];
      // The trainer's own step (constant lr: the schedule costs nothing and changes no timing).
      xsa::StepOutcome o =
          xsa::train_step(r.model, *r.optimizer, x, y, cfg.train.lr, cfg.attention.lambda_lr_scale,
                          cfg.train.grad_clip, variants[i].name(), s + 1, precision);
      if (s < warmup) continue;
      r.fwd.push_back(o.forward_ms);
      r.bwd.push_back(o.backward_ms);
      r.opt.push_back(o.optimizer_ms);
      r.total.push_back(o.forward_ms + o.backward_ms + o.optimizer_ms);
    }
  }
  json out = json::array();
  double tokens = static_cast<double>(cfg.train.batch_size) * cfg.data.seq_len;
  for (size_t i = 0; i < runs.size(); ++i) {
    double step_ms = median(runs[i].total);
    out.push_back({{"variant", variants[i].name()},
                   {"forward_ms", median(runs[i].fwd)},
                   {"backward_ms", median(runs[i].bwd)},
                   {"optimizer_ms", median(runs[i].opt)},
                   {"step_ms", step_ms},
                   {"tokens_per_s", tokens / step_ms * 1e3}});
  }
  return out;
}

xsa::VariantSpec keyword_variant(double lambda) {
  xsa::VariantSpec v;
  v.kind = xsa::VariantSpec::Kind::kFixed;
  v.lambda = lambda;
  return v;
}

int run_bench(const BenchOptions& opt) {
  xsa::Config cfg = xsa::load_config(opt.config_path, opt.overrides);
  if (opt.flops_only) {
    std::printf("%s\n",
                json{{"flops_per_token", xsa::model_flops_per_token(cfg.model, opt.vocab, cfg.data.seq_len)}}
                    .dump()
                    .c_str());
    return 0;
  }
  xsa::keep_large_allocations_in_heap();
  json out = {{"config", xsa::config_to_json(cfg)}, {"vocab", opt.vocab}, {"torch", TORCH_VERSION}};
  const auto& m = cfg.model;
  std::printf("xsa-bench: %d layers, d_model %d, %d heads × %d, vocab %d, batch %d × %d tokens\n", m.n_layer,
              m.d_model, m.n_head, m.d_head, opt.vocab, cfg.train.batch_size, cfg.data.seq_len);

  const auto cpu = xsa::describe_cpu(xsa::read_cpuinfo());
  const auto& bf16_support = xsa::cpu_bf16_support();
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
    return s.empty() ? std::string("-") : s;
  };
  out["cpu"] = {{"model", cpu.model},
                {"flags_present", cpu.flags_present},
                {"flags_absent", cpu.flags_absent},
                {"cores", std::thread::hardware_concurrency()},
                {"bf16_native", bf16_support.native()}};
  std::printf("CPU: %s, %u cores; flags: %s; absent: %s; native bf16: %s\n", cpu.model.c_str(),
              std::thread::hardware_concurrency(), join(cpu.flags_present).c_str(),
              join(cpu.flags_absent).c_str(), bf16_support.native() ? "yes" : "no");
  // bf16 is measured where the CPU has it natively; elsewhere only on request (it is emulated there,
  // ~100x slower than fp32, so it gets a smaller budget).
  const bool measure_bf16 = bf16_support.native() || opt.bf16;

  json gemm = measure_gemm(cfg, opt.vocab, at::kFloat, 2e9);
  out["gemm"] = gemm;
  json gemm_bf16;
  if (measure_bf16) {
    gemm_bf16 = measure_gemm(cfg, opt.vocab, at::kBFloat16, bf16_support.native() ? 2e9 : 1e8);
    out["gemm_bf16"] = gemm_bf16;
  }
  std::printf("\nmatmul through LibTorch (GFLOP/s, median)\n| shape | fp32 1 thread | fp32 2 threads |%s\n",
              measure_bf16 ? " bf16 1 thread | bf16 2 threads |" : "");
  std::printf("|---|---|---|%s\n", measure_bf16 ? "---|---|" : "");
  auto bf16_cells = [&](const std::string& name) {
    if (!measure_bf16) return std::string();
    char buf[64];
    std::snprintf(buf, sizeof(buf), " %.1f | %.1f |", gemm_bf16["1"]["shapes"][name].get<double>(),
                  gemm_bf16["2"]["shapes"][name].get<double>());
    return std::string(buf);
  };
  for (auto& [name, g1] : gemm["1"]["shapes"].items()) {
    std::printf("| %s | %.1f | %.1f |%s\n", name.c_str(), g1.get<double>(),
                gemm["2"]["shapes"][name].get<double>(), bf16_cells(name).c_str());
  }
  std::string bf16_peaks;
  if (measure_bf16) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), " %.1f | %.1f |", gemm_bf16["1"]["peak_gflops"].get<double>(),
                  gemm_bf16["2"]["peak_gflops"].get<double>());
    bf16_peaks = buf;
  }
  std::printf("| **peak** | %.1f | %.1f |%s\n", gemm["1"]["peak_gflops"].get<double>(),
              gemm["2"]["peak_gflops"].get<double>(), bf16_peaks.c_str());

  xsa::apply_thread_policy(1);
  if (!opt.profile_path.empty()) {
    for (double lambda : {0.0, 1.0}) {
      auto variant = keyword_variant(lambda);
      torch::autograd::profiler::RecordProfile profile(opt.profile_path + "." + variant.name() + ".json");
      measure_steps(cfg, {variant}, opt.vocab, 3, 0);
    }
  }
  const double fpt = xsa::model_flops_per_token(m, opt.vocab, cfg.data.seq_len);
  const double peak1 = gemm["1"]["peak_gflops"].get<double>() * 1e9;
  out["flops_per_token"] = fpt;
  json steps = json::array();
  std::printf("\nstep time at 1 thread (median of %d steps)\n", opt.steps);
  std::printf(
      "| variant | forward+loss ms | backward ms | optimizer ms | step ms | tokens/s | MFU (1-core peak) "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  json measured =
      measure_steps(cfg, {keyword_variant(0), keyword_variant(1)}, opt.vocab, opt.steps, opt.warmup);
  for (json s : measured) {
    s["mfu"] = fpt * s["tokens_per_s"].get<double>() / peak1;
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.0f | %.1f%% |\n",
                s["variant"].get<std::string>().c_str(), s["forward_ms"].get<double>(),
                s["backward_ms"].get<double>(), s["optimizer_ms"].get<double>(), s["step_ms"].get<double>(),
                s["tokens_per_s"].get<double>(), 100 * s["mfu"].get<double>());
    steps.push_back(s);
  }
  out["steps"] = steps;
  out["xsa_over_sa_step_ratio"] = steps[1]["step_ms"].get<double>() / steps[0]["step_ms"].get<double>();
  std::printf("XSA / SA step time: %.3f   model FLOPs per token: %.2f M\n",
              out["xsa_over_sa_step_ratio"].get<double>(), fpt / 1e6);

  if (measure_bf16) {
    // bf16 mixed precision, same models and batches; MFU stays against the fp32 peak (the figure
    // the targets use), the bf16 peak is in the matmul table.
    const int bf16_steps = bf16_support.native() ? opt.steps : std::max(2, opt.steps / 4);
    const int bf16_warmup = bf16_support.native() ? opt.warmup : 1;
    json measured_bf16 = measure_steps(cfg, {keyword_variant(0), keyword_variant(1)}, opt.vocab, bf16_steps,
                                       bf16_warmup, xsa::Precision::kBf16);
    std::printf("\nstep time at 1 thread in bf16 mixed precision (median of %d steps%s)\n", bf16_steps,
                bf16_support.native() ? "" : "; NO native bf16 on this CPU: emulated");
    std::printf(
        "| variant | forward+loss ms | backward ms | optimizer ms | step ms | tokens/s | vs fp32 |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    json steps_bf16 = json::array();
    for (size_t i = 0; i < measured_bf16.size(); ++i) {
      json s = measured_bf16[i];
      s["speedup_vs_fp32"] = steps[i]["step_ms"].get<double>() / s["step_ms"].get<double>();
      std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.0f | %.2fx |\n",
                  s["variant"].get<std::string>().c_str(), s["forward_ms"].get<double>(),
                  s["backward_ms"].get<double>(), s["optimizer_ms"].get<double>(), s["step_ms"].get<double>(),
                  s["tokens_per_s"].get<double>(), s["speedup_vs_fp32"].get<double>());
      steps_bf16.push_back(s);
    }
    out["steps_bf16"] = steps_bf16;
    out["bf16_emulated"] = !bf16_support.native();
  }

  if (!opt.quick) {
    // Sequence length grows at a constant 4096 tokens per step (batch = 4096 / T), so the change is
    // attention's T² share, not more tokens.
    json by_seq = json::array();
    std::printf(
        "\nstep time vs sequence length (4096 tokens per step)\n| T | batch | SA ms | XSA ms | XSA/SA "
        "|\n|---|---|---|---|---|\n");
    for (int T : {64, 128, 256, 512, 1024}) {
      xsa::Config c = cfg;
      c.data.seq_len = T;
      c.train.batch_size = std::max(1, 4096 / T);
      json both = measure_steps(c, {keyword_variant(0), keyword_variant(1)}, opt.vocab,
                                std::max(3, opt.steps / 3), 1);
      double sa = both[0]["step_ms"], xs = both[1]["step_ms"];
      std::printf("| %d | %d | %.1f | %.1f | %.3f |\n", T, c.train.batch_size, sa, xs, xs / sa);
      by_seq.push_back({{"seq_len", T}, {"batch_size", c.train.batch_size}, {"sa_ms", sa}, {"xsa_ms", xs}});
    }
    out["by_seq_len"] = by_seq;
    json by_width = json::array();
    std::printf(
        "\nstep time vs width (%d heads, d_head = d_model / heads)\n| d_model | SA ms | XSA ms | XSA/SA | SA "
        "MFU |\n|---|---|---|---|---|\n",
        m.n_head);
    for (int d : {64, 128, 256, 512}) {
      xsa::Config c = cfg;
      c.model.d_model = d;
      c.model.d_head = d / c.model.n_head;
      json both = measure_steps(c, {keyword_variant(0), keyword_variant(1)}, opt.vocab,
                                std::max(3, opt.steps / 3), 1);
      json sa = both[0];
      double xs = both[1]["step_ms"];
      double mfu = xsa::model_flops_per_token(c.model, opt.vocab, c.data.seq_len) *
                   sa["tokens_per_s"].get<double>() / peak1;
      std::printf("| %d | %.1f | %.1f | %.3f | %.1f%% |\n", d, sa["step_ms"].get<double>(), xs,
                  xs / sa["step_ms"].get<double>(), 100 * mfu);
      by_width.push_back({{"d_model", d}, {"sa_ms", sa["step_ms"]}, {"xsa_ms", xs}, {"sa_mfu", mfu}});
    }
    out["by_d_model"] = by_width;
  }
  if (!opt.json_path.empty()) xsa::write_file_atomic(opt.json_path, out.dump(1) + "\n");
  return xsa::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xsa-bench"};
  BenchOptions opt;
  setup_bench_command(app, opt);
  return xsa::parse_and_run(app, argc, argv, "xsa-bench", [&] { return run_bench(opt); });
}
