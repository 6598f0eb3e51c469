// Config module: YAML -> validated Config, --set overrides, λ shorthand, echo as JSON/YAML.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <string>
#include <vector>

#include "hostile_yaml.h"
#include "time_bound.h"
#include "xsa/config/config.h"
#include "xsa/sweep/sweep.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

const std::string kSrc = "configs/x.yaml";

// Parses and returns the InputError message ("" if it parsed).
std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(yaml, kSrc, overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Every bad input must give one line naming the file and the key.
void expect_error(const std::string& yaml, const std::string& key,
                  const std::vector<std::string>& overrides = {}, const std::string& also = "") {
  SCOPED_TRACE("yaml: " + yaml);
  std::string msg = error_of(yaml, overrides);
  ASSERT_FALSE(msg.empty()) << "expected an InputError";
  EXPECT_NE(msg.find(kSrc), std::string::npos) << msg;
  EXPECT_NE(msg.find(key), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  if (!also.empty()) {
    EXPECT_NE(msg.find(also), std::string::npos) << msg;
  }
}

TEST(Config, EmptyFileGivesStructDefaults) {
  Config c = parse_config("", kSrc);
  EXPECT_EQ(c.name, "default");
  EXPECT_EQ(c.seed, 1337u);
  EXPECT_EQ(c.data.dir, "data/tinystories");
  EXPECT_EQ(c.data.seq_len, 128);
  EXPECT_EQ(c.model.n_layer, 2);
  EXPECT_EQ(c.model.d_model, 128);
  EXPECT_EQ(c.model.n_head, 4);
  EXPECT_EQ(c.model.d_head, 32);
  EXPECT_EQ(c.model.pos, PositionEncoding::kRope);
  ASSERT_EQ(c.attention.variants.size(), 2u);
  EXPECT_EQ(c.attention.variants[0].name(), "sa");
  EXPECT_EQ(c.attention.variants[1].name(), "xsa");
  EXPECT_TRUE(c.attention.layers.empty());
  EXPECT_EQ(c.attention.impl, AttentionImpl::kFused);
  EXPECT_EQ(c.train.steps, 300);
  EXPECT_DOUBLE_EQ(c.train.lr, 1e-3);
  EXPECT_EQ(c.train.checkpoint_interval, 100);
  EXPECT_EQ(c.runtime.threads, 1);
  EXPECT_EQ(c.runtime.workers, 2);
  EXPECT_EQ(c.runtime.device, DeviceKind::kCpu);
  EXPECT_EQ(c.source, kSrc);
  EXPECT_TRUE(c == Config{});
}

TEST(Config, EveryKeyParsed) {
  const std::string yaml = R"(
name: custom
seed: 18446744073709551615
data: {dir: /tmp/d, seq_len: 64}
model: {n_layer: 3, d_model: 96, n_head: 6, d_head: 16, mlp_ratio: 2, pos: learned, embed_norm: false,
        qk_norm: true, tie_embeddings: false}
attention: {variants: [sa, 0.25, xsa, learned, gate, tanh_gate], layers: [0, 2], learned_init: 0.3, lambda_lr_scale: 30, impl: explicit,
            output_gate: headwise}
train: {steps: 40, batch_size: 4, lr: 3e-4, min_lr: 0, warmup_steps: 40, weight_decay: 0.0, beta1: 0.8,
        beta2: 0.99, grad_clip: 0, log_interval: 7, checkpoint_interval: 5}
eval: {interval: 11, batches: 3}
metrics: {bias_interval: 13, bias_batches: 2}
sample: {count: 0, tokens: 9, temperature: 0.7, top_k: 0, seed: 5}
runtime: {threads: 3, workers: 4, device: cuda}
)";
  Config c = parse_config(yaml, kSrc);
  EXPECT_EQ(c.name, "custom");
  EXPECT_EQ(c.seed, 18446744073709551615ull);
  EXPECT_EQ(c.data.dir, "/tmp/d");
  EXPECT_EQ(c.data.seq_len, 64);
  EXPECT_EQ(c.model.n_layer, 3);
  EXPECT_EQ(c.model.d_model, 96);
  EXPECT_EQ(c.model.n_head, 6);
  EXPECT_EQ(c.model.d_head, 16);
  EXPECT_EQ(c.model.mlp_ratio, 2);
  EXPECT_EQ(c.model.pos, PositionEncoding::kLearned);
  EXPECT_FALSE(c.model.embed_norm);
  EXPECT_TRUE(c.model.qk_norm);
  EXPECT_FALSE(c.model.tie_embeddings);
  EXPECT_EQ(c.attention.output_gate, OutputGate::kHeadwise);
  std::vector<std::string> names;
  for (const auto& v : c.attention.variants) names.push_back(v.name());
  EXPECT_EQ(names, (std::vector<std::string>{"sa", "lambda=0.25", "xsa", "learned", "gate", "tanh_gate"}));
  EXPECT_EQ(c.attention.variants[1].kind, VariantSpec::Kind::kFixed);
  EXPECT_DOUBLE_EQ(c.attention.variants[1].lambda, 0.25);
  EXPECT_DOUBLE_EQ(c.attention.variants[2].lambda, 1.0);
  EXPECT_EQ(c.attention.variants[3].kind, VariantSpec::Kind::kLearned);
  EXPECT_EQ(c.attention.variants[4].kind, VariantSpec::Kind::kGate);
  EXPECT_EQ(c.attention.variants[5].kind, VariantSpec::Kind::kTanhGate);
  EXPECT_EQ(c.attention.variants[5].to_json(), "tanh_gate");
  EXPECT_EQ(c.attention.impl, AttentionImpl::kExplicit);
  EXPECT_EQ(c.attention.layers, (std::vector<int>{0, 2}));
  EXPECT_DOUBLE_EQ(c.attention.learned_init, 0.3);
  EXPECT_DOUBLE_EQ(c.attention.lambda_lr_scale, 30.0);
  EXPECT_EQ(c.train.steps, 40);
  EXPECT_EQ(c.train.batch_size, 4);
  EXPECT_DOUBLE_EQ(c.train.lr, 3e-4);
  EXPECT_DOUBLE_EQ(c.train.min_lr, 0.0);
  EXPECT_EQ(c.train.warmup_steps, 40);
  EXPECT_DOUBLE_EQ(c.train.weight_decay, 0.0);
  EXPECT_DOUBLE_EQ(c.train.beta1, 0.8);
  EXPECT_DOUBLE_EQ(c.train.beta2, 0.99);
  EXPECT_DOUBLE_EQ(c.train.grad_clip, 0.0);
  EXPECT_EQ(c.train.log_interval, 7);
  EXPECT_EQ(c.train.checkpoint_interval, 5);
  EXPECT_EQ(c.eval.interval, 11);
  EXPECT_EQ(c.eval.batches, 3);
  EXPECT_EQ(c.metrics.bias_interval, 13);
  EXPECT_EQ(c.metrics.bias_batches, 2);
  EXPECT_EQ(c.sample.count, 0);
  EXPECT_EQ(c.sample.tokens, 9);
  EXPECT_DOUBLE_EQ(c.sample.temperature, 0.7);
  EXPECT_EQ(c.sample.top_k, 0);
  EXPECT_EQ(c.sample.seed, 5u);
  EXPECT_EQ(c.runtime.threads, 3);
  EXPECT_EQ(c.runtime.workers, 4);
  EXPECT_EQ(c.runtime.device, DeviceKind::kCuda);  // parsed here; refused at run time without CUDA
}

TEST(Config, VariantNames) {
  Config c = parse_config("attention: {variants: [0, 1, 0.5, 0.125, sa, xsa]}", kSrc);
  std::vector<std::string> names;
  for (const auto& v : c.attention.variants) names.push_back(v.name());
  // A number keeps its λ name, so an explicit 0 is distinct from the "sa" keyword.
  EXPECT_EQ(names,
            (std::vector<std::string>{"lambda=0", "lambda=1", "lambda=0.5", "lambda=0.125", "sa", "xsa"}));
  EXPECT_TRUE(c.attention.variants[0].is_sa());
  EXPECT_TRUE(c.attention.variants[4].is_sa());
  EXPECT_FALSE(c.attention.variants[5].is_sa());
  EXPECT_EQ(shortest_number(3e-4), "0.0003");
  EXPECT_EQ(shortest_number(0.1), "0.1");
  EXPECT_EQ(shortest_number(1.0), "1");
}

// "<variant>@<layers>": a variant on its own layers, the others SA; its name and spelling round-trip.
TEST(Config, VariantsWithTheirOwnLayers) {
  Config c = parse_config(
      "model: {n_layer: 4}\nattention: {variants: [sa, xsa, xsa@2-3, xsa@0-1, '0.5@1+3', tanh_gate@3, "
      "learned@0]}",
      kSrc);
  std::vector<std::string> names;
  for (const auto& v : c.attention.variants) names.push_back(v.name());
  EXPECT_EQ(names, (std::vector<std::string>{"sa", "xsa", "xsa@2-3", "xsa@0-1", "lambda=0.5@1+3",
                                             "tanh_gate@3", "learned@0"}));
  EXPECT_EQ(c.attention.variants[2].layers, (std::vector<int>{2, 3}));
  EXPECT_DOUBLE_EQ(c.attention.variants[4].lambda, 0.5);
  EXPECT_FALSE(c.attention.variants[4].from_keyword);
  EXPECT_EQ(c.attention.variants[4].layers, (std::vector<int>{1, 3}));
  EXPECT_EQ(c.attention.variants[5].kind, VariantSpec::Kind::kTanhGate);
  EXPECT_TRUE(c.attention.variants[1].layers.empty());
  EXPECT_EQ(c.attention.variants[4].to_json(), "0.5@1+3");
  EXPECT_TRUE(parse_config(config_to_yaml(c), kSrc) == c);
  // Layer lists: ascending, runs as a-b, joined by +; the parser takes any order and refuses repeats.
  EXPECT_EQ(layer_list_text({3, 0, 1, 2, 5}), "0-3+5");
  EXPECT_EQ(*parse_layer_list("5+0-2"), (std::vector<int>{0, 1, 2, 5}));
  for (const char* bad : {"", "+1", "1+", "2-1", "1-", "-1", "1+1", "0-2+2", "a", "1.0", "1 "})
    EXPECT_FALSE(parse_layer_list(bad)) << bad;
}

TEST(Config, OverridesApplyBeforeValidation) {
  Config c = parse_config("train: {steps: 10}\n", kSrc,
                          {"train.steps=50", "attention.variants=[0,0.5,1]", "train.lr=3e-4", "name=run-a",
                           "seed=7", "model.pos=learned", "data.dir=x/y"});
  EXPECT_EQ(c.train.steps, 50);
  EXPECT_DOUBLE_EQ(c.train.lr, 3e-4);
  EXPECT_EQ(c.name, "run-a");
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.model.pos, PositionEncoding::kLearned);
  EXPECT_EQ(c.data.dir, "x/y");
  ASSERT_EQ(c.attention.variants.size(), 3u);
  EXPECT_EQ(c.attention.variants[1].name(), "lambda=0.5");
  // The last --set of a key wins.
  EXPECT_EQ(parse_config("", kSrc, {"train.steps=50", "train.steps=60"}).train.steps, 60);
  // An override may make an otherwise invalid file valid (validation happens after overrides).
  EXPECT_EQ(parse_config("train: {steps: 0}", kSrc, {"train.steps=3", "train.warmup_steps=1"}).train.steps,
            3);
}

TEST(Config, LambdaShorthand) {
  Config c = parse_config("attention: {lambda: 0.25}", kSrc);
  ASSERT_EQ(c.attention.variants.size(), 2u);
  EXPECT_EQ(c.attention.variants[0].name(), "sa");
  EXPECT_EQ(c.attention.variants[1].name(), "lambda=0.25");
  // λ=0 gets its own paired sa baseline (a bit-identity check), not a duplicate-name error.
  Config zero = parse_config("", kSrc, {"attention.lambda=0"});
  EXPECT_EQ(zero.attention.variants[1].name(), "lambda=0");
  // A --set of lambda replaces the file's variants and vice versa (a sweep over default.yaml).
  Config over = parse_config("attention: {variants: [sa, xsa, 0.5]}", kSrc, {"attention.lambda=0.75"});
  ASSERT_EQ(over.attention.variants.size(), 2u);
  EXPECT_EQ(over.attention.variants[1].name(), "lambda=0.75");
  Config back = parse_config("attention: {lambda: 0.5}", kSrc, {"attention.variants=[xsa]"});
  ASSERT_EQ(back.attention.variants.size(), 1u);
  EXPECT_EQ(back.attention.variants[0].name(), "xsa");
  // The shorthand is not part of the stored config.
  EXPECT_FALSE(config_to_json(c)["attention"].contains("lambda"));
  EXPECT_TRUE(is_config_key("attention.lambda"));
}

TEST(Config, RoundTripThroughYamlAndJson) {
  const std::string yaml = R"(
name: "odd: name # with yaml chars"
seed: 42
data: {dir: "data/with space", seq_len: 16}
model: {n_layer: 4, pos: learned, embed_norm: false}
attention: {variants: [sa, 0, 1, 0.1, 0.3333333333333333, xsa, learned, gate], layers: [3, 1], learned_init: 0.7}
train: {steps: 9, lr: 3e-4, min_lr: 1.5e-5, warmup_steps: 2, beta2: 0.999, checkpoint_interval: 3}
sample: {temperature: 0.9, seed: 12345678901234}
)";
  Config c = parse_config(yaml, kSrc);
  std::string echoed = config_to_yaml(c);
  Config again = parse_config(echoed, "echo.yaml");
  EXPECT_TRUE(again == c) << echoed;
  EXPECT_EQ(config_to_json(again), config_to_json(c));
  EXPECT_EQ(again.name, "odd: name # with yaml chars");
  EXPECT_EQ(again.attention.variants[1].name(), "lambda=0");
  EXPECT_EQ(again.attention.variants[2].name(), "lambda=1");
  EXPECT_EQ(again.attention.layers, (std::vector<int>{3, 1}));
  EXPECT_EQ(again.train.min_lr, 1.5e-5);
  EXPECT_EQ(again.attention.variants[4].lambda, 0.3333333333333333);
  // JSON is YAML: the JSON echo parses back too.
  EXPECT_TRUE(parse_config(config_to_json(c).dump(), "echo.json") == c);
  // A changed field is seen by ==.
  Config changed = c;
  changed.train.beta1 = 0.5;
  EXPECT_FALSE(changed == c);
  // JSON shape: sections with keys, variants in their YAML spelling.
  auto j = config_to_json(c);
  EXPECT_EQ(j["train"]["steps"], 9);
  EXPECT_EQ(j["attention"]["variants"][0], "sa");
  EXPECT_EQ(j["attention"]["variants"][3], 0.1);
}

// The node at a dotted key of a YAML document (undefined where the document does not have it).
YAML::Node at_dotted_key(const YAML::Node& root, const std::string& dotted) {
  const auto dot = dotted.find('.');
  const YAML::Node child = root[dotted.substr(0, dot)];  // const operator[]: looks, never inserts
  if (dot == std::string::npos || !child.IsDefined()) return child;
  return at_dotted_key(child, dotted.substr(dot + 1));
}

TEST(Config, ShippedConfigsParse) {
  Config d = load_config(std::string(XSA_SOURCE_DIR) + "/configs/default.yaml");
  EXPECT_EQ(d.model.d_model, 128);
  EXPECT_EQ(d.train.checkpoint_interval, 100);
  // configs/default.yaml lists every key with its default: each key is in the file, and the struct defaults
  // are the same values.
  const YAML::Node file = YAML::LoadFile(std::string(XSA_SOURCE_DIR) + "/configs/default.yaml");
  for (const auto& key : config_keys()) {
    if (key == "attention.lambda")
      continue;  // a shorthand that replaces attention.variants, which the file sets
    EXPECT_TRUE(at_dotted_key(file, key).IsDefined()) << "configs/default.yaml does not list " << key;
  }
  EXPECT_TRUE(d == Config{}) << config_to_yaml(d) << "\nvs struct defaults:\n" << config_to_yaml(Config{});
  EXPECT_EQ(d.attention.variants.size(), 2u);
  Config s = load_config(std::string(XSA_SOURCE_DIR) + "/configs/smoke.yaml");
  EXPECT_EQ(s.train.steps, 20);
  EXPECT_EQ(s.data.seq_len, 32);
  EXPECT_EQ(s.model.n_head * s.model.d_head, s.model.d_model);
}

TEST(Config, ConfigKeys) {
  EXPECT_TRUE(is_config_key("train.steps"));
  EXPECT_TRUE(is_config_key("seed"));
  EXPECT_TRUE(is_config_key("attention.variants"));
  EXPECT_FALSE(is_config_key("train"));
  EXPECT_FALSE(is_config_key("model.n_heads"));
  EXPECT_FALSE(is_config_key("source"));
  for (const auto& k : config_keys()) EXPECT_TRUE(is_config_key(k)) << k;
}

TEST(ConfigErrors, UnknownKeys) {
  expect_error("model: {n_heads: 4}", "model.n_heads", {}, "known in model: n_layer, d_model");
  expect_error("foo: 1", "'foo'", {}, "known: name, seed, data");
  expect_error("model:\n  n_layer: 2\ntrain: {steps: 5, step: 4}", "train.step");
  expect_error("", "train.stpes", {"train.stpes=5"}, "--set train.stpes=5");
  expect_error("", "model", {"model=3"});
}

TEST(ConfigErrors, WrongTypes) {
  expect_error("train: {steps: abc}", "train.steps", {}, "expected an integer in [1, 100,000,000]");
  expect_error("train: {steps: 1.5}", "train.steps");
  expect_error("train: {steps: \"300\"}", "train.steps", {}, "quoted");
  expect_error("train: {steps: [1]}", "train.steps", {}, "a list");
  expect_error("train: {steps: }", "train.steps", {}, "no value");
  expect_error("train: {lr: fast}", "train.lr");
  expect_error("train: {lr: .nan}", "train.lr");
  expect_error("model: {embed_norm: 1}", "model.embed_norm", {}, "true or false");
  expect_error("model: {qk_norm: yes please}", "model.qk_norm", {}, "true or false");
  expect_error("attention: {output_gate: sometimes}", "attention.output_gate", {},
               "expected one of none headwise elementwise");
  expect_error("model: {pos: alibi}", "model.pos", {}, "expected one of rope learned");
  expect_error("seed: -1", "seed");
  expect_error("data: {dir: [a]}", "data.dir");
  expect_error("name: ''", "name");
  expect_error("model: 3", "model", {}, "expected a map of model keys");
  expect_error("data: {seq_len: 99999999999}", "data.seq_len");
  expect_error("- a\n- b", "expected a map");
}

TEST(ConfigErrors, OutOfRange) {
  expect_error("model: {n_head: 0}", "model.n_head");
  expect_error("model: {n_layer: -1}", "model.n_layer");
  expect_error("model: {d_model: 0}", "model.d_model");
  expect_error("model: {d_head: 0}", "model.d_head");
  expect_error("model: {pos: alibi}", "model.pos", {}, "rope learned");
  expect_error("data: {seq_len: 0}", "data.seq_len");
  expect_error("train: {steps: 0}", "train.steps");
  expect_error("train: {batch_size: -4}", "train.batch_size");
  expect_error("train: {lr: 0}", "train.lr");
  expect_error("train: {min_lr: -0.1}", "train.min_lr");
  expect_error("train: {lr: 0.001, min_lr: 0.01}", "train.min_lr", {}, "train.lr");
  expect_error("train: {steps: 10, warmup_steps: 11}", "train.warmup_steps", {}, "train.steps");
  expect_error("train: {warmup_steps: -1}", "train.warmup_steps");
  expect_error("model: {d_head: 15}", "model.d_head", {}, "even integer when model.pos = rope");
  EXPECT_NO_THROW(parse_config("model: {d_head: 15, pos: learned}", "x.yaml"));
  expect_error("train: {grad_clip: -1}", "train.grad_clip");
  expect_error("train: {beta1: 1}", "train.beta1");
  expect_error("train: {beta2: -0.1}", "train.beta2");
  expect_error("train: {log_interval: 0}", "train.log_interval");
  expect_error("train: {checkpoint_interval: -1}", "train.checkpoint_interval");
  expect_error("train: {weight_decay: -1}", "train.weight_decay");
  expect_error("eval: {interval: 0}", "eval.interval");
  expect_error("eval: {batches: 0}", "eval.batches");
  expect_error("metrics: {bias_interval: 0}", "metrics.bias_interval");
  expect_error("metrics: {bias_batches: 0}", "metrics.bias_batches");
  expect_error("sample: {temperature: 0}", "sample.temperature");
  expect_error("sample: {tokens: 0}", "sample.tokens");
  expect_error("sample: {count: -1}", "sample.count");
  expect_error("sample: {top_k: -1}", "sample.top_k");
  expect_error("runtime: {threads: 0}", "runtime.threads");
  expect_error("runtime: {workers: 0}", "runtime.workers");
  expect_error("attention: {learned_init: 1}", "attention.learned_init");
  expect_error("attention: {learned_init: 0}", "attention.learned_init");
  expect_error("attention: {lambda_lr_scale: 0}", "attention.lambda_lr_scale");
  expect_error("attention: {lambda_lr_scale: 1001}", "attention.lambda_lr_scale");
}

// Every count that sets an amount of work has an upper bound, checked when the config is read: a typo is
// refused before anything is built. The bound is inclusive and the message gives the range.
TEST(ConfigErrors, WorkCountsHaveUpperBounds) {
  struct Bound {
    const char* section;
    const char* leaf;
    long long max;
    const char* range;
  };
  const Bound bounds[] = {
      {"train", "steps", 100000000, "[1, 100,000,000]"},
      {"train", "log_interval", 100000000, "[1, 100,000,000]"},
      {"train", "checkpoint_interval", 100000000, "[0, 100,000,000]"},
      {"eval", "interval", 100000000, "[1, 100,000,000]"},
      {"eval", "batches", 10000, "[1, 10,000]"},
      {"metrics", "bias_interval", 100000000, "[1, 100,000,000]"},
      {"metrics", "bias_batches", 1000, "[1, 1,000]"},
      {"sample", "count", 1000, "[0, 1,000]"},
      {"sample", "tokens", 100000, "[1, 100,000]"},
      {"data", "seq_len", 1 << 20, "[1, 1,048,576]"},
      {"runtime", "threads", 1024, "[1, 1,024]"},
      {"runtime", "workers", 1024, "[1, 1,024]"},
      {"model", "n_layer", 1024, "[1, 1,024]"},  // kMaxLayers, also the cap on layer indices
  };
  for (const auto& b : bounds) {
    const std::string key = std::string(b.section) + "." + b.leaf;
    const std::string at_max = key + "=" + std::to_string(b.max);
    const std::string above = key + "=" + std::to_string(b.max + 1);
    // train.steps at its maximum needs warmup_steps <= steps, which the default satisfies.
    EXPECT_NO_THROW(parse_config("", kSrc, {at_max})) << at_max;
    expect_error("", key, {above}, std::string("expected an integer in ") + b.range);
  }
}

TEST(ConfigErrors, Attention) {
  expect_error("attention: {variants: []}", "attention.variants", {}, "non-empty");
  expect_error("attention: {variants: xsa}", "attention.variants");
  expect_error("attention: {variants: [sa, 1.5]}", "attention.variants", {}, "entry 2");
  expect_error("attention: {variants: [sa, -0.5]}", "attention.variants");
  expect_error("attention: {variants: [sa, xsax]}", "attention.variants", {}, "xsax");
  expect_error("attention: {variants: [sa, xsa, sa]}", "attention.variants", {}, "duplicate variant 'sa'");
  expect_error("attention: {variants: [0.5, 0.50]}", "attention.variants", {}, "lambda=0.5");
  expect_error("attention: {layers: [0, 2]}", "attention.layers", {}, "model.n_layer = 2");
  expect_error("attention: {layers: [1, 1]}", "attention.layers", {}, "twice");
  expect_error("attention: {layers: [-1]}", "attention.layers");
  expect_error("attention: {variants: [sa, tanh]}", "attention.variants", {}, "tanh_gate");
  expect_error("attention: {variants: [sa, xsa@]}", "attention.variants", {}, "xsa@2-3");
  expect_error("attention: {variants: [sa, xsa@2]}", "attention.variants", {}, "variant 'xsa@2': layer 2");
  expect_error("attention: {variants: [sa, xsa@1-0]}", "attention.variants", {}, "entry 2");
  expect_error("attention: {variants: [sa, '1.5@1']}", "attention.variants", {}, "entry 2");
  expect_error("attention: {variants: [xsa@1, xsa@1]}", "attention.variants", {},
               "duplicate variant 'xsa@1'");
  expect_error("attention: {impl: flash}", "attention.impl", {}, "one of fused explicit");
  expect_error("attention: {impl: ''}", "attention.impl");
  expect_error("attention: {lambda: 2}", "attention.lambda");
  expect_error("attention: {lambda: sa}", "attention.lambda");
  expect_error("attention: {lambda: 0.5, variants: [sa]}", "attention.lambda", {}, "both");
  expect_error("", "attention.lambda", {"attention.lambda=0.5", "attention.variants=[sa]"}, "both");
}

using test_support::kLooseSeconds;
using test_support::seconds_of;

using test_support::yaml_laughs;

// Issue 40: a layer list is parsed in time bounded by its text, not by the numbers in it. "xsa@0-999999" took
// over a minute to be refused (each layer of the range expanded and searched for among those before it).
TEST(ConfigErrors, LayerRangesAreCheckedBeforeTheyAreExpanded) {
  double s = seconds_of([] {
    expect_error("", "attention.variants", {"attention.variants=[sa,xsa@0-999999]"},
                 "entry 2: 'xsa@0-999999': layer 999999 is out of range [0, 1023] (model.n_layer is at most "
                 "1024)");
    expect_error("attention: {variants: [sa, '0.5@1+0-99999999999999999999999']}", "attention.variants", {},
                 "layer 99999999999999999999999 is out of range [0, 1023]");
    expect_error("attention: {lambda: xsa@0-999999}", "attention.lambda", {},
                 "'xsa@0-999999': layer 999999 is out of range [0, 1023]");
    // Under the cap, against the model: the largest layer out of range, and the range allowed.
    expect_error("", "attention.variants", {"attention.variants=[sa,xsa@0-1023]"},
                 "variant 'xsa@0-1023': layer 1023 is out of range [0, 1] (model.n_layer = 2)");
    // Overlaps are found with one flag per layer, not by searching the layers before.
    std::string overlapping = "xsa@0-1023";
    for (int i = 0; i < 20000; ++i) overlapping += "+0-1023";
    expect_error("", "attention.variants", {"attention.variants=[sa," + overlapping + "]"},
                 "layer 0 listed twice");
  });
  EXPECT_LT(s, kLooseSeconds);
  std::string why;
  s = seconds_of([&] { EXPECT_FALSE(parse_layer_list("0-999999", &why)); });
  EXPECT_LT(s, kLooseSeconds);
  EXPECT_EQ(why, "layer 999999 is out of range [0, 1023] (model.n_layer is at most 1024)");
  why.clear();
  EXPECT_FALSE(parse_layer_list("3+0-5", &why));
  EXPECT_EQ(why, "layer 3 listed twice");
  why.clear();
  EXPECT_FALSE(parse_layer_list("1 ", &why));
  EXPECT_EQ(why, "");  // malformed: the caller's "expected ..." says the rest
  EXPECT_EQ(parse_layer_list("1023+0-1022")->size(), 1024u);
  EXPECT_EQ(*parse_layer_list("007"), std::vector<int>{7});
}

// attention.layers: each entry checked against the cap as it is read, repeats found in one pass (a list of
// 100,000 layers was compared pair by pair: 2 s).
TEST(ConfigErrors, AttentionLayersAreCheckedInOnePass) {
  std::string many = "attention: {layers: [";
  for (int i = 0; i < 100000; ++i) many += (i ? ", " : "") + std::to_string(i);
  many += "]}";
  const double s = seconds_of([&] {
    expect_error(many, "attention.layers", {},
                 "entry 1025: layer 1024 is out of range [0, 1023] (model.n_layer is at most 1024)");
    expect_error("attention: {layers: [0, 2147483648]}", "attention.layers", {},
                 "entry 2: layer 2147483648 is out of range");
    expect_error("model: {n_layer: 4}\nattention: {layers: [3, 1, 7, 5]}", "attention.layers", {},
                 "layer 7 is out of range [0, 3] (model.n_layer = 4)");
    expect_error("attention: {layers: [1, 0, 1]}", "attention.layers", {}, "layer 1 listed twice");
  });
  EXPECT_LT(s, kLooseSeconds);
  EXPECT_EQ(parse_config("model: {n_layer: 1024}\nattention: {layers: [1023, 0]}", kSrc).attention.layers,
            (std::vector<int>{1023, 0}));
}

// Repeated variants are found in n log n: 20,001 variants took four minutes when every pair was compared.
TEST(ConfigErrors, RepeatedVariantsAreFoundWithoutComparingEveryPair) {
  std::string variants = "attention: {variants: [sa";
  for (int i = 1; i <= 20000; ++i) variants += ", " + shortest_number(i / 20000.0);
  const double s = seconds_of([&] {
    EXPECT_EQ(parse_config(variants + "]}", kSrc).attention.variants.size(), 20001u);
    expect_error(variants + ", 0.50]}", "attention.variants", {}, "duplicate variant 'lambda=0.5'");
  });
  EXPECT_LT(s, kLooseSeconds);
}

// yaml-cpp keeps an alias as a second reference to its anchor's node: nested aliases are a tree of 10^10
// leaves in a few hundred bytes. The config reader never walks a list's elements deeper than one level of
// scalars, so such a value is refused at its first entry, in a file or in --set.
TEST(ConfigErrors, NestedAliasesAreNotWalked) {
  const std::string laughs = yaml_laughs(9);
  const double s = seconds_of([&] {
    expect_error("attention: {variants: " + laughs + "}", "attention.variants", {}, "entry 1: got a list");
    expect_error("", "attention.variants", {"attention.variants=" + laughs}, "entry 1: got a list");
    expect_error("attention: {layers: " + laughs + "}", "attention.layers", {}, "entry 1: got a list");
    expect_error("", "seed", {"seed=" + laughs}, "got a list");
    expect_error("train: {steps: " + laughs + "}", "train.steps", {}, "got a list");
  });
  EXPECT_LT(s, kLooseSeconds);
}

TEST(ConfigErrors, MalformedYamlHasLineAndColumn) {
  std::string msg = error_of("train:\n  steps: [1, 2\n");
  ASSERT_FALSE(msg.empty());
  EXPECT_EQ(msg.rfind(kSrc + ":", 0), 0u) << msg;
  EXPECT_NE(msg.find("invalid YAML"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  msg = error_of("a: b: c\n");
  EXPECT_NE(msg.find(kSrc + ":1:"), std::string::npos) << msg;
}

// Found by fuzz/fuzz_config: a string value that is not UTF-8 was accepted, and writing the resolved config
// (config.yaml, results.json) then threw nlohmann's type_error, reported as a runtime failure (exit 1).
TEST(ConfigErrors, TextThatIsNotUtf8) {
  expect_error(
      "name: ok\ndata: {dir: d\xF0"
      "ata}\n",
      ":2: byte 22 is not UTF-8");
  expect_error("name: \xC0\xAF\n", "byte 6 is not UTF-8");  // overlong "/"
  expect_error("", "--set data.dir=...: not UTF-8", {"data.dir=\xFF"});
  EXPECT_EQ(error_of("name: caf\xC3\xA9\n"), "");
}

// Found by fuzz_config: NUL bytes make yaml-cpp decode the text as UTF-32 into invalid UTF-8, and a \U escape
// beyond U+10FFFF decodes to bytes that are not UTF-8; both must be bad input, not a crash when JSON is
// written.
TEST(ConfigErrors, TextThatDecodesToInvalidUtf8) {
  expect_error("", "--set name=...: contains a NUL byte",
               {std::string("name=\x01\x00\x00\x00tetraind name\"", 22)});
  expect_error(std::string("name: a\0b\n", 10), "byte 7 is a NUL byte");
  expect_error("name: \"\\U0011FFFF\"\n", "invalid unicode");  // yaml-cpp refuses this one itself
  expect_error("name: \"\\uD800\"\n", "invalid unicode");      // and a lone surrogate
}

TEST(ConfigErrors, BadOverrides) {
  expect_error("", "train.steps", {"train.steps"}, "expected key=value");
  expect_error("", "=5", {"=5"}, "expected key=value");
  expect_error("", "train.steps", {"train.steps=abc"}, "--set train.steps=abc");
  expect_error("", "train.steps", {"train.steps=[1,"}, "not valid YAML");
  expect_error("", "attention.variants", {"attention.variants=[sa,sa]"}, "duplicate");
  expect_error("", "train.min_lr", {"train.min_lr=1"}, "--set train.min_lr=1");
}

TEST(ConfigErrors, LoadMissingFileNamesIt) {
  try {
    load_config("/nonexistent/cfg.yaml");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/cfg.yaml"), std::string::npos);
  }
}

// A checkpoint's identity written before attention.lambda_lr_scale existed must still match a config that
// has the key at its default (1), and only then.
TEST(Config, RecordedConfigGetsDefaultsForKeysAddedLater) {
  Config c;
  c.seed = 7;
  c.train.steps = 1200;
  nlohmann::json now = config_to_json(c);
  now.erase("runtime");  // as in checkpoint identities
  nlohmann::json old = now;
  old["attention"].erase("lambda_lr_scale");
  ASSERT_NE(old, now);
  EXPECT_EQ(config_json_with_defaults(old), now);
  // Recorded values stay as they were, including a non-default value of the new key.
  old["attention"]["lambda_lr_scale"] = 30.0;
  const nlohmann::json filled = config_json_with_defaults(old);
  EXPECT_EQ(filled["attention"]["lambda_lr_scale"], 30.0);
  EXPECT_EQ(filled["seed"], 7);
  EXPECT_EQ(filled["train"]["steps"], 1200);
  EXPECT_FALSE(filled.contains("runtime"));  // a section the record left out stays out
  EXPECT_NE(filled, now);
}

// attention.impl came with the fused kernel, whose default is "fused"; everything recorded before it ran the
// explicit attention, so a record without the key reads back as "explicit", in both readers.
TEST(Config, RecordWithoutAttentionImplRanExplicit) {
  Config c;
  ASSERT_EQ(c.attention.impl, AttentionImpl::kFused);
  nlohmann::json old = config_to_json(c);
  old.erase("runtime");
  old["attention"].erase("impl");
  EXPECT_EQ(config_json_with_defaults(old)["attention"]["impl"], "explicit");
  EXPECT_EQ(config_from_record(old, "results.json: config").attention.impl, AttentionImpl::kExplicit);
  old["attention"]["impl"] = "fused";  // a recorded value stays
  EXPECT_EQ(config_json_with_defaults(old)["attention"]["impl"], "fused");
  EXPECT_EQ(config_from_record(old, "results.json: config").attention.impl, AttentionImpl::kFused);
}

TEST(Config, AttentionImplSpellingsAreTheKeysChoices) {
  EXPECT_EQ(parse_choice<AttentionImpl>("fused"), AttentionImpl::kFused);
  EXPECT_EQ(parse_choice<AttentionImpl>("explicit"), AttentionImpl::kExplicit);
  EXPECT_STREQ(choice_name(AttentionImpl::kExplicit), "explicit");
  EXPECT_EQ(choice_names<AttentionImpl>(), (std::vector<std::string>{"fused", "explicit"}));
  EXPECT_EQ(parse_choice<AttentionImpl>("flash"), std::nullopt);
  EXPECT_EQ(choice_names<PositionEncoding>(), (std::vector<std::string>{"rope", "learned"}));
  EXPECT_EQ(choice_names<PrecisionRequest>(), (std::vector<std::string>{"fp32", "bf16", "auto"}));
  EXPECT_EQ(parse_choice<PrecisionRequest>("auto"), PrecisionRequest::kAuto);
  EXPECT_STREQ(choice_name(PositionEncoding::kLearned), "learned");
  EXPECT_EQ(choice_names<DeviceKind>(), (std::vector<std::string>{"cpu", "cuda"}));
  EXPECT_EQ(parse_choice<DeviceKind>("gpu"), std::nullopt);
  // The key refuses what the parser refuses, naming the allowed values.
  try {
    parse_config("attention: {impl: flash}\n", "c.yaml");
    ADD_FAILURE() << "attention.impl: flash was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("attention.impl"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("explicit"), std::string::npos) << e.what();
  }
}

TEST(Config, IdentityIsTheConfigWithoutRuntimeAndLog) {
  const Config c = parse_config("train:\n  lr: 0.01\nruntime:\n  threads: 2\n", kSrc);
  nlohmann::json want = config_to_json(c);
  ASSERT_TRUE(want.contains("runtime"));
  ASSERT_TRUE(want.contains("log"));
  want.erase("runtime");
  want.erase("log");
  EXPECT_EQ(config_identity_json(c), want);
  Config other_threads = c;
  other_threads.runtime.threads = 1;
  other_threads.log.tensorboard = !c.log.tensorboard;
  EXPECT_EQ(config_identity_json(other_threads), config_identity_json(c));
  Config other_lr = c;
  other_lr.train.lr = 0.02;
  EXPECT_NE(config_identity_json(other_lr), config_identity_json(c));
}

}  // namespace
}  // namespace xsa

namespace xsa {
namespace {

// A key given twice in one map is refused (yaml-cpp keeps both; a reader would take one without a word), in a
// section and at the top, in a config and in a sweep file; the same key in two sections is no ambiguity.
TEST(ConfigErrors, AKeyGivenTwiceInOneMapIsRefused) {
  auto refusal = [](const std::string& yaml) {
    try {
      parse_config(yaml, "c.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(refusal("train:\n  steps: 5\n  steps: 10\n"),
            "c.yaml:3: the key 'steps' appears twice in one map; expected each key once");
  EXPECT_EQ(refusal("train: {steps: 5}\nseed: 1\ntrain: {lr: 0.1}\n"),
            "c.yaml:3: the key 'train' appears twice in one map; expected each key once");
  EXPECT_EQ(refusal("train: {steps: 50}\neval: {steps: 5}\n").find("appears twice"), std::string::npos);
  try {
    parse_sweep("base: ../default.yaml\ngrid:\n  seed: [1]\n  seed: [2]\n", "s.yaml");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "s.yaml:4: the key 'seed' appears twice in one map; expected each key once");
  }
}

}  // namespace
}  // namespace xsa
