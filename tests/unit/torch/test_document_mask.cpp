// Document masking (data.doc_mask; docs/guide.md "Document masking"): attention stays inside each document of
// a window (block-diagonal causal) and positions restart at each document. Checked against independent
// expectations:
// the layout by hand; the fused kernel against the explicit masked softmax (values and gradients, 1e-5) and
// against each document run by itself; the whole model's logits against every document run alone; the
// bias metrics against the per-document runs they average, and over batches of windows with different
// numbers of documents against the mean over every counted row, computed by hand from per-window runs.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "process.h"
#include "tiny_model.h"
#include "torch_testing.h"
#include "xsa/data/token_data.h"
#include "xsa/model/causal_attention.h"
#include "xsa/model/gpt.h"
#include "xsa/train/evaluation.h"

namespace xsa {
namespace {

using xsa::testing::max_abs_diff;

constexpr int64_t kBos = 1;

torch::Tensor ids(std::vector<std::vector<int64_t>> rows) {
  std::vector<torch::Tensor> out;
  for (auto& row : rows) out.push_back(torch::tensor(row, torch::kLong));
  return torch::stack(out);  // (B, T)
}

TEST(DocumentLayout, StartsAndPositionsByHand) {
  // Row 0 begins inside a document (tokens 5), row 1 with a BOS; adjacent BOS tokens are one-token documents.
  auto layout = document_layout(ids({{5, kBos, 7, 8, kBos, 9}, {kBos, 3, kBos, kBos, 4, 4}}), kBos);
  EXPECT_TRUE(torch::equal(layout.start, ids({{0, 1, 1, 1, 4, 4}, {0, 0, 2, 3, 3, 3}})));
  EXPECT_TRUE(torch::equal(layout.positions, ids({{0, 0, 1, 2, 0, 1}, {0, 1, 0, 0, 1, 2}})));
}

TEST(DocumentLayout, RunsAndTheirErrors) {
  const std::vector<int64_t> good{0, 1, 1, 1, 4, 4};
  const std::vector<std::pair<int64_t, int64_t>> expected{{0, 1}, {1, 3}, {4, 2}};
  EXPECT_EQ(document_runs(good.data(), 6), expected);
  const std::vector<int64_t> not_from_zero{1, 1}, backwards{0, 1, 0}, skips{0, 0, 1};
  EXPECT_THROW(document_runs(not_from_zero.data(), 2), std::invalid_argument);
  EXPECT_THROW(document_runs(backwards.data(), 3), std::invalid_argument);
  EXPECT_THROW(document_runs(skips.data(), 3), std::invalid_argument);
}

TEST(DocumentLayout, MaskByHand) {
  auto start = ids({{0, 1, 1}});
  auto mask = attention_mask(3, start);  // (1, 1, 3, 3): true where masked
  auto expected =
      torch::tensor({false, true, true, true, false, true, true, false, false}).view({1, 1, 3, 3});
  EXPECT_TRUE(torch::equal(mask, expected));
}

// doc_start rows spanning several kernel blocks (kQueryBlock 64, kKeyBlock 256): documents of 1, 69, 1, 229
// tokens in row 0; one whole-window document in row 1 (which continues one from before the window).
torch::Tensor long_doc_start(int64_t T) {
  std::vector<int64_t> row0(T), row1(T, 0);
  const std::vector<int64_t> firsts{0, 1, 70, 71};
  for (int64_t t = 0, d = 0; t < T; ++t) {
    while (d + 1 < static_cast<int64_t>(firsts.size()) && firsts[d + 1] <= t) ++d;
    row0[t] = firsts[d];
  }
  return torch::stack({torch::tensor(row0), torch::tensor(row1)});  // (2, T)
}

class DocumentAttention : public ::testing::TestWithParam<torch::ScalarType> {};

TEST_P(DocumentAttention, FusedEqualsTheExplicitMaskedSoftmaxWithGradients) {
  const int64_t T = 300, D = 8;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const auto opts = torch::TensorOptions().dtype(GetParam());
  auto q = torch::randn({2, 3, T, D}, gen, opts).requires_grad_();
  auto k = torch::randn({2, 3, T, D}, gen, opts).requires_grad_();
  auto v = torch::randn({2, 3, T, D}, gen, opts).requires_grad_();
  auto upstream = torch::randn({2, 3, T, D}, gen, opts);
  const auto start = long_doc_start(T);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));

  auto fused = fused_causal_attention(q, k, v, scale, start);
  auto g_fused = torch::autograd::grad({fused.y}, {q, k, v}, {upstream});
  // The reference written out here: scores, the block-diagonal causal mask by its definition, softmax.
  auto scores = torch::matmul(q, k.transpose(-2, -1)) * scale;  // (B, H, T, T)
  auto j = torch::arange(T).view({1, 1, 1, T}), i = torch::arange(T).view({1, 1, T, 1});
  auto allowed = (j <= i) & (j >= start.view({2, 1, T, 1}));  // (B, 1, T, T)
  scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
  auto y = torch::matmul(torch::softmax(scores, -1), v);
  auto g_ref = torch::autograd::grad({y}, {q, k, v}, {upstream});
  EXPECT_LT(max_abs_diff(fused.y, y), 1e-5);
  EXPECT_LT(max_abs_diff(fused.lse, torch::logsumexp(scores, -1)), 1e-5);
  for (int n = 0; n < 3; ++n) EXPECT_LT(max_abs_diff(g_fused[n], g_ref[n]), 1e-5) << "gradient " << n;

  auto composite = composite_causal_attention(q, k, v, scale, start);
  auto g_composite = torch::autograd::grad({composite.y}, {q, k, v}, {upstream});
  EXPECT_LT(max_abs_diff(composite.y, y), 1e-5);
  for (int n = 0; n < 3; ++n) EXPECT_LT(max_abs_diff(g_composite[n], g_ref[n]), 1e-5) << "gradient " << n;
}

TEST_P(DocumentAttention, FusedEqualsEachDocumentRunAloneBitForBit) {
  const int64_t T = 300, D = 8;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(6);
  const auto opts = torch::TensorOptions().dtype(GetParam());
  auto q = torch::randn({2, 3, T, D}, gen, opts), k = torch::randn({2, 3, T, D}, gen, opts),
       v = torch::randn({2, 3, T, D}, gen, opts);
  const auto start = long_doc_start(T);
  auto masked = fused_causal_attention(q, k, v, 0.3, start);
  for (const auto& run : document_runs(start[0].contiguous().data_ptr<int64_t>(), T)) {
    const int64_t first = run.first,
                  n = run.second;  // named, not bound: C++17 lambdas cannot capture bindings
    auto part = [&](const torch::Tensor& t) {
      return t.narrow(0, 0, 1).narrow(2, first, n);
    };  // (1, H, n, D)
    auto alone = fused_causal_attention(part(q), part(k), part(v), 0.3);
    EXPECT_TRUE(torch::equal(part(masked.y), alone.y)) << "document at " << first;
    EXPECT_TRUE(torch::equal(masked.lse.narrow(0, 0, 1).narrow(2, first, n), alone.lse));
  }
  // Row 1 is one document: the plain causal kernel's bits.
  auto row1 = [&](const torch::Tensor& t) { return t.narrow(0, 1, 1); };
  EXPECT_TRUE(torch::equal(row1(masked.y), fused_causal_attention(row1(q), row1(k), row1(v), 0.3).y));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DocumentAttention, ::testing::Values(torch::kFloat, torch::kDouble));

struct ModelCase {
  AttentionImpl impl;
  PositionEncoding pos;
};

class DocumentModel : public ::testing::TestWithParam<ModelCase> {
 protected:
  Gpt make(bool doc_mask) {
    auto cfg = xsa::test_fixtures::tiny_model();
    cfg.pos = GetParam().pos;
    AttentionConfig attention;
    attention.impl = GetParam().impl;
    VariantSpec xsa;
    xsa.kind = VariantSpec::Kind::kFixed;
    xsa.lambda = 1.0;
    Gpt model(cfg, attention, xsa, 16, 24);
    model->init_weights(at::make_generator<at::CPUGeneratorImpl>(3));
    {
      torch::NoGradGuard no_grad;  // weights in their nonlinear range (attention far from uniform)
      for (auto& p : model->parameters())
        if (p.dim() >= 2) p.mul_(10.0);
    }
    model->to(torch::kDouble);
    if (doc_mask) model->mask_documents(kBos);
    return model;
  }
};

// A window of three documents (the first begun before the window) gives every document's logits as the
// document run by itself, and its bias metrics are the per-document metrics averaged over their positions.
TEST_P(DocumentModel, WindowEqualsEveryDocumentRunAlone) {
  Gpt model = make(true);
  const std::vector<int64_t> window{4, 5, 6, 7, kBos, 8, 9, 10, 11, 12, 13, kBos, 2, 3, 14, 15, 4, 5, 6, 7};
  const std::vector<std::pair<int64_t, int64_t>> docs{{0, 4}, {4, 7}, {11, 9}};
  auto x = torch::tensor(window, torch::kLong).view({1, -1});
  BiasProbe window_probe;
  auto logits = model->forward(x, &window_probe);  // (1, T, V)
  std::vector<double> diag_sum(2, 0.0), sink_sum(2, 0.0), entropy_sum(2, 0.0), cos_y_sum(2, 0.0);
  double counted = 0, max_logit = -1e300;
  for (const auto& [first, n] : docs) {
    BiasProbe probe;
    auto alone = model->forward(x.narrow(1, first, n), &probe);
    EXPECT_LT(max_abs_diff(logits.narrow(1, first, n), alone), 1e-10) << "document at " << first;
    for (int l = 0; l < 2; ++l) {  // each document's metrics average its n - 1 positions after the first
      diag_sum[l] += (n - 1) * probe.layers[l].attn_diag;
      cos_y_sum[l] += (n - 1) * probe.layers[l].cos_y_v;
      sink_sum[l] += (n - 1) * probe.layers[l].dynamics->attn_sink;
      entropy_sum[l] += (n - 1) * probe.layers[l].dynamics->attn_entropy;
      max_logit = std::max(max_logit, probe.layers[l].dynamics->max_logit);
    }
    counted += n - 1;
  }
  double window_max = -1e300;
  for (int l = 0; l < 2; ++l) {
    EXPECT_NEAR(window_probe.layers[l].attn_diag, diag_sum[l] / counted, 1e-10) << "layer " << l;
    EXPECT_NEAR(window_probe.layers[l].cos_y_v, cos_y_sum[l] / counted, 1e-10) << "layer " << l;
    // The dynamics are measured in float32 whatever the model's dtype (gpt.cpp measure_dynamics).
    EXPECT_NEAR(window_probe.layers[l].dynamics->attn_sink, sink_sum[l] / counted, 1e-6);
    EXPECT_NEAR(window_probe.layers[l].dynamics->attn_entropy, entropy_sum[l] / counted, 1e-6);
    window_max = std::max(window_max, window_probe.layers[l].dynamics->max_logit);
  }
  EXPECT_NEAR(window_max, max_logit, 1e-5 * std::abs(max_logit));
  // And it is not the unmasked model's answer: the later documents see the earlier ones without the mask.
  EXPECT_GT(max_abs_diff(logits, make(false)->forward(x)), 1e-3);
}

// A window without a boundary after its first token is one document: the same bits as no masking.
TEST_P(DocumentModel, OneDocumentIsThePlainModelBitForBit) {
  auto x = torch::tensor(std::vector<int64_t>{kBos, 5, 6, 7, 8, 9, 10, 11, 12, 2, 3, 4}, torch::kLong)
               .view({1, -1});
  auto y = torch::tensor(std::vector<int64_t>{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, torch::kLong)
               .view({1, -1});
  Gpt masked = make(true), plain = make(false);
  auto loss_masked = masked->forward_loss(x, y), loss_plain = plain->forward_loss(x, y);
  EXPECT_TRUE(torch::equal(masked->forward(x), plain->forward(x)));
  EXPECT_TRUE(torch::equal(loss_masked, loss_plain));
  loss_masked.backward();
  loss_plain.backward();
  auto pm = masked->parameters(), pp = plain->parameters();
  for (size_t i = 0; i < pm.size(); ++i) EXPECT_TRUE(torch::equal(pm[i].grad(), pp[i].grad())) << i;
}

// measure_bias over windows holding different numbers of documents: a per-token metric is the mean over every
// counted row (the tokens that are not a document's first) whatever the batch size, value_cos the mean over
// windows. The expectation is computed by hand from each window run alone, weighted by the rows it counts
// (T minus its document starts: position 0 and every BOS). Weighting batches by their windows instead
// (what measure_bias did before) moves attn_diag, cos(y,v) and the sink by far more than the tolerance here.
TEST_P(DocumentModel, BiasOverBatchesIsTheMeanOverCountedRows) {
  constexpr int kT = 12, kWindows = 4;
  // window 0: one document begun before it; 1: a BOS mid-window; 2: three BOS; 3: BOS at 0 and at the end
  const std::vector<std::vector<int>> bos_at{{}, {6}, {2, 5, 9}, {0, 11}};
  std::vector<std::int64_t> tokens;
  for (int w = 0; w < kWindows; ++w)
    for (int t = 0; t < kT; ++t) tokens.push_back(2 + (w * 7 + t * 5) % 14);  // ids 2..15, never BOS
  tokens.push_back(2);                                                        // the last window's last target
  std::vector<double> counted(kWindows, 0.0);
  for (int w = 0; w < kWindows; ++w) {
    for (int t : bos_at[w]) tokens[w * kT + t] = kBos;
    int starts = 1;  // position 0 starts a document in every window
    for (int t : bos_at[w]) starts += t == 0 ? 0 : 1;
    counted[w] = kT - starts;
  }
  testing::TempDir dir;
  testing::spit(dir / "val.bin", testing::token_file_bytes(tokens));
  TokenFile file(dir / "val.bin", tokens.size(), 16);
  std::vector<std::uint64_t> starts;
  for (int w = 0; w < kWindows; ++w) starts.push_back(static_cast<std::uint64_t>(w) * kT);
  auto window = [&](int w) {  // (1, T): window w's inputs
    return torch::tensor(std::vector<std::int64_t>(tokens.begin() + w * kT, tokens.begin() + (w + 1) * kT),
                         torch::kLong)
        .view({1, kT});
  };

  Gpt model = make(true);
  // By hand: each window alone, its per-token metrics weighted by its counted rows, value_cos by 1.
  std::vector<LayerBias> expected(2);
  std::vector<double> max_logit(2, -1e300);
  double rows = 0;
  for (int w = 0; w < kWindows; ++w) {
    BiasProbe probe;
    model->forward(window(w), &probe);
    EXPECT_DOUBLE_EQ(probe.row_windows, counted[w] / (kT - 1)) << "window " << w;
    for (int l = 0; l < 2; ++l) {
      expected[l].cos_y_v += counted[w] * probe.layers[l].cos_y_v;
      expected[l].cos_z_v += counted[w] * probe.layers[l].cos_z_v;
      expected[l].attn_diag += counted[w] * probe.layers[l].attn_diag;
      expected[l].value_cos += probe.layers[l].value_cos / kWindows;
      if (!expected[l].dynamics) expected[l].dynamics = AttentionDynamics{};
      expected[l].dynamics->attn_sink += counted[w] * probe.layers[l].dynamics->attn_sink;
      expected[l].dynamics->attn_entropy += counted[w] * probe.layers[l].dynamics->attn_entropy;
      max_logit[l] = std::max(max_logit[l], probe.layers[l].dynamics->max_logit);
    }
    rows += counted[w];
  }
  for (int batch_size : {1, 2, kWindows}) {
    const auto measured = measure_bias(model, file, starts, kT, batch_size, false);
    ASSERT_EQ(measured.size(), 2u);
    for (int l = 0; l < 2; ++l) {
      const std::string where = "batch size " + std::to_string(batch_size) + ", layer " + std::to_string(l);
      EXPECT_NEAR(measured[l].cos_y_v, expected[l].cos_y_v / rows, 1e-10) << where;
      EXPECT_NEAR(measured[l].cos_z_v, expected[l].cos_z_v / rows, 1e-10) << where;
      EXPECT_NEAR(measured[l].attn_diag, expected[l].attn_diag / rows, 1e-10) << where;
      EXPECT_NEAR(measured[l].value_cos, expected[l].value_cos, 1e-10) << where;
      // The dynamics are measured in float32 whatever the model's dtype (gpt.cpp measure_dynamics).
      EXPECT_NEAR(measured[l].dynamics->attn_sink, expected[l].dynamics->attn_sink / rows, 1e-6) << where;
      EXPECT_NEAR(measured[l].dynamics->attn_entropy, expected[l].dynamics->attn_entropy / rows, 1e-6)
          << where;
      EXPECT_NEAR(measured[l].dynamics->max_logit, max_logit[l], 1e-6 * std::abs(max_logit[l])) << where;
    }
  }
  // Without masking every window counts T - 1 rows: each weighs exactly one window, and a measurement is the
  // plain mean of the windows' metrics at any batch size.
  Gpt plain = make(false);
  std::vector<double> diag(2, 0.0), cos_y(2, 0.0);
  for (int w = 0; w < kWindows; ++w) {
    BiasProbe probe;
    plain->forward(window(w), &probe);
    EXPECT_EQ(probe.row_windows, 1.0) << "window " << w;
    for (int l = 0; l < 2; ++l) {
      diag[l] += probe.layers[l].attn_diag / kWindows;
      cos_y[l] += probe.layers[l].cos_y_v / kWindows;
    }
  }
  for (int batch_size : {1, 2, kWindows}) {
    const auto measured = measure_bias(plain, file, starts, kT, batch_size, false);
    for (int l = 0; l < 2; ++l) {
      EXPECT_NEAR(measured[l].attn_diag, diag[l], 1e-10) << "unmasked, batch size " << batch_size;
      EXPECT_NEAR(measured[l].cos_y_v, cos_y[l], 1e-10) << "unmasked, batch size " << batch_size;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, DocumentModel,
                         ::testing::Values(ModelCase{AttentionImpl::kFused, PositionEncoding::kRope},
                                           ModelCase{AttentionImpl::kExplicit, PositionEncoding::kRope},
                                           ModelCase{AttentionImpl::kFused, PositionEncoding::kLearned},
                                           ModelCase{AttentionImpl::kExplicit, PositionEncoding::kLearned}));

// The fused and the explicit model agree under document masking: logits and every gradient (float32, 1e-5).
TEST(DocumentModelPaths, FusedEqualsExplicitWithGradients) {
  auto make = [](AttentionImpl impl) {
    auto cfg = xsa::test_fixtures::tiny_model();
    AttentionConfig attention;
    attention.impl = impl;
    VariantSpec xsa;
    xsa.kind = VariantSpec::Kind::kFixed;
    xsa.lambda = 1.0;
    Gpt model(cfg, attention, xsa, 16, 40);
    model->init_weights(at::make_generator<at::CPUGeneratorImpl>(4));
    model->mask_documents(kBos);
    return model;
  };
  Gpt fused = make(AttentionImpl::kFused), explicit_model = make(AttentionImpl::kExplicit);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
  auto x = torch::randint(2, 16, {3, 40}, gen, torch::kLong);
  x.index_put_({0, 7}, kBos);
  x.index_put_({0, 8}, kBos);
  x.index_put_({1, 0}, kBos);
  x.index_put_({1, 39}, kBos);
  x.index_put_({2, 20}, kBos);
  auto y = torch::randint(0, 16, {3, 40}, gen, torch::kLong);
  auto lf = fused->forward_loss(x, y), le = explicit_model->forward_loss(x, y);
  EXPECT_LT(max_abs_diff(fused->forward(x), explicit_model->forward(x)), 1e-5);
  lf.backward();
  le.backward();
  auto pf = fused->named_parameters(), pe = explicit_model->named_parameters();
  for (const auto& item : pf)
    EXPECT_LT(max_abs_diff(item.value().grad(), pe[item.key()].grad()), 1e-5) << item.key();
}

}  // namespace
}  // namespace xsa
