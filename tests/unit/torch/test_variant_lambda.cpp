// Each variant kind in one place: the config's row (xsa/config/variant.h kVariantKinds) and the model's λ
// from its parameter (xsa/model/variant_lambda.h), checked against hand-computed values for every kind in the
// table.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "xsa/config/variant.h"
#include "xsa/model/gpt.h"
#include "xsa/model/variant_lambda.h"
#include "xsa/util/choice.h"

namespace xsa {
namespace {

TEST(VariantKinds, EveryKindHasOneRowWithItsSpellingParameterAndStart) {
  std::set<std::string> names, parameters;
  for (const auto& row : kVariantKinds) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_EQ(parse_choice<VariantSpec::Kind>(row.name), row.value);
    EXPECT_EQ(&variant_kind(row.value), &row);
    const bool fixed = row.value == VariantSpec::Kind::kFixed;
    EXPECT_EQ(*row.parameter == '\0', fixed) << row.name << ": a parameter exactly when λ is not fixed";
    if (!fixed) {
      EXPECT_TRUE(parameters.insert(row.parameter).second) << row.parameter;
      EXPECT_TRUE(is_variant_parameter(std::string("blocks.3.attn.") + row.parameter));
      // Its keyword parses to it (fixed is spelled sa, xsa or a number).
      EXPECT_EQ(parse_variant_keyword(row.name)->kind, row.value);
      EXPECT_EQ(parse_variant_keyword(std::string(row.name) + "@1")->layers, std::vector<int>{1});
    }
  }
  EXPECT_EQ(names.size(), std::size(kVariantKinds));
  EXPECT_EQ(
      variant_spellings(),
      "sa, xsa, learned, gate, tanh_gate or a number in [0, 1], optionally with @<layers> (e.g. xsa@2-3)");
  EXPECT_FALSE(is_variant_parameter("blocks.0.attn.qkv.weight"));
  EXPECT_FALSE(is_variant_parameter("blocks.0.attn.xsa_theta_extra"));
  EXPECT_FALSE(parse_variant_keyword("fixed").has_value()) << "fixed λ is spelled sa, xsa or a number";
}

TEST(VariantKinds, InitialLambdaComesFromTheRow) {
  VariantSpec spec;
  spec.lambda = 0.25;
  EXPECT_EQ(initial_lambda(spec, 0.3), 0.25);
  spec.kind = VariantSpec::Kind::kLearned;
  EXPECT_EQ(initial_lambda(spec, 0.3), 0.3);
  spec.kind = VariantSpec::Kind::kGate;
  EXPECT_EQ(initial_lambda(spec, 0.3), 0.0);
  spec.kind = VariantSpec::Kind::kTanhGate;
  EXPECT_EQ(initial_lambda(spec, 0.3), 0.0);
}

// λ from the parameter, by hand: sigmoid(logit(0.3)) = 0.3; g = 0 and tanh(0) = 0 at the start; at 0.5,
// sigmoid(0.5) = 0.6224593, g = 0.5, tanh(0.5) = 0.4621172.
TEST(VariantKinds, LambdaFromItsParameterByHand) {
  using Kind = VariantSpec::Kind;
  const auto theta = initial_variant_parameter(Kind::kLearned, 0.3, 3);
  EXPECT_NEAR(theta[0].item<float>(), std::log(0.3 / 0.7), 1e-6);
  EXPECT_NEAR(lambda_from_parameter(Kind::kLearned, theta)[2].item<float>(), 0.3, 1e-6);
  for (Kind k : {Kind::kGate, Kind::kTanhGate}) {
    const auto p = initial_variant_parameter(k, 0.0, 2);
    EXPECT_EQ(p.sizes(), (torch::IntArrayRef{2}));
    EXPECT_EQ(lambda_from_parameter(k, p).abs().max().item<float>(), 0.0f) << "starts as SA";
  }
  const auto half = torch::full({1}, 0.5);
  EXPECT_NEAR(lambda_from_parameter(Kind::kLearned, half).item<float>(), 0.6224593, 1e-6);
  EXPECT_NEAR(lambda_from_parameter(Kind::kGate, half).item<float>(), 0.5, 0);
  EXPECT_NEAR(lambda_from_parameter(Kind::kTanhGate, half).item<float>(), 0.4621172, 1e-6);
  EXPECT_THROW(initial_variant_parameter(Kind::kFixed, 1.0, 2), std::logic_error);
  EXPECT_THROW(lambda_from_parameter(Kind::kFixed, half), std::logic_error);
}

// The model registers each kind's parameter under the row's name, and only there.
TEST(VariantKinds, TheModelRegistersTheRowsParameter) {
  ModelConfig cfg;
  cfg.n_layer = 1;
  cfg.d_model = 16;
  cfg.n_head = 2;
  cfg.d_head = 8;
  for (const auto& row : kVariantKinds) {
    LayerAttention layer;
    layer.kind = row.value;
    layer.lambda = row.value == VariantSpec::Kind::kLearned ? 0.4 : 0.0;
    CausalSelfAttention attention(cfg, layer);
    std::set<std::string> variant_names;
    for (const auto& item : attention->named_parameters())
      if (is_variant_parameter(item.key())) variant_names.insert(item.key());
    if (*row.parameter == '\0') {
      EXPECT_TRUE(variant_names.empty()) << row.name;
    } else {
      EXPECT_EQ(variant_names, std::set<std::string>{row.parameter}) << row.name;
      EXPECT_NEAR(attention->effective_lambda()[1].item<float>(), layer.lambda, 1e-6) << row.name;
    }
  }
}

}  // namespace
}  // namespace xsa
