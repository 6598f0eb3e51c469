#include "xsa/train/benchmark.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>

#include "xsa/config/resources.h"
#include "xsa/model/flash_attention.h"
#include "xsa/model/gpt.h"
#include "xsa/stats/stats.h"
#include "xsa/train/distributed.h"
#include "xsa/train/step.h"
#include "xsa/train/threads.h"
#include "xsa/util/timing.h"

namespace xsa {

namespace {

double median_or_zero(const std::vector<double>& v) {
  return v.empty() ? 0.0 : stats::median(v);
}

// GFLOP/s of one shape at the current thread count, median of repeats.
double gemm_gflops(int64_t m, int64_t k, int64_t n, at::ScalarType dtype, double budget_flops) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
  auto a = torch::randn({m, k}, gen).to(dtype), b = torch::randn({k, n}, gen).to(dtype);
  auto c = torch::empty({m, n}, a.options());
  const double flops = 2.0 * m * k * n;
  const int reps = std::max(3, static_cast<int>(budget_flops / flops));
  for (int i = 0; i < 2; ++i) at::mm_out(c, a, b);
  std::vector<double> rates;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    at::mm_out(c, a, b);
    rates.push_back(flops / seconds_since(t0) / 1e9);
  }
  return median_or_zero(rates);
}

}  // namespace

GemmRates measure_gemm(const Config& cfg, int vocab, at::ScalarType dtype, double budget_flops) {
  const int64_t M = static_cast<int64_t>(cfg.train.batch_size) * cfg.data.seq_len;
  const int64_t C = cfg.model.d_model, HD = cfg.model.n_head * cfg.model.d_head, R = cfg.model.mlp_ratio * C;
  struct Shape {
    const char* name;
    int64_t m, k, n;
  };
  const std::vector<Shape> shapes = {{"qkv", M, C, 3 * HD},
                                     {"attn_out", M, HD, C},
                                     {"mlp_fc", M, C, R},
                                     {"mlp_proj", M, R, C},
                                     {"lm_head", 512, C, vocab},
                                     {"lm_head_grad_w", vocab, 512, C},
                                     {"square_1024", 1024, 1024, 1024}};
  GemmRates out;
  for (const auto& s : shapes) out.shapes.push_back({s.name, 0.0, 0.0});
  // On 2 cores, torch 2 x OpenBLAS 2 measured 82 GFLOP/s where torch 1 x OpenBLAS 2 gave 125: the best torch
  // count per BLAS count is the peak, like the PyTorch reference's baseline.
  for (int threads : {1, 2}) {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      double best = 0;
      for (int torch_threads = 1; torch_threads <= threads; ++torch_threads) {
        set_thread_counts(torch_threads, threads);
        best = std::max(best, gemm_gflops(shapes[i].m, shapes[i].k, shapes[i].n, dtype, budget_flops));
      }
      (threads == 1 ? out.shapes[i].gflops_1_thread : out.shapes[i].gflops_2_threads) = best;
    }
  }
  return out;
}

std::vector<StepTiming> measure_steps(const Config& cfg, const std::vector<VariantSpec>& variants, int vocab,
                                      int steps, int warmup, Precision precision) {
  struct Run {
    Gpt model{nullptr};
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    std::vector<double> fwd, bwd, opt, total;
  };
  std::vector<Run> runs(variants.size());
  for (std::size_t i = 0; i < variants.size(); ++i) {
    runs[i].model = Gpt(cfg.model, cfg.attention, variants[i], vocab, cfg.data.seq_len);
    runs[i].model->init_weights(at::make_generator<at::CPUGeneratorImpl>(cfg.seed));
    runs[i].optimizer = make_optimizer(runs[i].model, cfg.train, cfg.attention.lambda_lr_scale);
  }
  auto gen = at::make_generator<at::CPUGeneratorImpl>(2);
  for (int s = 0; s < warmup + steps; ++s) {
    auto batch = torch::randint(0, vocab, {cfg.train.batch_size, cfg.data.seq_len + 1}, gen, torch::kLong);
    auto x = batch.narrow(1, 0, cfg.data.seq_len), y = batch.narrow(1, 1, cfg.data.seq_len);  // (B, T)
    for (std::size_t i = 0; i < runs.size(); ++i) {
      auto& r = runs[i];
      // The trainer's own step (constant lr: the schedule costs nothing and changes no timing).
      StepSettings settings;
      settings.lr = cfg.train.lr;
      settings.lambda_lr_scale = cfg.attention.lambda_lr_scale;
      settings.grad_clip = cfg.train.grad_clip;
      settings.run = variants[i].name();
      settings.step_number = s + 1;
      settings.precision = precision;
      const StepOutcome o = train_step(r.model, *r.optimizer, x, y, settings);
      if (s < warmup) continue;
      r.fwd.push_back(o.forward_ms);
      r.bwd.push_back(o.backward_ms);
      r.opt.push_back(o.optimizer_ms);
      r.total.push_back(o.forward_ms + o.backward_ms + o.optimizer_ms);
    }
  }
  std::vector<StepTiming> out;
  const double tokens = static_cast<double>(cfg.train.batch_size) * cfg.data.seq_len;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double step_ms = median_or_zero(runs[i].total);
    out.push_back({variants[i].name(), median_or_zero(runs[i].fwd), median_or_zero(runs[i].bwd),
                   median_or_zero(runs[i].opt), step_ms, step_ms > 0 ? tokens / step_ms * 1e3 : 0.0});
  }
  return out;
}

void profile_steps(const Config& cfg, const VariantSpec& variant, int vocab, int steps,
                   const std::string& trace_path) {
  torch::autograd::profiler::RecordProfile profile(trace_path);
  measure_steps(cfg, {variant}, vocab, steps, 0);
}

ScalingPoint measure_sa_xsa(const Config& cfg, int vocab, int steps, int warmup) {
  const auto both =
      measure_steps(cfg, {fixed_lambda_variant(0), fixed_lambda_variant(1)}, vocab, steps, warmup);
  ScalingPoint p;
  p.seq_len = cfg.data.seq_len;
  p.batch_size = cfg.train.batch_size;
  p.d_model = cfg.model.d_model;
  p.sa_ms = both[0].step_ms;
  p.xsa_ms = both[1].step_ms;
  p.sa_tokens_per_s = both[0].tokens_per_s;
  p.sa_flops_per_token = model_flops_per_token(cfg.model, vocab, cfg.data.seq_len);
  return p;
}

VariantSpec fixed_lambda_variant(double lambda) {
  VariantSpec v;
  v.kind = VariantSpec::Kind::kFixed;
  v.lambda = lambda;
  return v;
}

std::vector<FlashKernelTiming> measure_flash_kernels(int d_head, const std::vector<int>& seq_lens,
                                                     double budget_s) {
  std::vector<flash::Isa> isas;
  for (auto isa : {flash::Isa::kBaseline, flash::Isa::kAvx2})
    if (flash::isa_available(isa)) isas.push_back(isa);
  std::vector<FlashKernelTiming> out;
  const int64_t D = d_head;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int seq_len : seq_lens) {
    const int64_t T = seq_len;
    std::mt19937 rng(static_cast<unsigned>(T));
    std::normal_distribution<float> normal;
    auto random_slice = [&] {
      std::vector<float> x(static_cast<std::size_t>(T * D));
      for (auto& e : x) e = normal(rng);
      return x;
    };
    const auto q = random_slice(), k = random_slice(), v = random_slice(), dy = random_slice();
    std::vector<float> y(q.size()), lse(static_cast<std::size_t>(T)), dq(q.size()), dk(q.size()),
        dv(q.size());
    flash::Workspace<float> ws;
    std::vector<std::vector<double>> forward_ms(isas.size()), backward_ms(isas.size());
    auto run = [&](std::size_t i) {
      auto t0 = Clock::now();
      flash::forward_with(isas[i], q.data(), k.data(), v.data(), T, D, scale, y.data(), lse.data(), ws);
      forward_ms[i].push_back(1e3 * seconds_since(t0));
      t0 = Clock::now();
      flash::backward_with(isas[i], q.data(), k.data(), v.data(), y.data(), lse.data(), dy.data(), T, D,
                           scale, dq.data(), dk.data(), dv.data(), ws);
      backward_ms[i].push_back(1e3 * seconds_since(t0));
    };
    for (std::size_t i = 0; i < isas.size(); ++i) run(i);  // warm-up (workspace, caches), timing discarded
    double round_ms = 0;
    for (std::size_t i = 0; i < isas.size(); ++i) {
      round_ms += forward_ms[i].back() + backward_ms[i].back();
      forward_ms[i].clear();
      backward_ms[i].clear();
    }
    const int repeats = std::clamp(static_cast<int>(1e3 * budget_s / std::max(round_ms, 1e-3)), 3, 200);
    for (int r = 0; r < repeats; ++r)
      for (std::size_t i = 0; i < isas.size(); ++i) run(i);
    for (std::size_t i = 0; i < isas.size(); ++i)
      out.push_back({flash::isa_name(isas[i]), seq_len, d_head, stats::median(forward_ms[i]),
                     stats::median(backward_ms[i])});
  }
  return out;
}

AllReduceTiming measure_allreduce(const RankInfo& ranks, int timeout_s, std::int64_t bytes, int repeats,
                                  int warmup) {
  auto dist = Distributed::connect(ranks, timeout_s);
  auto group = dist->group("allreduce-bench");
  auto flat = torch::ones({bytes / 4}, torch::dtype(torch::kFloat32));  // (bytes / 4,)
  AllReduceTiming t;
  t.bytes = flat.numel() * 4;
  t.world_size = ranks.world_size;
  for (int r = 0; r < warmup + repeats; ++r) {
    flat.fill_(1.0f);  // untimed: the sums stay finite however many repeats
    group->barrier("before all-reduce " + std::to_string(r + 1));
    const auto t0 = std::chrono::steady_clock::now();
    group->start_sum(flat, "buffer " + std::to_string(r + 1))->wait();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r >= warmup) t.samples_ms.push_back(ms);
  }
  t.ms_median = stats::median(t.samples_ms);
  t.mb_per_s = t.bytes / 1e6 / (t.ms_median / 1e3);
  group->barrier("after the all-reduces");
  return t;
}

}  // namespace xsa
