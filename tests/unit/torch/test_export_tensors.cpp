// A model's parameters through model.safetensors and back (model/export_tensors.h): export, then load into a
// fresh model (what model.init_from does before step 1) gives the exported model bit for bit.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <cstring>
#include <string>

#include "tiny_model.h"
#include "xsa/model/exclusive_projection.h"
#include "xsa/model/export_tensors.h"
#include "xsa/model/gpt.h"
#include "xsa/records/exported_model.h"
#include "xsa/records/safetensors.h"
#include "xsa/util/error.h"

namespace {

xsa::Gpt make_model(const xsa::ModelConfig& m, const xsa::AttentionConfig& a, const std::string& variant,
                    std::uint64_t seed, int max_len = 16) {
  xsa::Gpt model(m, a, *xsa::parse_variant_keyword(variant), 64, max_len);
  model->init_weights(at::make_generator<at::CPUGeneratorImpl>(seed));
  // Move the variant parameters off their (equal) initial values, so loading them is visible.
  torch::NoGradGuard no_grad;
  for (auto& p : model->named_parameters(true))
    if (xsa::is_variant_parameter(p.key()))
      p.value().uniform_(-1, 1, at::make_generator<at::CPUGeneratorImpl>(seed));
  return model;
}

bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes() == b.sizes() &&
         std::memcmp(a.contiguous().data_ptr(), b.contiguous().data_ptr(), a.numel() * a.element_size()) == 0;
}

// Every architecture choice that adds or reshapes parameters.
struct Shape {
  const char* name;
  bool learned_pos, qk_norm, tied;
  xsa::OutputGate gate;
  const char* variant;
};
const Shape kShapes[] = {
    {"rope_tied_sa", false, false, true, xsa::OutputGate::kNone, "sa"},
    {"xsa_layer_subset", false, false, true, xsa::OutputGate::kNone, "xsa@1"},
    {"learned_lambda", false, true, true, xsa::OutputGate::kElementwise, "learned"},
    {"learned_pos_untied_gates", true, true, false, xsa::OutputGate::kHeadwise, "tanh_gate"}};

}  // namespace

TEST(ExportTensors, LoadingAnExportGivesTheExportedModelBitForBit) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(s.name);
    auto m = xsa::test_fixtures::tiny_model();
    m.pos = s.learned_pos ? xsa::PositionEncoding::kLearned : xsa::PositionEncoding::kRope;
    m.qk_norm = s.qk_norm;
    m.tie_embeddings = s.tied;
    xsa::AttentionConfig a;
    a.output_gate = s.gate;
    xsa::Gpt exported = make_model(m, a, s.variant, 1);
    // Training moves the q/k gains and gate weights from their no-draw initial values: do it by hand.
    {
      torch::NoGradGuard no_grad;
      for (auto& p : exported->parameters()) p.add_(torch::randn_like(p) * 0.01);
    }
    const std::string bytes = xsa::model_safetensors(exported, {{"format", "pt"}});
    xsa::Gpt fresh = make_model(m, a, s.variant, 2);
    ASSERT_NE(fresh->weights_checksum(), exported->weights_checksum());
    xsa::load_model_safetensors(fresh, bytes, "m.safetensors", /*with_variant_parameters=*/true);
    auto want = exported->named_parameters(true);
    for (const auto& p : fresh->named_parameters(true))
      EXPECT_TRUE(same_bits(p.value(), want[p.key()])) << p.key();
    EXPECT_EQ(fresh->weights_checksum(), exported->weights_checksum());
    auto idx = torch::randint(0, 64, {2, 16}, torch::kLong);
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(same_bits(fresh->forward(idx), exported->forward(idx)));
  }
}

TEST(ExportTensors, AnotherVariantsParametersKeepTheirInitialValues) {
  const auto m = xsa::test_fixtures::tiny_model();
  xsa::Gpt learned = make_model(m, {}, "learned", 1);
  xsa::Gpt target = make_model(m, {}, "learned", 2);
  const auto theta_before = target->named_parameters(true)["blocks.0.attn.xsa_theta"].clone();
  xsa::load_model_safetensors(target, xsa::model_safetensors(learned, {}), "m",
                              /*with_variant_parameters=*/false);
  EXPECT_TRUE(same_bits(target->named_parameters(true)["blocks.0.attn.xsa_theta"], theta_before));
  EXPECT_EQ(target->weights_checksum(), learned->weights_checksum());
  // An SA export into a learned-λ model: the shared weights load, θ has nothing to load from.
  xsa::Gpt sa = make_model(m, {}, "sa", 3);
  xsa::load_model_safetensors(target, xsa::model_safetensors(sa, {}), "m", /*with_variant_parameters=*/true);
  EXPECT_EQ(target->weights_checksum(), sa->weights_checksum());
}

TEST(ExportTensors, RefusesAFileThatDoesNotFitAndLeavesTheModelAlone) {
  auto m = xsa::test_fixtures::tiny_model();
  xsa::Gpt target = make_model(m, {}, "sa", 1);
  const std::string before = target->weights_checksum();
  auto refusal = [&](const std::string& bytes) {
    try {
      xsa::load_model_safetensors(target, bytes, "m.safetensors", true);
    } catch (const xsa::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto wider = m;
  wider.d_model = 64;
  EXPECT_NE(refusal(xsa::model_safetensors(make_model(wider, {}, "sa", 1), {})).find("has shape [64, 64]"),
            std::string::npos);
  auto untied = m;
  untied.tie_embeddings = false;
  EXPECT_NE(refusal(xsa::model_safetensors(make_model(untied, {}, "sa", 1), {}))
                .find("'lm_head.weight' is not a "
                      "parameter"),
            std::string::npos);
  auto normed = m;
  normed.embed_norm = false;
  EXPECT_NE(
      refusal(xsa::model_safetensors(make_model(normed, {}, "sa", 1), {})).find("no tensor 'ln_emb.weight'"),
      std::string::npos);
  EXPECT_EQ(target->weights_checksum(), before);
}

TEST(ExportTensors, ArchitectureConstantsAreTheModels) {
  const auto arch = xsa::model_architecture(xsa::test_fixtures::tiny_model(), xsa::OutputGate::kNone, 64);
  EXPECT_EQ(arch.at("xsa_eps").get<double>(), xsa::kXsaEps);
  // LibTorch's LayerNorm default ε and the RoPE base the model builds its tables with.
  EXPECT_EQ(arch.at("layer_norm_eps").get<double>(), torch::nn::LayerNormOptions({1}).eps());
  const auto rope = xsa::make_rope_tables(4, 4);
  const auto rope_from_base = xsa::make_rope_tables(4, 4, arch.at("rope_base").get<double>());
  EXPECT_TRUE(same_bits(rope.cos, rope_from_base.cos));
}
