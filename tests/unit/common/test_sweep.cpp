// Sweep files: parsing, grid expansion (order, overrides, run ids), validation and sharding.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hostile_yaml.h"
#include "time_bound.h"
#include "xsa/sweep/runner.h"
#include "xsa/sweep/sweep.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

const std::string kBase = std::string(XSA_FIXTURES_DIR) + "/sweep/base.yaml";
const std::string kSweepPath = "sweeps/s.yaml";

SweepSpec spec_of(const std::string& body) {
  return parse_sweep("base: " + kBase + "\n" + body, kSweepPath);
}

std::vector<std::string> ids(const std::vector<SweepPoint>& points) {
  std::vector<std::string> out;
  for (const auto& p : points) out.push_back(p.run_id);
  return out;
}

// Parses (and validates) and returns the InputError message, "" if accepted.
std::string error_of(const std::string& text) {
  try {
    SweepSpec spec = parse_sweep(text, kSweepPath);
    validate_points(spec, expand_grid(spec));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::string& text, const std::string& must_contain) {
  SCOPED_TRACE(text);
  std::string msg = error_of(text);
  ASSERT_FALSE(msg.empty()) << "expected an InputError";
  EXPECT_NE(msg.find(kSweepPath), std::string::npos) << msg;
  EXPECT_NE(msg.find(must_contain), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

using test_support::kLooseSeconds;
using test_support::seconds_of;

using test_support::yaml_laughs;

TEST(SweepGrid, CartesianProductLastKeyFastest) {
  SweepSpec spec = spec_of("grid: {attention.lambda: [0.0, 0.5], data.seq_len: [64, 128], seed: [1, 2, 3]}");
  auto points = expand_grid(spec);
  ASSERT_EQ(points.size(), 12u);
  EXPECT_EQ(points[0].run_id, "lambda=0_seq_len=64_seed=1");
  EXPECT_EQ(points[1].run_id, "lambda=0_seq_len=64_seed=2");
  EXPECT_EQ(points[3].run_id, "lambda=0_seq_len=128_seed=1");
  EXPECT_EQ(points[6].run_id, "lambda=0.5_seq_len=64_seed=1");
  EXPECT_EQ(points[11].run_id, "lambda=0.5_seq_len=128_seed=3");
  EXPECT_EQ(points[11].overrides,
            (std::vector<std::string>{"attention.lambda=0.5", "data.seq_len=128", "seed=3"}));
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].index, i);
  EXPECT_EQ(points[6].values["attention.lambda"], 0.5);
  EXPECT_EQ(points[6].values["seed"], 1);
  EXPECT_EQ(spec.name, "s");  // file stem
  EXPECT_EQ(spec.base_path, kBase);
}

TEST(SweepGrid, SingleValuesAndSetAreOverridesNotIds) {
  SweepSpec spec = spec_of(
      "name: mine\ngrid: {attention.lambda: [1.0], data.seq_len: [64, 256]}\nset: {train.steps: 5, name: \"a "
      "b\"}");
  auto points = expand_grid(spec);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(ids(points), (std::vector<std::string>{"seq_len=64", "seq_len=256"}));
  // The sweep's set first, then the grid values; a quoted string stays quoted for the trainer.
  EXPECT_EQ(points[1].overrides, (std::vector<std::string>{"train.steps=5", "name=\"a b\"",
                                                           "attention.lambda=1.0", "data.seq_len=256"}));
  EXPECT_EQ(spec.name, "mine");
  // A grid with only single values is one point.
  auto single = expand_grid(spec_of("grid: {seed: [4]}"));
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].run_id, "single");
  EXPECT_EQ(single[0].overrides, std::vector<std::string>{"seed=4"});
}

TEST(SweepGrid, RunIdsAreCanonicalAndFilesystemSafe) {
  auto points = expand_grid(spec_of(
      "grid: {attention.lambda: [0.250, 1], seed: [1, 2], sample.seed: [7, 8], data.dir: [a/b, ../c]}"));
  // seed and sample.seed share the short name: both use the full key.
  EXPECT_EQ(points[0].run_id, "lambda=0.25_seed=1_sample.seed=7_dir=a-b");
  EXPECT_EQ(points[1].run_id, "lambda=0.25_seed=1_sample.seed=7_dir=-.-c");
  EXPECT_EQ(points.back().run_id, "lambda=1_seed=2_sample.seed=8_dir=-.-c");
  for (const auto& p : points) EXPECT_EQ(p.run_id.find('/'), std::string::npos) << p.run_id;
  // List values (e.g. whole variant lists) become one flow-list argument.
  auto lists = expand_grid(spec_of("grid: {attention.variants: [[sa, xsa], [sa, 0.5, learned]]}"));
  EXPECT_EQ(ids(lists), (std::vector<std::string>{"variants=sa,xsa", "variants=sa,0.5,learned"}));
  EXPECT_EQ(lists[1].overrides, std::vector<std::string>{"attention.variants=[sa,0.5,learned]"});
  EXPECT_NO_THROW(validate_points(spec_of("grid: {attention.variants: [[sa, xsa], [sa, 0.5]]}"), lists));
  // Values that only differ in spelling would share a folder: rejected.
  expect_error("base: " + kBase + "\ngrid: {attention.lambda: [0.5, 0.50]}", "run id 'lambda=0.5'");
}

TEST(SweepGrid, ShippedSweepConfigs) {
  const std::string dir = std::string(XSA_SOURCE_DIR) + "/configs/";
  SweepSpec lambda = load_sweep(dir + "sweep_lambda.yaml");
  auto lp = expand_grid(lambda);
  ASSERT_EQ(lp.size(), 4u);  // one point per seed; every λ is a variant of that point
  EXPECT_EQ(lp[0].run_id, "seed=1");
  EXPECT_EQ(lp[3].run_id, "seed=4");
  EXPECT_NO_THROW(validate_points(lambda, lp));
  SweepSpec seqlen = load_sweep(dir + "sweep_seqlen.yaml");
  auto sp = expand_grid(seqlen);
  ASSERT_EQ(sp.size(), 9u);
  EXPECT_EQ(sp[0].run_id, "seq_len=64_seed=1");
  EXPECT_EQ(sp[8].run_id, "seq_len=256_seed=3");
  EXPECT_NO_THROW(validate_points(seqlen, sp));
  SweepSpec smoke = load_sweep(dir + "sweep_smoke.yaml");
  EXPECT_EQ(expand_grid(smoke).size(), 4u);
  EXPECT_NO_THROW(validate_points(smoke, expand_grid(smoke)));
}

// The science sweeps (docs/findings.md) run for hours unattended: every file must expand and every point's
// config must load (a key the trainer does not know would fail each point at its start).
TEST(SweepGrid, ScienceSweepConfigs) {
  const std::string dir = std::string(XSA_SOURCE_DIR) + "/configs/science/";
  // name, points, the attention implementation every point pins (explicit before the fused kernel existed).
  struct Expected {
    std::string name;
    std::size_t points;
    std::string impl;
  };
  const std::vector<Expected> expected = {{"budget_300", 5, "explicit"},
                                          {"budget_1200", 5, "explicit"},
                                          {"budget_2400", 5, "explicit"},
                                          {"lambda_lr", 5, "explicit"},
                                          {"seqlen_fixed_batch", 15, "explicit"},
                                          {"seqlen_tokens", 20, "explicit"},
                                          {"lr_control", 25, "explicit"},
                                          {"size_s2", 10, "explicit"},
                                          {"variants_s1", 5, "explicit"},
                                          {"length_s1", 15, "fused"},
                                          {"gate_lr_s1", 5, "explicit"},
                                          {"baseline_choices", 45, "explicit"},
                                          {"qknorm_lr", 25, "explicit"},
                                          {"warmup_150", 15, "explicit"},
                                          {"gate_headwise_lr", 25, "explicit"},
                                          {"paper_dynamics", 20, "explicit"},
                                          {"qknorm_s1", 10, "explicit"},
                                          {"gate_elementwise", 5, "explicit"},
                                          {"modern_s0", 20, "explicit"},
                                          {"modern_s1", 20, "explicit"},
                                          {"nonorm_warmup150", 15, "explicit"},
                                          {"nonorm_qknorm", 20, "explicit"},
                                          {"seqlen_tokens_docmask", 20, "explicit"},
                                          {"length_s1_docmask", 5, "fused"},
                                          {"long_lr", 15, "fused"}};
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".yaml") ++files;
  EXPECT_EQ(files, expected.size()) << "a sweep file in " << dir << " is not checked here";
  for (const auto& [name, points, impl] : expected) {
    SweepSpec spec = load_sweep(dir + name + ".yaml");
    EXPECT_EQ(spec.name, name);
    auto p = expand_grid(spec);
    EXPECT_EQ(p.size(), points) << name;
    EXPECT_NO_THROW(validate_points(spec, p)) << name;
    // Every point pins the attention implementation (docs/guide.md "Config") and the baseline's setup that
    // question 9 varies, so a new default never reaches a resumed or extended sweep.
    for (const auto& point : p) {
      bool pinned = false;
      for (const auto& o : point.overrides) pinned = pinned || o == "attention.impl=" + impl;
      EXPECT_TRUE(pinned) << name << " " << point.run_id;
      for (const std::string key : {"model.pos", "model.embed_norm", "model.qk_norm", "attention.output_gate",
                                    "train.warmup_steps", "model.mlp_ratio", "model.tie_embeddings"}) {
        bool set = false;
        for (const auto& o : point.overrides) set = set || o.rfind(key + "=", 0) == 0;
        EXPECT_TRUE(set) << name << " " << point.run_id << " does not pin " << key;
      }
      // Question 11's long-corpus sweeps name their corpus: the default data.dir is TinyStories.
      if (name.rfind("long_", 0) == 0) {
        bool corpus = false;
        for (const auto& o : point.overrides)
          corpus = corpus || o == "data.dir=data/corpora/linux-source/tokens";
        EXPECT_TRUE(corpus) << name << " " << point.run_id << " does not pin data.dir to its corpus";
      }
      // Question 11's masked cells (the sweeps named *_docmask) pin data.doc_mask: true, and only they mask:
      // a file that lost the key would train its cells unmasked for hours. The long-corpus sweeps pin false.
      const bool docmask_sweep = name.size() > 8 && name.compare(name.size() - 8, 8, "_docmask") == 0;
      bool masked = false, pinned_unmasked = false;
      for (const auto& o : point.overrides) {
        masked = masked || o == "data.doc_mask=true";
        pinned_unmasked = pinned_unmasked || o == "data.doc_mask=false";
      }
      EXPECT_EQ(masked, docmask_sweep) << name << " " << point.run_id;
      if (name.rfind("long_", 0) == 0) {
        EXPECT_TRUE(pinned_unmasked) << name << " does not pin data.doc_mask";
      }
    }
  }
}

TEST(SweepShard, ParseShard) {
  Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(parse_shard("0/1").count, 1);
  // N is bounded, and no work depends on it: a shard is a filter on the points' indices.
  EXPECT_EQ(parse_shard("999999/1000000").count, 1000000);
  const auto points = expand_grid(spec_of("grid: {seed: [1, 2, 3]}"));
  const double elapsed = seconds_of([&] {
    EXPECT_EQ(shard_points(points, parse_shard("1/1000000")).size(), 1u);
    EXPECT_EQ(shard_points(points, parse_shard("999999/1000000")).size(), 0u);
  });
  EXPECT_LT(elapsed, kLooseSeconds);
  for (const std::string bad : {"0/1000001", "0/99999999999999999999999"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("0 <= K < N <= 1,000,000"), std::string::npos) << e.what();
    }
  }
  for (const std::string bad :
       {"5/5", "-1/4", "1", "a/b", "1/0", "/3", "2/", "1/2/3", " 1/2", "1.0/2", "+1/2"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--shard '" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(SweepShard, DisjointCompleteAndStable) {
  auto all =
      expand_grid(spec_of("grid: {attention.lambda: [0, 0.25, 0.5, 0.75, 1], data.seq_len: [64, 128, 256], "
                          "seed: [1, 2, 3]}"));
  ASSERT_EQ(all.size(), 45u);
  for (int n = 1; n <= 7; ++n) {
    std::multiset<std::string> seen;
    for (int k = 0; k < n; ++k) {
      for (const auto& p : shard_points(all, Shard{k, n})) {
        EXPECT_EQ(p.index % n, static_cast<std::size_t>(k));
        EXPECT_EQ(p.run_id, all[p.index].run_id);  // same ids as unsharded
        seen.insert(p.run_id);
      }
    }
    auto all_ids = ids(all);
    EXPECT_EQ(seen, std::multiset<std::string>(all_ids.begin(), all_ids.end())) << "n=" << n;
  }
  EXPECT_EQ(summary_file_name(Shard{0, 1}), "summary.json");
  EXPECT_EQ(summary_file_name(Shard{2, 4}), "summary.shard-2-of-4.json");
}

TEST(SweepGrid, LinkedKeysVaryTogether) {
  // Fixed tokens per step: seq_len and batch_size move together; seed is crossed with the pair.
  SweepSpec spec =
      spec_of("grid: {data.seq_len+train.batch_size: [[64, 64], [128, 32], [256, 16]], seed: [1, 2]}");
  auto points = expand_grid(spec);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(ids(points), (std::vector<std::string>{
                             "seq_len=64_batch_size=64_seed=1", "seq_len=64_batch_size=64_seed=2",
                             "seq_len=128_batch_size=32_seed=1", "seq_len=128_batch_size=32_seed=2",
                             "seq_len=256_batch_size=16_seed=1", "seq_len=256_batch_size=16_seed=2"}));
  EXPECT_EQ(points[3].overrides,
            (std::vector<std::string>{"data.seq_len=128", "train.batch_size=32", "seed=2"}));
  EXPECT_EQ(points[3].values["data.seq_len"], 128);
  EXPECT_EQ(points[3].values["train.batch_size"], 32);
  EXPECT_NO_THROW(validate_points(spec, points));
  // A linked value may itself be a list (the variants of a training budget).
  auto budgets = expand_grid(
      spec_of("grid: {train.steps+attention.variants: [[300, [sa, xsa, 0.5]], [900, [sa, xsa]]]}"));
  ASSERT_EQ(budgets.size(), 2u);
  EXPECT_EQ(budgets[0].run_id, "steps=300_variants=sa,xsa,0.5");
  EXPECT_EQ(budgets[1].overrides,
            (std::vector<std::string>{"train.steps=900", "attention.variants=[sa,xsa]"}));
}

TEST(SweepErrors, BadLinkedKeys) {
  const std::string base = "base: " + kBase + "\n";
  expect_error(base + "grid: {data.seq_len+train.batch_size: [[64, 64], [128]]}", "one value per linked key");
  expect_error(base + "grid: {data.seq_len+train.batch_size: [64, 128]}", "one value per linked key");
  expect_error(base + "grid: {data.seq_len+train.batchsize: [[64, 64]]}", "train.batchsize");
  expect_error(base + "grid: {seed+seed: [[1, 2]]}", "appears twice");
  expect_error(base + "grid: {data.seq_len+seed: [[64, 1]], seed: [1, 2]}", "set by two grid keys");
  expect_error(base + "grid: {data.seq_len+seed: [[64, 1]]}\nset: {seed: 3}", "set.seed");
  expect_error(base + "grid: {data.seq_len+train.batch_size: [[64, 0]]}", "train.batch_size");
}

TEST(SweepErrors, BadSweepFiles) {
  const std::string base = "base: " + kBase + "\n";
  expect_error(base + "grid: {seed: [1]}\ngird: {}", "unknown key 'gird'");
  expect_error(base + "grid: {}", "grid");
  expect_error(base, "grid");
  expect_error(base + "grid: {seed: []}", "grid.seed: empty list");
  expect_error(base + "grid: {train.stepz: [1, 2]}", "train.stepz");
  expect_error(base + "grid: {seed: [1]}\nset: {model.n_heads: 2}", "model.n_heads");
  expect_error(base + "grid: {seed: [1]}\nset: {seed: 2}", "set.seed");
  expect_error(base + "grid: {seed: [{a: 1}]}", "grid.seed");
  expect_error("grid: {seed: [1]}", "base");
  expect_error(base + "grid: [seed]", "grid");
  expect_error(base + "name: a/b\ngrid: {seed: [1]}", "name");
  expect_error(base + "grid: {seed: [1, 2\n", "invalid YAML");
  // Wrong types and ranges are found by parsing the base config with each point's overrides.
  expect_error(base + "grid: {seed: [1, abc]}", "point seed=abc");
  expect_error(base + "grid: {attention.lambda: [0.5, 2]}", "attention.lambda");
  expect_error(base + "grid: {train.steps: [5, 0]}", "train.steps");
  expect_error(base + "grid: {seed: [1, 2]}\nset: {train.lr: fast}", "train.lr");
  expect_error("base: missing.yaml\ngrid: {seed: [1]}", "missing.yaml");
  // Found by fuzz/fuzz_sweep: a value that is not UTF-8 made writing summary.json throw nlohmann's
  // type_error.
  expect_error(base + "grid: {seed: [1\xD7\xDF\xCD, 2]}", ":2: byte ");
  // Found by fuzz_sweep (as fuzz_config before it): a NUL byte made yaml-cpp decode the file as UTF-16/32
  // into invalid UTF-8, the same type_error.
  expect_error(base + std::string("grid: {seed: [1, 2]}\n\0", 22), ":3: byte ");
  expect_error(std::string("\0\0\0b", 4) + base + "grid: {seed: [1, 2]}", "byte 0 is a NUL byte");
  // A small file must not expand into billions of points (memory and time): 10^10 here.
  std::string huge = base + "grid:\n";
  for (const char* key : {"seed", "train.steps", "train.lr", "train.batch_size", "data.seq_len",
                          "eval.interval", "eval.batches", "sample.seed", "sample.count", "model.d_model"})
    huge += std::string("  ") + key + ": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
  expect_error(huge, "grid: more than 100000 points");
}

// Issue 40: what a sweep file costs is bounded by its text, not by the numbers it implies. 7 keys of 100
// values are 10^14 points: refused from the list lengths, before any point is built.
TEST(SweepErrors, PointCountIsCheckedBeforeTheProduct) {
  std::string grid = "base: " + kBase + "\ngrid:\n";
  for (const char* key : {"seed", "train.steps", "train.lr", "train.batch_size", "data.seq_len",
                          "eval.interval", "sample.seed"}) {
    grid += std::string("  ") + key + ": [";
    for (int i = 1; i <= 100; ++i) grid += (i > 1 ? ", " : "") + std::to_string(i);
    grid += "]\n";
  }
  const double s =
      seconds_of([&] { expect_error(grid, "grid: more than 100000 points, expected at most 100000"); });
  EXPECT_LT(s, kLooseSeconds);
}

// yaml-cpp keeps an alias as a second reference to its anchor's node: a few hundred bytes of nested aliases
// are 10^10 leaves to walk, and a 394-byte file took 6 s and 1.3 GB at depth 5 (ten times more per level).
// What the values take is charged against kMaxSweepValueBytes as they are built.
TEST(SweepErrors, AliasesExpandWithinTheValueBudget) {
  const std::string base = "base: " + kBase + "\n";
  const std::string limit = "take more than 64 MiB once expanded";
  const double s = seconds_of([&] {
    expect_error(base + "grid: {seed: [1, 2]}\nset: {attention.variants: " + yaml_laughs(9) + "}",
                 "set.attention.variants: the values " + limit);
    expect_error(base + "grid: {attention.variants: [[sa, xsa], " + yaml_laughs(9) + "]}",
                 "grid.attention.variants: the values " + limit);
    // Nested lists repeat their elements' text at every level: 200 levels around a 1 MB string (old: 400 MB).
    const std::string big(1 << 20, 'x');
    expect_error(base + "grid: {seed: [1, 2]}\nset: {name: " + std::string(200, '[') + big +
                     std::string(200, ']') + "}",
                 "set.name: the values " + limit);
  });
  EXPECT_LT(s, kLooseSeconds);
  // Aliases within the budget are fine.
  auto points = expand_grid(spec_of("grid: {seed: &s [1, 2], sample.seed: *s}"));
  EXPECT_EQ(ids(points), (std::vector<std::string>{"seed=1_sample.seed=1", "seed=1_sample.seed=2",
                                                   "seed=2_sample.seed=1", "seed=2_sample.seed=2"}));
}

// Every point holds the set's overrides: a 1 MB set value over 1,000 points is 1 GB, counted from the lists
// before any point is built (a 1.7 MB file of 100,000 points was killed at 23 GB).
TEST(SweepErrors, PointsTextIsCountedBeforeTheyAreBuilt) {
  std::string seeds;
  for (int i = 1; i <= 1000; ++i) seeds += (i > 1 ? ", " : "") + std::to_string(i);
  const std::string text = "base: " + kBase + "\ngrid: {seed: [" + seeds +
                           "]}\nset: {data.dir: " + std::string(1 << 20, 'x') + "}\n";
  const double s =
      seconds_of([&] { expect_error(text, "grid: its 1,000 points' overrides and run ids take 1,048,"); });
  EXPECT_LT(s, kLooseSeconds);
  EXPECT_NE(error_of(text).find("expected at most 268,435,456"), std::string::npos)
      << error_of(text).substr(0, 300);
}

}  // namespace
}  // namespace xsa
