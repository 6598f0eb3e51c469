// runtime.precision: CPU flag parsing, the fp32/bf16/auto decision, the autocast scope, and the model
// and fused loss under bf16 mixed precision (close to fp32, deterministic, fp32 master weights).
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include <thread>

#include "tiny_model.h"
#include "torch_testing.h"
#include "xsa/model/gpt.h"
#include "xsa/model/lm_head_loss.h"
#include "xsa/model/precision.h"
#include "xsa/model/torch_compat.h"

namespace xsa {
namespace {

using xsa::testing::seeded_randn;

TEST(Precision, ParsesBf16FlagsFromCpuinfo) {
  const std::string zen4 =
      "processor\t: 0\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512bw\n\n"
      "processor\t: 1\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512bw\n";
  auto s = parse_cpu_bf16_flags(zen4);
  EXPECT_TRUE(s.avx512_bf16);
  EXPECT_FALSE(s.amx_bf16);
  EXPECT_TRUE(s.native());
  auto spr = parse_cpu_bf16_flags("flags\t: avx512f amx_tile amx_bf16 amx_int8\n");
  EXPECT_TRUE(spr.amx_bf16);
  EXPECT_TRUE(spr.native());
  // avx512bw / a "bf16" substring elsewhere is not native bf16; only the flags lines count.
  auto avx2 =
      parse_cpu_bf16_flags("model name\t: avx512_bf16 lookalike\nflags\t: avx2 fma avx512bw xbf16x\n");
  EXPECT_FALSE(avx2.native());
  EXPECT_FALSE(parse_cpu_bf16_flags("").native());
}

TEST(Precision, ResolvesRequestAgainstTheCpu) {
  CpuBf16Support without, with;
  with.avx512_bf16 = true;
  EXPECT_EQ(resolve_precision(PrecisionRequest::kFp32, with).precision, Precision::kFp32);
  EXPECT_EQ(resolve_precision(PrecisionRequest::kAuto, with).precision, Precision::kBf16);
  EXPECT_EQ(resolve_precision(PrecisionRequest::kAuto, without).precision, Precision::kFp32);
  EXPECT_TRUE(resolve_precision(PrecisionRequest::kAuto, without).warning.empty());
  auto forced = resolve_precision(PrecisionRequest::kBf16, without);
  EXPECT_EQ(forced.precision, Precision::kBf16);  // runs, but says so
  EXPECT_NE(forced.warning.find("without native bf16"), std::string::npos);
  EXPECT_EQ(forced.warning.find('\n'), std::string::npos);  // one line
  EXPECT_TRUE(resolve_precision(PrecisionRequest::kBf16, with).warning.empty());
  EXPECT_EQ(resolve_precision(PrecisionRequest::kBf16, with).requested, PrecisionRequest::kBf16);
}

TEST(Precision, ScopeTurnsAutocastOnAndRestoresIt) {
  ASSERT_FALSE(torch_compat::cpu_autocast_enabled());
  auto a = torch::randn({8, 8}), b = torch::randn({8, 8});
  {
    PrecisionScope bf16(Precision::kBf16);
    EXPECT_TRUE(torch_compat::cpu_autocast_enabled());
    EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kBFloat16);
    {
      PrecisionScope fp32(Precision::kFp32);  // e.g. inside the fused loss
      EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kFloat);
    }
    EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kBFloat16);
    // Autocast state is per thread: a concurrent worker running fp32 is unaffected.
    bool other_thread_enabled = true;
    std::thread([&] { other_thread_enabled = torch_compat::cpu_autocast_enabled(); }).join();
    EXPECT_FALSE(other_thread_enabled);
  }
  EXPECT_FALSE(torch_compat::cpu_autocast_enabled());
  EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kFloat);
  {
    PrecisionScope fp32(Precision::kFp32);
    EXPECT_FALSE(torch_compat::cpu_autocast_enabled());
  }
}

TEST(Precision, FusedLossInBf16IsCloseToFp32AndKeepsFp32Gradients) {
  const int64_t N = 700, C = 32, V = 97;  // two chunks, the second partial
  auto x = seeded_randn({N, C}, 1, torch::kFloat), w = 0.3 * seeded_randn({V, C}, 2, torch::kFloat);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  auto targets = torch::randint(0, V, {N}, gen, torch::kLong);
  auto run = [&](Precision p) {
    auto xg = x.clone().requires_grad_(true), wg = w.clone().requires_grad_(true);
    torch::Tensor loss;
    {
      PrecisionScope scope(p);
      loss = lm_head_cross_entropy(xg, wg, targets);
    }
    loss.backward();
    return std::make_tuple(loss.detach(), xg.grad(), wg.grad());
  };
  auto [loss32, gx32, gw32] = run(Precision::kFp32);
  auto [loss16, gx16, gw16] = run(Precision::kBf16);
  // The fp32 path is the unfused formula's to float rounding.
  auto ref = torch::nn::functional::cross_entropy(torch::mm(x, w.t()), targets);
  EXPECT_NEAR(loss32.item<double>(), ref.item<double>(), 1e-5);
  // bf16 matmuls: loss within bf16 rounding of fp32 (8-bit mantissa), gradients float32.
  EXPECT_EQ(loss16.scalar_type(), torch::kFloat);
  EXPECT_EQ(gx16.scalar_type(), torch::kFloat);
  EXPECT_EQ(gw16.scalar_type(), torch::kFloat);
  EXPECT_NEAR(loss16.item<double>(), loss32.item<double>(), 1e-2 * loss32.item<double>());
  EXPECT_FALSE(torch::equal(gx16, gx32));  // really ran in bf16 (the mean loss can round alike)
  auto rel = [](const torch::Tensor& a, const torch::Tensor& b) {
    return ((a - b).norm() / b.norm()).item<double>();
  };
  EXPECT_LT(rel(gx16, gx32), 2e-2);
  EXPECT_LT(rel(gw16, gw32), 2e-2);
  // Eval (no grad) under bf16 gives the same per-token losses as the training pass, and they differ
  // from fp32's by bf16 rounding of the logits.
  torch::Tensor eval16, eval32 = lm_head_token_losses(x, w, targets);
  {
    PrecisionScope scope(Precision::kBf16);
    eval16 = lm_head_token_losses(x, w, targets);
  }
  EXPECT_TRUE(torch::equal(eval16.mean(), loss16));
  EXPECT_FALSE(torch::equal(eval16, eval32));
  EXPECT_LT((eval16 - eval32).abs().max().item<double>(), 0.05);
}

using test_fixtures::tiny_model;

VariantSpec variant(VariantSpec::Kind kind, double lambda) {
  VariantSpec v;
  v.kind = kind;
  v.lambda = lambda;
  return v;
}

TEST(Precision, ModelTrainsInBf16CloseToFp32WithFp32WeightsAndRepeatsBitForBit) {
  AttentionConfig attention;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  auto batch = torch::randint(0, 64, {4, 17}, gen, torch::kLong);
  auto x = batch.narrow(1, 0, 16), y = batch.narrow(1, 1, 16);
  for (const auto& spec :
       {variant(VariantSpec::Kind::kFixed, 0.0), variant(VariantSpec::Kind::kFixed, 1.0),
        variant(VariantSpec::Kind::kLearned, 0.0), variant(VariantSpec::Kind::kGate, 0.0)}) {
    auto run = [&](Precision p, BiasProbe* probe) {
      Gpt model(tiny_model(), attention, spec, /*vocab=*/64, /*max_len=*/16);
      model->init_weights(at::make_generator<at::CPUGeneratorImpl>(7));
      torch::Tensor loss;
      {
        PrecisionScope scope(p);
        loss = model->forward_loss(x, y, probe);
      }
      loss.backward();
      std::vector<torch::Tensor> grads;
      for (auto& param : model->parameters()) {
        EXPECT_EQ(param.scalar_type(), torch::kFloat);  // master weights stay fp32
        EXPECT_EQ(param.grad().scalar_type(), torch::kFloat);
        grads.push_back(param.grad().flatten());
      }
      return std::make_pair(loss.item<double>(), torch::cat(grads));
    };
    BiasProbe probe16;
    auto [l32, g32] = run(Precision::kFp32, nullptr);
    auto [l16, g16] = run(Precision::kBf16, &probe16);
    auto [l16b, g16b] = run(Precision::kBf16, nullptr);
    const std::string name = spec.name();
    EXPECT_NEAR(l16, l32, 5e-3 * l32) << name;
    EXPECT_NE(l16, l32) << name;  // the matmuls really were bf16
    EXPECT_LT(((g16 - g32).norm() / g32.norm()).item<double>(), 5e-2) << name;
    EXPECT_EQ(l16, l16b) << name;  // same inputs, same bits
    EXPECT_TRUE(torch::equal(g16, g16b)) << name;
    if (spec.lambda == 1.0) {
      // The XSA projection ran in float32 on the bf16 y and v: z is orthogonal to v to fp32 precision.
      for (const auto& layer : probe16.layers) EXPECT_LT(std::abs(layer.cos_z_v), 1e-5) << name;
    }
  }
}

}  // namespace
}  // namespace xsa
