// The fused causal attention (attention.impl: fused) against the explicit softmax(q kᵀ + mask) v written
// with LibTorch ops, in float64 and float32, forward and every gradient; finite differences; bit-identity
// across thread counts; the model with either implementation.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/utils.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "tiny_model.h"
#include "torch_testing.h"
#include "xsa/model/causal_attention.h"
#include "xsa/model/flash_attention.h"
#include "xsa/model/gpt.h"
#include "xsa/model/precision.h"

namespace xsa {
namespace {

using xsa::testing::relative_error;
using xsa::testing::seeded_randn_rounded;

// The reference: scores, mask, softmax, matmul — what attention.impl: explicit computes.
torch::Tensor explicit_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                 double scale) {
  const auto T = q.size(2);
  auto s = torch::matmul(q, k.transpose(-2, -1)) * scale;  // (B, H, T, T)
  auto future = torch::ones({T, T}, torch::kBool).triu(1);
  return torch::matmul(torch::softmax(s.masked_fill(future, -std::numeric_limits<double>::infinity()), -1),
                       v);
}

// max |a − b| / max |b|: the relative error of a whole tensor.
struct AttentionGrads {
  torch::Tensor y, dq, dk, dv;
};

// y and the gradients of Σ y ∘ w (a random w), through either implementation.
AttentionGrads run(bool fused, const torch::Tensor& q0, const torch::Tensor& k0, const torch::Tensor& v0,
                   const torch::Tensor& w, double scale) {
  auto q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true),
       v = v0.clone().requires_grad_(true);
  auto y = fused ? fused_causal_attention(q, k, v, scale).y : explicit_attention(q, k, v, scale);
  (y * w).sum().backward();
  return {y.detach(), q.grad(), k.grad(), v.grad()};
}

// The instruction sets this CPU runs: the baseline always, AVX2 where the CPU has it (CI's machines do).
std::vector<flash::Isa> available_isas() {
  std::vector<flash::Isa> isas;
  for (auto isa : {flash::Isa::kBaseline, flash::Isa::kAvx2})
    if (flash::isa_available(isa)) isas.push_back(isa);
  return isas;
}

TEST(CausalAttention, ScoreExpMatchesStdExp) {
  for (auto isa : available_isas()) {
    double worst = 0;
    for (float x = -87.0f; x <= 88.0f; x += 0.0137f) {
      double want = std::exp(static_cast<double>(x));
      worst = std::max(worst, std::abs(flash::score_exp(x, isa) - want) / want);
    }
    EXPECT_LT(worst, 2e-7) << flash::isa_name(isa);
  }
  EXPECT_EQ(flash::score_exp(0.0f), 1.0f);
  EXPECT_LT(flash::score_exp(-1000.0f), 1e-37f);  // far below the row max: a weight no sum can see
  // NaN stays NaN (a diverged run must show a NaN loss), with no undefined float-to-int conversion on the way
  // (the sanitizer build checks that).
  EXPECT_TRUE(std::isnan(flash::score_exp(std::numeric_limits<float>::quiet_NaN())));
  auto q = seeded_randn_rounded({1, 1, 70, 16}, 21, torch::kFloat),
       k = seeded_randn_rounded({1, 1, 70, 16}, 22, torch::kFloat),
       v = seeded_randn_rounded({1, 1, 70, 16}, 23, torch::kFloat);
  q[0][0][3][0] = std::numeric_limits<float>::quiet_NaN();
  auto y = fused_causal_attention(q, k, v, 0.25).y;
  EXPECT_TRUE(y[0][0][3].isnan().all().item<bool>());
}

// Shapes: T from 1 to 2,050 (below, at and across the 64-query and 256-key block edges), d_head 16-128,
// heads 1-8.
class FusedMatchesExplicit : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(FusedMatchesExplicit, ForwardAndGradientsInFloat64AndFloat32) {
  const auto [T, D, H] = GetParam();
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const int64_t B = 2;
  auto q = seeded_randn_rounded({B, H, T, D}, 1, torch::kDouble),
       k = seeded_randn_rounded({B, H, T, D}, 2, torch::kDouble),
       v = seeded_randn_rounded({B, H, T, D}, 3, torch::kDouble),
       w = seeded_randn_rounded({B, H, T, D}, 4, torch::kDouble);
  auto ref = run(false, q, k, v, w, scale);
  auto got = run(true, q, k, v, w, scale);
  EXPECT_LT(relative_error(got.y, ref.y), 1e-12);
  EXPECT_LT(relative_error(got.dq, ref.dq), 1e-12);
  EXPECT_LT(relative_error(got.dk, ref.dk), 1e-12);
  EXPECT_LT(relative_error(got.dv, ref.dv), 1e-12);
  // float32, as training runs: against the explicit float32 path (what attention.impl: explicit computes).
  auto f = [](const torch::Tensor& t) { return t.to(torch::kFloat); };
  auto ref32 = run(false, f(q), f(k), f(v), f(w), scale);
  auto got32 = run(true, f(q), f(k), f(v), f(w), scale);
  EXPECT_EQ(got32.y.scalar_type(), torch::kFloat);
  EXPECT_LT(relative_error(got32.y, ref32.y), 1e-5);
  EXPECT_LT(relative_error(got32.dq, ref32.dq), 1e-5);
  EXPECT_LT(relative_error(got32.dk, ref32.dk), 1e-5);
  EXPECT_LT(relative_error(got32.dv, ref32.dv), 1e-5);
  // ... and both float32 paths are as close to float64 as each other.
  EXPECT_LT(relative_error(got32.y, ref.y), 1e-5);
  EXPECT_LT(relative_error(got32.dq, ref.dq), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedMatchesExplicit,
                         ::testing::Values(std::make_tuple(1, 16, 1), std::make_tuple(2, 32, 4),
                                           std::make_tuple(63, 16, 2), std::make_tuple(64, 32, 1),
                                           std::make_tuple(65, 64, 3), std::make_tuple(128, 32, 4),
                                           std::make_tuple(255, 128, 1), std::make_tuple(256, 16, 8),
                                           std::make_tuple(257, 32, 2), std::make_tuple(700, 64, 1),
                                           std::make_tuple(2050, 16, 1), std::make_tuple(2050, 128, 1)));

TEST(CausalAttention, LogSumExpAndDiagonalMatchTheExplicitSoftmax) {
  const int64_t T = 300, D = 32;
  const double scale = 1.0 / std::sqrt(32.0);
  auto q = seeded_randn_rounded({1, 2, T, D}, 5, torch::kDouble),
       k = seeded_randn_rounded({1, 2, T, D}, 6, torch::kDouble),
       v = seeded_randn_rounded({1, 2, T, D}, 7, torch::kDouble);
  auto out = fused_causal_attention(q, k, v, scale);
  auto s = torch::matmul(q, k.transpose(-2, -1)) * scale;
  auto masked =
      s.masked_fill(torch::ones({T, T}, torch::kBool).triu(1), -std::numeric_limits<double>::infinity());
  EXPECT_LT((out.lse - torch::logsumexp(masked, -1)).abs().max().item<double>(), 1e-12);
  auto diag = torch::softmax(masked, -1).diagonal(0, -2, -1);  // (B, H, T)
  EXPECT_LT((attention_diagonal(q, k, out.lse, scale) - diag).abs().max().item<double>(), 1e-12);
  EXPECT_DOUBLE_EQ(attention_diagonal(q, k, out.lse, scale)[0][0][0].item<double>(), 1.0);  // a_00 = 1
  EXPECT_FALSE(out.lse.requires_grad());
}

TEST(CausalAttention, GradientMatchesFiniteDifferences) {
  // Central differences in float64, on every coordinate of a slice that spans a query-block edge.
  const int64_t T = 70, D = 4;
  const double scale = 0.5, h = 1e-6;
  auto q = seeded_randn_rounded({1, 1, T, D}, 8, torch::kDouble),
       k = seeded_randn_rounded({1, 1, T, D}, 9, torch::kDouble),
       v = seeded_randn_rounded({1, 1, T, D}, 10, torch::kDouble),
       w = seeded_randn_rounded({1, 1, T, D}, 11, torch::kDouble);
  auto g = run(true, q, k, v, w, scale);
  auto loss = [&](const torch::Tensor& qq, const torch::Tensor& kk, const torch::Tensor& vv) {
    torch::NoGradGuard no_grad;
    return (fused_causal_attention(qq, kk, vv, scale).y * w).sum().item<double>();
  };
  double worst = 0;
  for (int which = 0; which < 3; ++which) {
    const torch::Tensor& grad = which == 0 ? g.dq : which == 1 ? g.dk : g.dv;
    for (int64_t i = 0; i < T; i += 3) {
      for (int64_t d = 0; d < D; ++d) {
        torch::Tensor in[3] = {q.clone(), k.clone(), v.clone()};
        in[which][0][0][i][d] += h;
        double up = loss(in[0], in[1], in[2]);
        in[which][0][0][i][d] -= 2 * h;
        double down = loss(in[0], in[1], in[2]);
        double numeric = (up - down) / (2 * h);
        worst =
            std::max(worst, std::abs(numeric - grad[0][0][i][d].item<double>()) / (1.0 + std::abs(numeric)));
      }
    }
  }
  EXPECT_LT(worst, 1e-7);
}

TEST(CausalAttention, BitIdenticalAcrossRerunsAndThreadCounts) {
  auto q = seeded_randn_rounded({2, 4, 300, 32}, 12, torch::kFloat),
       k = seeded_randn_rounded({2, 4, 300, 32}, 13, torch::kFloat),
       v = seeded_randn_rounded({2, 4, 300, 32}, 14, torch::kFloat),
       w = seeded_randn_rounded({2, 4, 300, 32}, 15, torch::kFloat);
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  auto one = run(true, q, k, v, w, 0.25);
  auto again = run(true, q, k, v, w, 0.25);
  at::set_num_threads(2);
  auto two = run(true, q, k, v, w, 0.25);
  at::set_num_threads(before);
  for (const auto* other : {&again, &two}) {
    EXPECT_TRUE(torch::equal(one.y, other->y));
    EXPECT_TRUE(torch::equal(one.dq, other->dq));
    EXPECT_TRUE(torch::equal(one.dk, other->dk));
    EXPECT_TRUE(torch::equal(one.dv, other->dv));
  }
}

// The kernel runs the widest instruction set the CPU has: AVX2 exactly where /proc/cpuinfo lists it.
TEST(CausalAttention, KernelUsesAvx2WhereTheCpuHasIt) {
#if defined(__x86_64__)
  const std::string cpuinfo = read_cpuinfo();
  ASSERT_FALSE(cpuinfo.empty());
  const bool listed = cpuinfo.find(" avx2") != std::string::npos;
  EXPECT_EQ(flash::isa_available(flash::Isa::kAvx2), listed);
  EXPECT_EQ(flash::float_isa(), listed ? flash::Isa::kAvx2 : flash::Isa::kBaseline);
#else
  EXPECT_FALSE(flash::isa_available(flash::Isa::kAvx2));
  EXPECT_EQ(flash::float_isa(), flash::Isa::kBaseline);
#endif
  EXPECT_TRUE(flash::isa_available(flash::Isa::kBaseline));
}

// The AVX2 compilation of the kernel gives the baseline's bits: forward and backward, T below, at and across
// the block edges, d_head odd and even, inputs scaled up so the running max grows across key blocks.
TEST(CausalAttention, Avx2KernelGivesTheBaselineBits) {
  if (!flash::isa_available(flash::Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2";
  for (int64_t T : {1, 7, 64, 65, 255, 256, 257, 600}) {
    for (int64_t D : {16, 31, 32, 64}) {
      const auto seed = static_cast<uint64_t>(T * 131 + D);
      auto make = [&](uint64_t s) {
        return (seeded_randn_rounded({T, D}, s, torch::kFloat) * 3).contiguous();
      };
      auto q = make(seed), k = make(seed + 1), v = make(seed + 2), dy = make(seed + 3);
      const float scale = 1.0f / std::sqrt(static_cast<float>(D));
      std::vector<torch::Tensor> out[2];
      for (int which = 0; which < 2; ++which) {
        const auto isa = which == 0 ? flash::Isa::kBaseline : flash::Isa::kAvx2;
        auto y = torch::empty({T, D}), lse = torch::empty({T}), dq = torch::empty({T, D}),
             dk = torch::empty({T, D}), dv = torch::empty({T, D});
        flash::Workspace<float> ws;
        flash::forward_with(isa, q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), T, D, scale,
                            y.data_ptr<float>(), lse.data_ptr<float>(), ws);
        flash::backward_with(isa, q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(),
                             y.data_ptr<float>(), lse.data_ptr<float>(), dy.data_ptr<float>(), T, D, scale,
                             dq.data_ptr<float>(), dk.data_ptr<float>(), dv.data_ptr<float>(), ws);
        out[which] = {y, lse, dq, dk, dv};
      }
      const char* names[] = {"y", "lse", "dq", "dk", "dv"};
      for (int i = 0; i < 5; ++i) {
        EXPECT_TRUE(torch::equal(out[0][i], out[1][i])) << names[i] << " T=" << T << " D=" << D;
        EXPECT_TRUE(out[0][i].isfinite().all().item<bool>()) << names[i];
      }
      // Not two copies of one result: the outputs carry the inputs (the last row sees every key).
      EXPECT_GT(out[0][0].abs().sum().item<double>(), 0.0);
    }
  }
}

TEST(CausalAttention, Bfloat16InputsRunInFloat32) {
  auto q = seeded_randn_rounded({1, 2, 80, 16}, 16, torch::kBFloat16),
       k = seeded_randn_rounded({1, 2, 80, 16}, 17, torch::kBFloat16),
       v = seeded_randn_rounded({1, 2, 80, 16}, 18, torch::kBFloat16);
  auto y = fused_causal_attention(q, k, v, 0.25).y;
  EXPECT_EQ(y.scalar_type(), torch::kFloat);
  auto f = [](const torch::Tensor& t) { return t.to(torch::kFloat); };
  EXPECT_LT(relative_error(y, explicit_attention(f(q), f(k), f(v), 0.25)), 1e-5);
}

// The whole model with either implementation: same weights, logits and gradients within float32 rounding,
// and the bias probe measures the same thing.
TEST(CausalAttention, ModelWithFusedMatchesModelWithExplicit) {
  for (const char* variant : {"sa", "xsa", "tanh_gate"}) {
    SCOPED_TRACE(variant);
    const ModelConfig model = test_fixtures::tiny_model();
    AttentionConfig explicit_attention_cfg, fused_attention_cfg;
    explicit_attention_cfg.impl = AttentionImpl::kExplicit;
    fused_attention_cfg.impl = AttentionImpl::kFused;
    const VariantSpec spec = *parse_variant_keyword(variant);
    const int T = 80;  // two query blocks
    Gpt ex(model, explicit_attention_cfg, spec, 64, T);
    Gpt fu(model, fused_attention_cfg, spec, 64, T);
    ex->init_weights(at::make_generator<at::CPUGeneratorImpl>(3));
    fu->init_weights(at::make_generator<at::CPUGeneratorImpl>(3));
    ASSERT_EQ(ex->weights_checksum(), fu->weights_checksum());
    auto gen = at::make_generator<at::CPUGeneratorImpl>(4);
    auto idx = torch::randint(0, 64, {3, 80}, gen, torch::kLong);
    auto targets = torch::randint(0, 64, {3, 80}, gen, torch::kLong);
    BiasProbe pe, pf;
    auto le = ex->forward_loss(idx, targets, &pe), lf = fu->forward_loss(idx, targets, &pf);
    EXPECT_LT(std::abs(le.item<double>() - lf.item<double>()), 1e-5 * std::abs(le.item<double>()));
    le.backward();
    lf.backward();
    auto pe_params = ex->named_parameters(), pf_params = fu->named_parameters();
    for (const auto& item : pe_params) {
      SCOPED_TRACE(item.key());
      EXPECT_LT(relative_error(pf_params[item.key()].grad(), item.value().grad()), 1e-5);
    }
    for (size_t l = 0; l < pe.layers.size(); ++l) {
      EXPECT_NEAR(pf.layers[l].cos_y_v, pe.layers[l].cos_y_v, 1e-5);
      EXPECT_NEAR(pf.layers[l].cos_z_v, pe.layers[l].cos_z_v, 1e-5);
      EXPECT_NEAR(pf.layers[l].attn_diag, pe.layers[l].attn_diag, 1e-5);
      EXPECT_NEAR(pf.layers[l].value_cos, pe.layers[l].value_cos, 1e-5);
    }
  }
}

}  // namespace
}  // namespace xsa
