// An export's config.json (records/exported_model.h) and model card (records/model_card.h).
#include <gtest/gtest.h>

#include <string>

#include "xsa/records/exported_model.h"
#include "xsa/records/model_card.h"
#include "xsa/util/error.h"

using nlohmann::json;

namespace {

xsa::Config two_layer_config() {
  xsa::Config c;
  c.name = "card";
  c.seed = 5;
  c.model.n_layer = 2;
  c.train.steps = 600;
  c.train.batch_size = 32;
  c.data.seq_len = 128;
  c.train.lr = 3e-3;
  return c;
}

xsa::ExportedModel exported(const xsa::Config& c, const xsa::VariantSpec& spec) {
  xsa::ExportedModel m;
  m.architecture = xsa::model_architecture(c.model, c.attention.output_gate, 4096);
  m.max_len = c.data.seq_len;
  m.variant = spec.name();
  m.layers = xsa::exported_layers(c, spec);
  m.lambda = {{1.0, 1.0}, {0.0, 0.0}};
  m.tokenizer_sha256 = std::string(64, 'a');
  m.bos_id = 1;
  m.eos_id = 2;
  m.provenance = {"runs/x", c.name, c.seed, c.train.steps, "0123", "4567", xsa::config_sha256(c), "0.1.0"};
  return m;
}

std::string input_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const xsa::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ExportedModel, RoundTripsThroughConfigJson) {
  const xsa::Config c = two_layer_config();
  const auto spec = *xsa::parse_variant_keyword("xsa@0");
  const xsa::ExportedModel m = exported(c, spec);
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].kind, xsa::VariantSpec::Kind::kFixed);
  EXPECT_EQ(m.layers[0].lambda, 1.0);  // layer 0 is XSA, layer 1 stays SA
  EXPECT_EQ(m.layers[1].lambda, 0.0);
  const json doc = xsa::to_json(m);
  EXPECT_EQ(doc.at("format"), "xsa.export/1");
  EXPECT_EQ(doc.at("variant").at("name"), "xsa@0");
  const xsa::ExportedModel back = xsa::parse_exported_model(json::parse(doc.dump()), "config.json");
  EXPECT_EQ(xsa::to_json(back), doc);
}

TEST(ExportedModel, LearnedLayersCarryTheirInitialLambda) {
  xsa::Config c = two_layer_config();
  c.attention.learned_init = 0.25;
  const auto m = exported(c, *xsa::parse_variant_keyword("learned"));
  EXPECT_EQ(m.layers[1].kind, xsa::VariantSpec::Kind::kLearned);
  EXPECT_EQ(xsa::to_json(m).at("variant").at("layers").at(1).at("initial_lambda"), 0.25);
}

TEST(ExportedModel, RefusesOtherFormatsAndMissingKeys) {
  json doc = xsa::to_json(exported(two_layer_config(), *xsa::parse_variant_keyword("xsa")));
  json other = doc;
  other["format"] = "xsa.export/9";
  EXPECT_NE(input_error([&] { xsa::parse_exported_model(other, "c.json"); }).find("format 'xsa.export/9'"),
            std::string::npos);
  other = doc;
  other["tokenizer"].erase("sha256");
  EXPECT_NE(input_error([&] { xsa::parse_exported_model(other, "c.json"); }).find("missing key sha256"),
            std::string::npos);
  other = doc;
  other["max_len"] = "long";
  EXPECT_NE(
      input_error([&] { xsa::parse_exported_model(other, "c.json"); }).find("max_len has the wrong type"),
      std::string::npos);
  other = doc;
  other["variant"]["layers"][0]["kind"] = "magic";
  EXPECT_NE(input_error([&] { xsa::parse_exported_model(other, "c.json"); }).find("unknown kind 'magic'"),
            std::string::npos);
}

TEST(ExportedModel, ArchitectureDifferencesAreNamed) {
  xsa::Config c = two_layer_config();
  const json want = xsa::model_architecture(c.model, c.attention.output_gate, 4096);
  EXPECT_EQ(input_error([&] { xsa::check_same_architecture(want, want, "c.json"); }), "");
  c.model.d_model = 64;
  c.model.qk_norm = true;
  const json had = xsa::model_architecture(c.model, c.attention.output_gate, 4096);
  const std::string m = input_error([&] { xsa::check_same_architecture(had, want, "c.json"); });
  EXPECT_NE(m.find("d_model 64 (config 128)"), std::string::npos) << m;
  EXPECT_NE(m.find("qk_norm true (config false)"), std::string::npos) << m;
  EXPECT_EQ(m.find("n_head"), std::string::npos) << m;
}

TEST(ExportedModel, ConfigHashIgnoresRuntimeAndLogging) {
  xsa::Config a = two_layer_config(), b = two_layer_config();
  b.runtime.threads = 2;
  b.log.tensorboard = !a.log.tensorboard;
  EXPECT_EQ(xsa::config_sha256(a), xsa::config_sha256(b));
  b.train.lr = 1e-2;
  EXPECT_NE(xsa::config_sha256(a), xsa::config_sha256(b));
  EXPECT_EQ(xsa::config_sha256(a).size(), 64u);
}

TEST(ModelCard, HasTheHubFrontMatterAndTheRunsNumbers) {
  const xsa::Config c = two_layer_config();
  xsa::ExperimentResult e;
  e.config = c;
  e.runs.resize(2);
  e.runs[0].variant = "sa";
  e.runs[1].variant = "xsa";
  e.runs[1].init_checksum = "0123";
  e.runs[1].final.val_loss = 2.34567;
  e.runs[1].final.val_loss_sem = 0.01234;
  e.comparisons.push_back({"sa", "xsa", -0.0421, 0.0032, 1.77});
  const std::string card = xsa::model_card(e, e.runs[1], exported(c, *xsa::parse_variant_keyword("xsa")));
  EXPECT_EQ(card.rfind("---\nlibrary_name: xsa\n", 0), 0u);
  for (const char* s :
       {"  - exclusive-self-attention\n", "datasets:\n  - roneneldan/TinyStories\n",
        "pipeline_tag: text-generation\n---\n", "| steps | 600 |", "| tokens | 2,457,600 (batch 32 × 128) |",
        "| learning rate | 0.003 ", "| seed | 5 |", "Final validation loss 2.3457 ± 0.0123",
        "Δ val loss = -0.0421 ± 0.0032", "+1.77%", "from scripts.reference.model import load_exported"})
    EXPECT_NE(card.find(s), std::string::npos) << s;
  const std::string baseline_card =
      xsa::model_card(e, e.runs[0], exported(c, *xsa::parse_variant_keyword("sa")));
  EXPECT_NE(baseline_card.find("This is the run's baseline"), std::string::npos);
}
