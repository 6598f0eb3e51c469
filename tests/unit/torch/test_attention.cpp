// The XSA projection and the model around it: hand-computed values, invariants, causality, init.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include "tiny_model.h"
#include "torch_testing.h"
#include "xsa/model/gpt.h"

namespace xsa {
namespace {

using xsa::testing::seeded_randn;

TEST(ExclusiveProjection, HandComputedTwoDimensional) {
  // y = (1, 2), v = (3, 0): v̂ = (1, 0), y·v̂ = 1, so XSA leaves (0, 2) and λ=0.5 leaves (0.5, 2).
  auto y = torch::tensor({1.0, 2.0}, torch::kDouble).view({1, 1, 1, 2});
  auto v = torch::tensor({3.0, 0.0}, torch::kDouble).view({1, 1, 1, 2});
  auto z = exclusive_projection(y, v, 1.0);
  EXPECT_DOUBLE_EQ(z[0][0][0][0].item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(z[0][0][0][1].item<double>(), 2.0);
  auto half = exclusive_projection(y, v, 0.5);
  EXPECT_DOUBLE_EQ(half[0][0][0][0].item<double>(), 0.5);
  EXPECT_DOUBLE_EQ(half[0][0][0][1].item<double>(), 2.0);
  // y = (1, 1), v = (1, 1): y is all along v, so nothing is left.
  auto y2 = torch::tensor({1.0, 1.0}, torch::kDouble).view({1, 1, 1, 2});
  EXPECT_LT(exclusive_projection(y2, y2, 1.0).abs().max().item<double>(), 1e-15);
}

TEST(ExclusiveProjection, OutputIsOrthogonalToOwnValue) {
  auto y = seeded_randn({3, 4, 7, 16}, 1), v = seeded_randn({3, 4, 7, 16}, 2);
  auto z = exclusive_projection(y, v, 1.0);
  auto v_hat = v / v.norm(2, {-1}, true);
  auto dots = (z * v_hat).sum(-1);  // (B, H, T)
  EXPECT_LT(dots.abs().max().item<double>(), 1e-6);
  // Float32, as in training: still orthogonal to float precision.
  auto zf = exclusive_projection(y.to(torch::kFloat), v.to(torch::kFloat), 1.0);
  auto dots_f = (zf.to(torch::kDouble) * v_hat).sum(-1);
  EXPECT_LT(dots_f.abs().max().item<double>(), 1e-5);
  // The part orthogonal to v is untouched: z = y − (y·v̂)v̂ exactly.
  auto expected = y - (y * v_hat).sum(-1, true) * v_hat;
  EXPECT_LT((z - expected).abs().max().item<double>(), 1e-12);
}

TEST(ExclusiveProjection, LambdaInterpolatesLinearly) {
  auto y = seeded_randn({2, 3, 5, 8}, 3), v = seeded_randn({2, 3, 5, 8}, 4);
  auto z0 = exclusive_projection(y, v, 0.0), z1 = exclusive_projection(y, v, 1.0);
  auto zh = exclusive_projection(y, v, 0.5);
  EXPECT_LT((z0 - y).abs().max().item<double>(), 1e-12);
  EXPECT_LT((zh - 0.5 * (y + z1)).abs().max().item<double>(), 1e-12);
  // The tensor-λ overload (per-head λ) agrees with the scalar one.
  auto lam = torch::full({1, 3, 1, 1}, 0.5, torch::kDouble);
  EXPECT_LT((exclusive_projection(y, v, lam) - zh).abs().max().item<double>(), 1e-12);
}

TEST(ExclusiveProjection, ZeroValueVectorIsHarmless) {
  auto y = seeded_randn({1, 1, 3, 4}, 5), v = seeded_randn({1, 1, 3, 4}, 6);
  v.select(2, 1).zero_();  // token 1 has v = 0: nothing to remove, no NaN
  v.requires_grad_(true);
  auto z = exclusive_projection(y, v, 1.0);
  EXPECT_TRUE(torch::isfinite(z).all().item<bool>());
  EXPECT_TRUE(torch::equal(z.select(2, 1), y.select(2, 1)));
  z.sum().backward();
  EXPECT_TRUE(torch::isfinite(v.grad()).all().item<bool>());
}

TEST(ExclusiveProjection, GradientMatchesFiniteDifferences) {
  // Gradients flow through both y and v̂; check d/dv and d/dy of <w, z> numerically in float64.
  auto y = seeded_randn({1, 2, 3, 4}, 7).requires_grad_(true);
  auto v = seeded_randn({1, 2, 3, 4}, 8).requires_grad_(true);
  auto w = seeded_randn({1, 2, 3, 4}, 9);
  auto objective = [&](const torch::Tensor& yy, const torch::Tensor& vv) {
    return (exclusive_projection(yy, vv, 0.7) * w).sum();
  };
  objective(y, v).backward();
  const double h = 1e-6;
  for (auto* param : {&y, &v}) {
    auto flat = param->detach().clone().view({-1});
    auto grad = param->grad().view({-1});
    for (int64_t i = 0; i < flat.numel(); i += 5) {
      torch::NoGradGuard no_grad;
      auto plus = flat.clone(), minus = flat.clone();
      plus[i] += h;
      minus[i] -= h;
      auto shape = param->sizes();
      double fp = param == &y ? objective(plus.view(shape), v.detach()).item<double>()
                              : objective(y.detach(), plus.view(shape)).item<double>();
      double fm = param == &y ? objective(minus.view(shape), v.detach()).item<double>()
                              : objective(y.detach(), minus.view(shape)).item<double>();
      EXPECT_NEAR(grad[i].item<double>(), (fp - fm) / (2 * h), 1e-6)
          << (param == &y ? "dy" : "dv") << " at " << i;
    }
  }
}

using test_fixtures::tiny_model;

Gpt make_model(const VariantSpec& variant, uint64_t seed, const AttentionConfig& attention = {},
               const ModelConfig& m = tiny_model()) {
  Gpt model(m, attention, variant, /*vocab=*/64, /*max_len=*/16);
  model->init_weights(at::make_generator<at::CPUGeneratorImpl>(seed));
  return model;
}

VariantSpec fixed(double lambda, bool keyword) {
  VariantSpec v;
  v.kind = VariantSpec::Kind::kFixed;
  v.lambda = lambda;
  v.from_keyword = keyword;
  return v;
}

torch::Tensor tokens(uint64_t seed, int64_t B = 3, int64_t T = 16) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::randint(0, 64, {B, T}, gen, torch::kLong);
}

TEST(Gpt, SameSeedGivesSameSharedWeightsForEveryVariant) {
  VariantSpec learned, gate;
  learned.kind = VariantSpec::Kind::kLearned;
  gate.kind = VariantSpec::Kind::kGate;
  auto sa = make_model(fixed(0, true), 11);
  VariantSpec tanh_gate;
  tanh_gate.kind = VariantSpec::Kind::kTanhGate;
  for (const auto& variant : {fixed(1, true), fixed(0.5, false), learned, gate, tanh_gate}) {
    auto other = make_model(variant, 11);
    EXPECT_EQ(other->weights_checksum(), sa->weights_checksum()) << variant.name();
    auto a = sa->shared_parameters(), b = other->shared_parameters();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;
  }
  EXPECT_NE(make_model(fixed(0, true), 12)->weights_checksum(), sa->weights_checksum());
}

TEST(Gpt, InitFollowsNanoGptRules) {
  ModelConfig m = tiny_model();
  m.n_layer = 4;
  m.d_model = 128;
  m.n_head = 4;
  m.d_head = 32;
  auto model = make_model(fixed(1, true), 3, {}, m);
  for (const auto& item : model->named_parameters()) {
    const auto& name = item.key();
    double sd = item.value().std().item<double>();
    if (name.find("ln_") != std::string::npos) {
      double expect = name.find("weight") != std::string::npos ? 1.0 : 0.0;
      EXPECT_TRUE(torch::all(item.value() == expect).item<bool>()) << name;
    } else if (name.find("proj.weight") != std::string::npos) {
      EXPECT_NEAR(sd, 0.02 / std::sqrt(2.0 * 4), 0.002) << name;  // residual projections scaled
    } else {
      EXPECT_NEAR(sd, 0.02, 0.002) << name;
    }
  }
}

TEST(Gpt, LambdaZeroIsBitIdenticalToSa) {
  auto sa = make_model(fixed(0, true), 21), lambda0 = make_model(fixed(0, false), 21);
  auto idx = tokens(1);
  EXPECT_TRUE(torch::equal(sa->forward(idx), lambda0->forward(idx)));
  // XSA is really different on the same weights.
  auto xsa = make_model(fixed(1, true), 21);
  EXPECT_FALSE(torch::allclose(sa->forward(idx), xsa->forward(idx)));
}

TEST(Gpt, CausalOutputsIgnoreTheFuture) {
  for (const PositionEncoding pos : {PositionEncoding::kRope, PositionEncoding::kLearned}) {
    ModelConfig m = tiny_model();
    m.pos = pos;
    auto model = make_model(fixed(1, true), 31, {}, m);
    auto idx = tokens(2);
    auto changed = idx.clone();
    const int64_t t = 6;
    changed.narrow(1, t + 1, 16 - t - 1).random_(0, 64);
    torch::NoGradGuard no_grad;
    auto a = model->forward(idx).narrow(1, 0, t + 1), b = model->forward(changed).narrow(1, 0, t + 1);
    EXPECT_LT((a - b).abs().max().item<double>(), 1e-6) << choice_name(pos);
    auto later_a = model->forward(idx).narrow(1, t + 1, 1),
         later_b = model->forward(changed).narrow(1, t + 1, 1);
    EXPECT_GT((later_a - later_b).abs().max().item<double>(), 1e-4)
        << choice_name(pos);  // the test can see a leak
  }
}

TEST(Gpt, BiasProbeMatchesDefinitions) {
  auto sa = make_model(fixed(0, true), 41), xsa = make_model(fixed(1, true), 41);
  auto idx = tokens(3);
  BiasProbe p_sa, p_xsa;
  torch::NoGradGuard no_grad;
  sa->forward(idx, &p_sa);
  xsa->forward(idx, &p_xsa);
  ASSERT_EQ(p_sa.layers.size(), 2u);
  for (int l = 0; l < 2; ++l) {
    EXPECT_DOUBLE_EQ(p_sa.layers[l].cos_y_v, p_sa.layers[l].cos_z_v);  // SA: z = y
    EXPECT_LT(std::abs(p_xsa.layers[l].cos_z_v), 1e-5);                // XSA: z ⟂ v
    EXPECT_GT(p_sa.layers[l].attn_diag, 0.0);
    EXPECT_LT(p_sa.layers[l].attn_diag, 1.0);
  }
  // Layer 0 sees identical inputs in both models, so its y, v and attention are the same.
  EXPECT_DOUBLE_EQ(p_sa.layers[0].cos_y_v, p_xsa.layers[0].cos_y_v);
  EXPECT_DOUBLE_EQ(p_sa.layers[0].attn_diag, p_xsa.layers[0].attn_diag);
}

TEST(Gpt, LearnedAndGateVariantsStartWhereDocumented) {
  AttentionConfig attention;
  attention.learned_init = 0.25;
  VariantSpec learned, gate;
  learned.kind = VariantSpec::Kind::kLearned;
  gate.kind = VariantSpec::Kind::kGate;
  auto l = make_model(learned, 5, attention);
  EXPECT_TRUE(torch::allclose(l->effective_lambdas(), torch::full({2, 2}, 0.25), 1e-6, 1e-6));
  auto g = make_model(gate, 5, attention);
  EXPECT_TRUE(torch::equal(g->effective_lambdas(), torch::zeros({2, 2})));
  // A zero gate is SA: same logits as the SA model on the same weights.
  auto sa = make_model(fixed(0, true), 5, attention);
  auto idx = tokens(4);
  EXPECT_LT((g->forward(idx) - sa->forward(idx)).abs().max().item<double>(), 1e-6);
  // The learned λ and the gate receive gradients (they can learn).
  for (auto* m : {&l, &g}) {
    (*m)->loss((*m)->forward(idx), tokens(5)).backward();
    for (const auto& item : (*m)->named_parameters()) {
      if (is_variant_parameter(item.key())) {
        EXPECT_GT(item.value().grad().abs().sum().item<double>(), 0) << item.key();
      }
    }
  }
}

// λ = tanh(α) with α zero-initialised: starts as SA, reports tanh(α) as its λ, and at α = 0 its gradient
// equals the plain gate's (d tanh/dα = 1 there), so both take the same first step.
TEST(Gpt, TanhGateIsTanhOfAlphaAndStartsAsTheGate) {
  VariantSpec gate, tanh_gate;
  gate.kind = VariantSpec::Kind::kGate;
  tanh_gate.kind = VariantSpec::Kind::kTanhGate;
  auto t = make_model(tanh_gate, 8), g = make_model(gate, 8), sa = make_model(fixed(0, true), 8);
  EXPECT_TRUE(torch::equal(t->effective_lambdas(), torch::zeros({2, 2})));
  auto idx = tokens(9), targets = tokens(10);
  EXPECT_LT((t->forward(idx) - sa->forward(idx)).abs().max().item<double>(), 1e-6);
  t->loss(t->forward(idx), targets).backward();
  g->loss(g->forward(idx), targets).backward();
  int alphas = 0;
  for (const auto& item : t->named_parameters()) {
    if (!is_variant_parameter(item.key())) continue;
    ++alphas;
    ASSERT_NE(item.key().find("xsa_alpha"), std::string::npos) << item.key();
    std::string gate_name = item.key().substr(0, item.key().size() - 5) + "gate";  // ...xsa_alpha -> xsa_gate
    auto gate_grad = g->named_parameters()[gate_name].grad();
    EXPECT_GT(item.value().grad().abs().sum().item<double>(), 0) << item.key();
    EXPECT_TRUE(torch::allclose(item.value().grad(), gate_grad, 1e-5, 1e-9)) << item.key();
  }
  EXPECT_EQ(alphas, 2);
  // Away from 0: α per head (0.9, -0.6) acts as the fixed λ tanh(α) of each head, checked against the plain
  // gate set to those λ (the gate's λ = g is itself checked against the float64 reference).
  {
    torch::NoGradGuard no_grad;
    auto alpha = torch::tensor({0.9f, -0.6f});
    for (auto& item : t->named_parameters())
      if (is_variant_parameter(item.key())) item.value().copy_(alpha);
    for (auto& item : g->named_parameters())
      if (is_variant_parameter(item.key())) item.value().copy_(torch::tanh(alpha));
    EXPECT_TRUE(torch::allclose(t->effective_lambdas(),
                                torch::tensor({std::tanh(0.9f), std::tanh(-0.6f)}).repeat({2, 1}), 1e-6, 0));
    EXPECT_LT((t->forward(idx) - g->forward(idx)).abs().max().item<double>(), 1e-6);
    EXPECT_GT((t->forward(idx) - sa->forward(idx)).abs().max().item<double>(), 1e-4);
  }
}

// A variant's own layers ("xsa@0") win over attention.layers; without them attention.layers applies.
TEST(Gpt, AVariantsOwnLayersOverrideAttentionLayers) {
  AttentionConfig attention;
  attention.layers = {1};
  VariantSpec own = fixed(1, true);
  own.layers = {0};
  auto plan = layer_attention_plan(tiny_model(), attention, own);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].lambda, 1.0);
  EXPECT_EQ(plan[1].lambda, 0.0);
  auto model = make_model(own, 6, attention);
  BiasProbe probe;
  torch::NoGradGuard no_grad;
  model->forward(tokens(6), &probe);
  EXPECT_LT(std::abs(probe.layers[0].cos_z_v), 1e-5);                  // layer 0: XSA, z ⟂ v
  EXPECT_DOUBLE_EQ(probe.layers[1].cos_y_v, probe.layers[1].cos_z_v);  // layer 1: SA, z = y
}

TEST(Gpt, LayerSubsetLeavesOtherLayersAsSa) {
  AttentionConfig attention;
  attention.layers = {1};
  auto plan = layer_attention_plan(tiny_model(), attention, fixed(1, true));
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].lambda, 0.0);
  EXPECT_EQ(plan[1].lambda, 1.0);
  auto model = make_model(fixed(1, true), 6, attention);
  BiasProbe probe;
  torch::NoGradGuard no_grad;
  model->forward(tokens(6), &probe);
  EXPECT_DOUBLE_EQ(probe.layers[0].cos_y_v, probe.layers[0].cos_z_v);
  EXPECT_LT(std::abs(probe.layers[1].cos_z_v), 1e-5);
}

// The stabilisers (model.qk_norm, attention.output_gate) draw nothing at init: the same seed gives the same
// shared weights as the model without them, and only their own parameters are added.
TEST(Stabilisers, AddParametersWithoutChangingTheSharedInit) {
  AttentionConfig gated;
  gated.output_gate = OutputGate::kElementwise;
  ModelConfig m = tiny_model();
  m.qk_norm = true;
  auto plain = make_model(fixed(1, true), 41);
  auto stabilised = make_model(fixed(1, true), 41, gated, m);
  auto stabilised_params = stabilised->named_parameters(true);
  for (const auto& item : plain->named_parameters(true)) {
    ASSERT_TRUE(stabilised_params.contains(item.key())) << item.key();
    EXPECT_TRUE(torch::equal(item.value(), stabilised_params[item.key()])) << item.key();
  }
  const int64_t L = m.n_layer, H = m.n_head, D = m.d_head, C = m.d_model;
  EXPECT_EQ(stabilised->num_parameters(false) - plain->num_parameters(false),
            L * (2 * D + C * H * D + H * D));
  EXPECT_TRUE(torch::equal(stabilised_params["blocks.0.attn.q_norm"], torch::ones({D})));
  EXPECT_EQ(stabilised_params["blocks.1.attn.gate.weight"].abs().sum().item<double>(), 0.0);
}

// W_g = 0 and b = 0: every gate is σ(0) = 0.5, so the gated model is the plain model with each W_o halved.
TEST(Stabilisers, OutputGateStartsAtOneHalf) {
  for (OutputGate kind : {OutputGate::kHeadwise, OutputGate::kElementwise}) {
    AttentionConfig gated;
    gated.output_gate = kind;
    auto with_gate = make_model(fixed(1, true), 43, gated);
    auto halved = make_model(fixed(1, true), 43);
    {
      torch::NoGradGuard no_grad;
      for (auto& item : halved->named_parameters(true))
        if (item.key().find("attn.proj.weight") != std::string::npos) item.value().mul_(0.5);
    }
    auto idx = tokens(5);
    EXPECT_LT((with_gate->forward(idx) - halved->forward(idx)).abs().max().item<double>(), 1e-6)
        << choice_name(kind);
  }
}

// RMSNorm makes q and k scale-free: multiplying W_q and W_k by 10 changes nothing with qk_norm (up to ε), and
// changes the output without it.
TEST(Stabilisers, QkNormMakesAttentionIndependentOfTheScaleOfQAndK) {
  for (bool qk_norm : {true, false}) {
    ModelConfig m = tiny_model();
    m.qk_norm = qk_norm;
    auto model = make_model(fixed(1, true), 47, {}, m);
    auto idx = tokens(6);
    auto before = model->forward(idx).detach();
    {
      torch::NoGradGuard no_grad;
      const int64_t qk_rows = 2 * m.n_head * m.d_head;  // qkv rows: all q heads, then all k heads, then v
      for (auto& item : model->named_parameters(true))
        if (item.key().find("attn.qkv.weight") != std::string::npos)
          item.value().narrow(0, 0, qk_rows).mul_(10.0);
    }
    const double changed = (model->forward(idx) - before).abs().max().item<double>();
    if (qk_norm)
      EXPECT_LT(changed, 1e-5);
    else
      EXPECT_GT(changed, 1e-3);
  }
}

TEST(Rope, RotationPreservesNormsAndRelativePositions) {
  auto tables = make_rope_tables(16, 8);
  auto q = seeded_randn({1, 1, 1, 8}, 1, torch::kFloat).expand({1, 1, 16, 8}).contiguous();
  auto k = seeded_randn({1, 1, 1, 8}, 2, torch::kFloat).expand({1, 1, 16, 8}).contiguous();
  auto rq = apply_rope(q, tables), rk = apply_rope(k, tables);
  EXPECT_TRUE(torch::allclose(rq.norm(2, {-1}), q.norm(2, {-1}), 1e-5, 1e-5));
  // <R_m q, R_n k> depends only on m − n.
  auto dot = [&](int m, int n) { return (rq.select(2, m) * rk.select(2, n)).sum().item<double>(); };
  EXPECT_NEAR(dot(3, 1), dot(10, 8), 1e-4);
  EXPECT_NEAR(dot(5, 5), dot(0, 0), 1e-4);
  // Position 0 is the identity.
  EXPECT_TRUE(torch::allclose(rq.select(2, 0), q.select(2, 0)));
}

}  // namespace
}  // namespace xsa
