// The report across learning rates and model sizes (docs/findings.md, questions 5 and 6): groups never pool
// either, the size trend per doubling of non-embedding parameters, and the learning-rate selection, on
// hand-made results with hand-computed statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "table_cells.h"
#include "xsa/config/resources.h"
#include "xsa/records/results.h"
#include "xsa/report/grouping.h"
#include "xsa/report/sections.h"
#include "xsa/stats/stats.h"

namespace xsa::report {
using namespace xsa::stats;  // the statistics vocabulary, as the report itself (xsa/stats/stats.h)
namespace {

using nlohmann::json;

using testing::integer;  // tests/support/table_cells.h
using testing::num;
using testing::text;

// A paired SA vs XSA result of `n_layer` layers (width 128, 4 heads of 32) at learning rate `lr`, with the
// two final losses; the comparison is derived from them by the reader. `impl` is attention.impl; empty leaves
// the key out, as records written before it existed did (they ran the explicit attention). `model_setup` adds
// model keys of a baseline setup (question 9), e.g. {"embed_norm": false}.
ExperimentResult point(int n_layer, double lr, std::uint64_t seed, double sa_loss, double xsa_loss,
                       const std::string& impl = "", const json& model_setup = json::object()) {
  auto run = [&](const char* variant, double lambda, double loss) {
    return json{{"variant", variant},
                {"variant_spec", {{"kind", "fixed"}, {"lambda", lambda}}},
                {"lambda", lambda},
                {"seed", seed},
                {"final", {{"val_loss", loss}}}};
  };
  const json doc = {{"schema", "xsa.results/1"},
                    {"name", "scale"},
                    {"config",
                     {{"seed", seed},
                      {"model", {{"n_layer", n_layer}, {"d_model", 128}, {"n_head", 4}, {"d_head", 32}}},
                      {"data", {{"seq_len", 128}}},
                      {"train", {{"steps", 600}, {"batch_size", 32}, {"lr", lr}, {"min_lr", lr / 10}}}}},
                    {"runs", {run("sa", 0.0, sa_loss), run("xsa", 1.0, xsa_loss)}}};
  json with_impl = doc;
  if (!impl.empty()) with_impl["config"]["attention"] = {{"impl", impl}};
  with_impl["config"]["model"].update(model_setup);
  return parse_results(with_impl, "mem.json");
}

TEST(ModelSize, NonEmbeddingParametersCountedByHand) {
  // Per layer: q, k, v (3 · C · H·Q), the output projection (H·Q · C) and the MLP (2 · 4C · C).
  ModelConfig s0;  // 2 layers, d_model 128, 4 heads of 32: 2 · (3·128·128 + 128·128 + 8·128·128) = 393,216
  EXPECT_EQ(non_embedding_parameters(s0), 393216);
  ModelConfig s1 = s0;  // 4 layers, d_model 192, 6 heads of 32: 4 · 12 · 192² = 1,769,472
  s1.n_layer = 4;
  s1.d_model = 192;
  s1.n_head = 6;
  EXPECT_EQ(non_embedding_parameters(s1), 1769472);
  ModelConfig s2 = s0;  // 6 layers, d_model 256, 8 heads of 32: 6 · 12 · 256² = 4,718,592
  s2.n_layer = 6;
  s2.d_model = 256;
  s2.n_head = 8;
  EXPECT_EQ(non_embedding_parameters(s2), 4718592);
  EXPECT_EQ(model_label(s1), "4L d192 6×32");
}

TEST(Report, GroupsNeverPoolLearningRatesOrModelSizes) {
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    points.push_back(point(2, 1e-3, seed, 2.0, 1.98));
    points.push_back(point(2, 3e-3, seed, 2.0, 2.02));
    points.push_back(point(4, 1e-3, seed, 2.0, 1.96));
  }
  const Report report = build_report(points);
  const Table& t = report.table("by_lambda");
  ASSERT_EQ(t.rows.size(), 3u);  // pooled, the six pairs would be one row
  EXPECT_EQ(text(t, 0, "model"), "2L d128 4×32");
  EXPECT_DOUBLE_EQ(num(t, 0, "lr"), 1e-3);
  EXPECT_NEAR(num(t, 0, "mean_delta"), -0.02, 1e-12);
  EXPECT_EQ(text(t, 1, "model"), "2L d128 4×32");
  EXPECT_DOUBLE_EQ(num(t, 1, "lr"), 3e-3);
  EXPECT_NEAR(num(t, 1, "mean_delta"), 0.02, 1e-12);
  EXPECT_EQ(text(t, 2, "model"), "4L d128 4×32");
  EXPECT_NEAR(num(t, 2, "mean_delta"), -0.04, 1e-12);
  // Markdown spells the lr shortest.
  EXPECT_NE(render_markdown(Report{{t}}).find("| 0.003 |"), std::string::npos);
  // The verdict lines name the model and the lr, as the results hold two of each, so no two read alike.
  const Table& v = report.table("verdicts");
  ASSERT_EQ(v.rows.size(), 3u);
  EXPECT_EQ(text(v, 0, "text").rfind("λ=1 vs sa, seq_len 128, 2L d128 4×32, lr 0.001: better", 0), 0u);
  EXPECT_EQ(text(v, 1, "text").rfind("λ=1 vs sa, seq_len 128, 2L d128 4×32, lr 0.003: worse", 0), 0u);
  EXPECT_EQ(text(v, 2, "text").rfind("λ=1 vs sa, seq_len 128, 4L d128 4×32, lr 0.001: better", 0), 0u);
}

TEST(Report, GroupsAndTrendsNeverMixAttentionImplementations) {
  // The same setup under the explicit attention (a record without the key) and the fused kernel: two rows,
  // each naming its implementation, and a size trend only over the sizes of one implementation.
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    points.push_back(point(2, 1e-3, seed, 2.0, 1.98));
    points.push_back(point(2, 1e-3, seed, 2.0, 1.96, "fused"));
    points.push_back(point(4, 1e-3, seed, 2.0, 1.90, "fused"));
  }
  const Report report = build_report(points);
  const Table& t = report.table("by_lambda");
  ASSERT_EQ(t.rows.size(), 3u);  // pooled over implementations, the two 2-layer rows would be one
  EXPECT_EQ(text(t, 0, "model"), "2L d128 4×32");
  EXPECT_EQ(text(t, 0, "attention_impl"), "explicit");
  EXPECT_NEAR(num(t, 0, "mean_delta"), -0.02, 1e-12);
  EXPECT_EQ(text(t, 1, "model"), "2L d128 4×32");
  EXPECT_EQ(text(t, 1, "attention_impl"), "fused");
  EXPECT_NEAR(num(t, 1, "mean_delta"), -0.04, 1e-12);
  EXPECT_EQ(text(t, 2, "model"), "4L d128 4×32");
  EXPECT_EQ(text(t, 2, "attention_impl"), "fused");
  // Improvements 2% (2L) and 5% (4L) in both seeds: one doubling of parameters, slope 3. A trend mixing in
  // the explicit 2L row (1%) would differ.
  const Table& size = report.table("size_trend");
  ASSERT_EQ(size.rows.size(), 1u);
  EXPECT_EQ(text(size, 0, "attention_impl"), "fused");
  EXPECT_EQ(text(size, 0, "models"), "2L d128 4×32, 4L d128 4×32");
  EXPECT_NEAR(num(size, 0, "slope"), 3.0, 1e-9);
  // The verdict lines name the implementation, as the results hold two.
  const Table& v = report.table("verdicts");
  ASSERT_EQ(v.rows.size(), 3u);
  EXPECT_EQ(text(v, 0, "text").rfind("λ=1 vs sa, seq_len 128, 2L d128 4×32, explicit attention: better", 0),
            0u);
  EXPECT_EQ(text(v, 1, "text").rfind("λ=1 vs sa, seq_len 128, 2L d128 4×32, fused attention: better", 0), 0u);
  EXPECT_EQ(text(v, 2, "text").rfind("λ=1 vs sa, seq_len 128, 4L d128 4×32, fused attention: better", 0), 0u);
}

TEST(Report, EveryTableOfGroupsNamesTheModelAndTheLr) {
  // Groups never pool model sizes or lrs, so a table of groups without either column prints rows that read
  // alike: lr_control's bias rows did (three lrs, one label each). The trends over one of the two axes name
  // the other.
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 1; seed <= 2; ++seed) points.push_back(point(2, 1e-3, seed, 2.0, 1.98));
  const Report report = build_report(points);
  auto has_column = [&](const std::string& section, const char* key) {
    const Table& t = report.table(section);
    return std::any_of(t.columns.begin(), t.columns.end(), [&](const Column& c) { return c.key == key; });
  };
  // Every section but these: per run (paired: one row per run, its experiment named), along one axis (size,
  // lr, setup and lr: the other is a column) or not about groups (notes).
  const std::set<std::string> exceptions = {"paired",          "size_trend",   "lr_selection",
                                            "setup_selection", "setup_effect", "notes"};
  for (const Section& section : sections()) {
    if (exceptions.count(section.key)) continue;
    EXPECT_TRUE(has_column(section.key, "model")) << section.key;
    EXPECT_TRUE(has_column(section.key, "lr")) << section.key;
    EXPECT_TRUE(has_column(section.key, "attention_impl")) << section.key;
  }
  EXPECT_TRUE(has_column("size_trend", "attention_impl"));
  EXPECT_TRUE(has_column("lr_selection", "attention_impl"));
  EXPECT_TRUE(has_column("size_trend", "lr"));
  EXPECT_FALSE(has_column("size_trend", "model"));  // its axis: the "models" column lists them
  EXPECT_TRUE(has_column("lr_selection", "model"));
  EXPECT_FALSE(has_column("lr_selection", "lr"));  // its axis: "lrs" lists them
}

TEST(Report, SizeTrendIsTheMeanPerSeedSlopePerDoublingOfParameters) {
  // 2, 4 and 8 layers: 1×, 2× and 4× the non-embedding parameters (log2 steps of 1). Improvements %:
  // seed 1: 1, 2, 3 -> slope 1; seed 2: 2, 2, 2 -> 0; seed 3: 0, 1, 5 -> ((-1)(0 - 2) + (+1)(5 - 2)) / 2
  // = 2.5. Mean 1.166667, sd 1.258306, t_{0.975,2} = 4.302653 -> CI [-1.959138, 4.292471]: noise.
  const double improvements[3][3] = {{1, 2, 3}, {2, 2, 2}, {0, 1, 5}};
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 3; ++i)  // improvement % = 100 (sa − xsa) / sa with sa = 2
      points.push_back(point(2 << i, 1e-3, seed, 2.0, 2.0 * (1 - improvements[seed - 1][i] / 100)));
  points.push_back(point(2, 1e-3, 4, 2.0, 1.5));  // seed 4 has one size only: left out of the slope
  const Report report = build_report(points);
  const Table& t = report.table("size_trend");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(text(t, 0, "models"), "2L d128 4×32, 4L d128 4×32, 8L d128 4×32");
  EXPECT_EQ(text(t, 0, "params"), "393216 786432 1572864");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(integer(t, 0, "falling"), 0);
  EXPECT_NEAR(num(t, 0, "slope"), 1.166667, 1e-6);
  EXPECT_NEAR(num(t, 0, "slope_ci_low"), -1.959138, 1e-5);
  EXPECT_NEAR(num(t, 0, "slope_ci_high"), 4.292471, 1e-5);
  EXPECT_EQ(text(t, 0, "verdict"), "within noise");
  // One size: no trend.
  EXPECT_TRUE(build_report({point(2, 1e-3, 1, 2.0, 1.9)}).table("size_trend").rows.empty());
}

// losses[seed][lr] of the two arms, chosen so that the arms prefer different lrs and one seed changes the
// choice when it is held out.
const std::vector<std::vector<double>> kBaseline = {{2.0, 1.8, 1.95}, {2.1, 1.9, 1.7}, {2.0, 1.7, 1.85}};
const std::vector<std::vector<double>> kVariant = {{1.9, 1.85, 1.7}, {2.0, 1.75, 1.8}, {1.95, 1.8, 1.74}};

TEST(LrSelection, BestLrPerArmInSampleAndHeldOut) {
  const LrSelection s = select_learning_rates(kBaseline, kVariant);
  // Means over seeds: baseline 2.0333, 1.8, 1.8333 -> lr 1; variant 1.95, 1.8, 1.7467 -> lr 2.
  EXPECT_EQ(s.best_baseline, 1u);
  EXPECT_EQ(s.best_variant, 2u);
  EXPECT_NEAR(s.baseline_means[1], 1.8, 1e-12);
  EXPECT_NEAR(s.variant_means[2], 1.746667, 1e-6);
  // In-sample: variant[s][2] − baseline[s][1] = -0.1, -0.1, +0.04 -> mean -0.053333, CI [-0.254124,
  // 0.147457].
  EXPECT_EQ(s.in_sample.n, 3u);
  EXPECT_NEAR(s.in_sample.mean, -0.053333, 1e-6);
  EXPECT_NEAR(*s.in_sample.low, -0.254124, 1e-5);
  EXPECT_NEAR(*s.in_sample.high, 0.147457, 1e-5);
  // Held out: without seed 0 the baseline prefers lr 2 (means 2.05, 1.8, 1.775), so seed 0 contributes
  // 1.7 − 1.95 = -0.25; seed 1: lrs (1, 2) -> 1.8 − 1.9 = -0.1; seed 2: lrs (2, 2) -> 1.74 − 1.85 = -0.11.
  // Mean -0.153333, CI [-0.361665, 0.054999].
  EXPECT_EQ(s.held_out.n, 3u);
  EXPECT_NEAR(s.held_out.mean, -0.153333, 1e-6);
  EXPECT_NEAR(*s.held_out.low, -0.361665, 1e-5);
  EXPECT_NEAR(*s.held_out.high, 0.054999, 1e-5);
}

TEST(LrSelection, OneSeedHasNoHeldOutEstimate) {
  const LrSelection s = select_learning_rates({kBaseline[0]}, {kVariant[0]});
  EXPECT_EQ(s.best_baseline, 1u);
  EXPECT_EQ(s.best_variant, 2u);
  EXPECT_EQ(s.in_sample.n, 1u);
  EXPECT_EQ(s.held_out.n, 0u);
}

TEST(Report, LrSelectionSectionUsesTheSeedsWithEveryLr) {
  const double lrs[3] = {3e-4, 1e-3, 3e-3};
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 0; seed < 3; ++seed)
    for (int i = 0; i < 3; ++i)
      points.push_back(point(2, lrs[i], seed + 1, kBaseline[seed][i], kVariant[seed][i]));
  points.push_back(point(2, 1e-3, 9, 1.0, 0.5));  // seed 9 lacks two lrs: left out
  const Report report = build_report(points);
  const Table& t = report.table("lr_selection");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(text(t, 0, "lrs"), "0.0003 0.001 0.003");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_DOUBLE_EQ(num(t, 0, "best_lr_baseline"), 1e-3);
  EXPECT_DOUBLE_EQ(num(t, 0, "best_lr_variant"), 3e-3);
  // The baseline's best (1e-3) has a worse lr on both sides; the variant's (3e-3) is the grid's edge.
  EXPECT_EQ(text(t, 0, "bracketed"), "baseline only");
  EXPECT_NEAR(num(t, 0, "best_delta"), -0.053333, 1e-6);
  EXPECT_NEAR(num(t, 0, "held_out_delta"), -0.153333, 1e-6);
  EXPECT_NEAR(num(t, 0, "held_out_ci_high"), 0.054999, 1e-5);
  EXPECT_EQ(text(t, 0, "verdict"), "within noise");
  // A fourth, higher lr where both arms are worse brackets the variant's best too.
  for (std::uint64_t seed = 0; seed < 3; ++seed) points.push_back(point(2, 1e-2, seed + 1, 3.0, 3.0));
  const Report wider = build_report(points);
  EXPECT_EQ(text(wider.table("lr_selection"), 0, "bracketed"), "both");
  // One lr: no selection.
  EXPECT_TRUE(build_report({point(2, 1e-3, 1, 2.0, 1.9)}).table("lr_selection").rows.empty());
}

TEST(Report, LrChangePairsEachSeedsGainAtNeighbouringLrs) {
  // Improvements % per seed at lr 1e-3, 3e-3, 1e-2: seed 1: 1, 2, 2; seed 2: 1, 3, 2; seed 3: 2, 4, 1.
  // 1e-3 -> 3e-3: changes 1, 2, 2: mean 1.666667, sd 0.577350, t_{0.975,2} = 4.302653 -> CI [0.232449,
  // 3.100884]: grows, in 3 seeds. 3e-3 -> 1e-2: changes 0, -1, -3: mean -1.333333, sd 1.527525 -> CI
  // [-5.127916, 2.461250]: within noise, no seed growing (0 is not growth).
  const double lrs[3] = {1e-3, 3e-3, 1e-2};
  const double improvements[3][3] = {{1, 2, 2}, {1, 3, 2}, {2, 4, 1}};
  auto loss = [](double improvement) { return 2.0 * (1 - improvement / 100); };  // improvement over sa = 2
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 3; ++i)
      points.push_back(point(2, lrs[i], seed, 2.0, loss(improvements[seed - 1][i])));
  points.push_back(point(2, 1e-3, 4, 2.0, loss(9)));  // seed 4 has one lr: no change to pair
  // Another setup is another series, never paired with the paper's: QK-norm at 1e-3 and 1e-2 (its
  // neighbours), +4 points in both seeds.
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    points.push_back(point(2, 1e-3, seed, 2.0, loss(1), "", {{"qk_norm", true}}));
    points.push_back(point(2, 1e-2, seed, 2.0, loss(5), "", {{"qk_norm", true}}));
  }
  const Report report = build_report(points);
  const Table& t = report.table("lr_change");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(text(t, 0, "model"), "2L d128 4×32");
  EXPECT_DOUBLE_EQ(num(t, 0, "lr"), 1e-3);
  EXPECT_DOUBLE_EQ(num(t, 0, "higher_lr"), 3e-3);
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_NEAR(num(t, 0, "gain"), 1.333333, 1e-5);  // seeds 1 to 3 only
  EXPECT_NEAR(num(t, 0, "higher_gain"), 3.0, 1e-5);
  EXPECT_EQ(integer(t, 0, "growing"), 3);
  EXPECT_NEAR(num(t, 0, "change"), 1.666667, 1e-5);
  EXPECT_NEAR(num(t, 0, "change_ci_low"), 0.232449, 1e-5);
  EXPECT_NEAR(num(t, 0, "change_ci_high"), 3.100884, 1e-5);
  EXPECT_EQ(text(t, 0, "verdict"), "grows");
  EXPECT_DOUBLE_EQ(num(t, 1, "lr"), 3e-3);
  EXPECT_DOUBLE_EQ(num(t, 1, "higher_lr"), 1e-2);
  EXPECT_EQ(integer(t, 1, "growing"), 0);
  EXPECT_NEAR(num(t, 1, "change"), -1.333333, 1e-5);
  EXPECT_NEAR(num(t, 1, "change_ci_low"), -5.127916, 1e-5);
  EXPECT_NEAR(num(t, 1, "change_ci_high"), 2.461250, 1e-5);
  EXPECT_EQ(text(t, 1, "verdict"), "within noise");
  EXPECT_EQ(text(t, 2, "model"), "2L d128 4×32 (QK-norm)");
  EXPECT_DOUBLE_EQ(num(t, 2, "lr"), 1e-3);
  EXPECT_DOUBLE_EQ(num(t, 2, "higher_lr"), 1e-2);
  EXPECT_EQ(integer(t, 2, "n"), 2);
  EXPECT_NEAR(num(t, 2, "change"), 4.0, 1e-5);
  // One lr: nothing to change.
  EXPECT_TRUE(build_report({point(2, 1e-3, 1, 2.0, 1.9)}).table("lr_change").rows.empty());
}

// Two baseline setups at two lrs, three seeds; candidates in (setup, lr) order: the paper's setup at 1e-3 and
// 3e-3, then "no emb norm" at 1e-3 and 3e-3. Baseline means 2.0333, 1.9, 1.8167, 1.7833; variant means 1.85,
// 1.7233, 1.81, 1.85 (the paper's setup at 3e-3 is the variant's lowest in every seed).
const std::vector<std::vector<double>> kSetupBaseline = {
    {2.0, 1.9, 1.8, 1.85}, {2.1, 1.95, 1.9, 1.7}, {2.0, 1.85, 1.75, 1.8}};
const std::vector<std::vector<double>> kSetupVariant = {
    {1.8, 1.7, 1.85, 1.9}, {1.9, 1.75, 1.8, 1.85}, {1.85, 1.72, 1.78, 1.8}};

std::vector<ExperimentResult> two_setups() {
  const double lrs[2] = {1e-3, 3e-3};
  const json setups[2] = {json::object(), {{"embed_norm", false}}};
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 0; seed < 3; ++seed)
    for (int setup = 0; setup < 2; ++setup)
      for (int i = 0; i < 2; ++i)
        points.push_back(point(2, lrs[i], seed + 1, kSetupBaseline[seed][2 * setup + i],
                               kSetupVariant[seed][2 * setup + i], "", setups[setup]));
  points.push_back(point(2, 1e-3, 9, 1.0, 0.5, "", setups[1]));  // seed 9 lacks three candidates: left out
  return points;
}

TEST(Report, SetupSelectionGivesEachArmItsBestSetupAndLr) {
  const std::vector<ExperimentResult> points = two_setups();
  const Report report = build_report(points);
  const Table& t = report.table("setup_selection");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(text(t, 0, "model"), "2L d128 4×32");  // the setup is what is chosen, not part of the key
  EXPECT_EQ(integer(t, 0, "setups"), 2);
  EXPECT_EQ(integer(t, 0, "candidates"), 4);
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(text(t, 0, "best_setup_baseline"), "no emb norm");
  EXPECT_DOUBLE_EQ(num(t, 0, "best_lr_baseline"), 3e-3);
  EXPECT_EQ(text(t, 0, "best_setup_variant"), "paper's setup");
  EXPECT_DOUBLE_EQ(num(t, 0, "best_lr_variant"), 3e-3);
  EXPECT_NEAR(num(t, 0, "baseline_loss"), 1.783333, 1e-6);
  EXPECT_NEAR(num(t, 0, "variant_loss"), 1.723333, 1e-6);
  // In-sample: 1.7 − 1.85, 1.75 − 1.7, 1.72 − 1.8 = -0.15, +0.05, -0.08: mean -0.06, CI [-0.312112,
  // 0.192112].
  EXPECT_NEAR(num(t, 0, "best_delta"), -0.06, 1e-9);
  EXPECT_NEAR(num(t, 0, "best_delta_ci_low"), -0.312112, 1e-6);
  EXPECT_NEAR(num(t, 0, "best_delta_ci_high"), 0.192112, 1e-6);
  // Held out: without seed 2 the baseline's means favour "no emb norm" at 1e-3 (1.775 vs 1.825), so seed 2
  // is judged there: 1.75 − 1.9 = -0.15; seeds 1 and 3 keep 3e-3: -0.15, -0.08. Mean -0.126667, CI
  // [-0.227062, -0.026271]: better, where the in-sample choice is within noise.
  EXPECT_NEAR(num(t, 0, "held_out_delta"), -0.126667, 1e-6);
  EXPECT_NEAR(num(t, 0, "held_out_ci_low"), -0.227062, 1e-6);
  EXPECT_NEAR(num(t, 0, "held_out_ci_high"), -0.026271, 1e-6);
  EXPECT_EQ(text(t, 0, "verdict"), "better");
  // lr_selection keeps the setups apart: one row each.
  EXPECT_EQ(report.table("lr_selection").rows.size(), 2u);
  // One setup: nothing to choose among.
  const Report one_setup = build_report({point(2, 1e-3, 1, 2.0, 1.9), point(2, 3e-3, 1, 1.9, 1.8)});
  EXPECT_TRUE(one_setup.table("setup_selection").rows.empty());
  EXPECT_TRUE(one_setup.table("setup_effect").rows.empty());
}

TEST(Report, SetupEffectJudgesEachArmInASetupAgainstItselfInThePapers) {
  const Report report = build_report(two_setups());
  const Table& t = report.table("setup_effect");
  ASSERT_EQ(t.rows.size(), 2u);  // "no emb norm": SA, then XSA
  EXPECT_EQ(text(t, 0, "setup"), "no emb norm");
  EXPECT_EQ(text(t, 0, "arm"), "sa");
  EXPECT_EQ(text(t, 1, "arm"), "λ=1");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  // SA: best at 3e-3 in both setups (means 1.9 and 1.7833). Per seed 1.85 − 1.9, 1.7 − 1.95, 1.8 − 1.85 =
  // -0.05, -0.25, -0.05: mean -0.116667, CI [-0.403510, 0.170177]. Held out, seed 2's "no emb norm" lr is
  // chosen on seeds 1 and 3 (1e-3: 1.775 < 1.825): 1.9 − 1.95; every seed then gains 0.05.
  EXPECT_DOUBLE_EQ(num(t, 0, "best_lr_paper"), 3e-3);
  EXPECT_DOUBLE_EQ(num(t, 0, "best_lr_setup"), 3e-3);
  EXPECT_NEAR(num(t, 0, "baseline_loss"), 1.9, 1e-9);
  EXPECT_NEAR(num(t, 0, "variant_loss"), 1.783333, 1e-6);
  EXPECT_NEAR(num(t, 0, "best_delta"), -0.116667, 1e-6);
  EXPECT_NEAR(num(t, 0, "best_delta_ci_low"), -0.403510, 1e-6);
  EXPECT_NEAR(num(t, 0, "best_delta_ci_high"), 0.170177, 1e-6);
  EXPECT_NEAR(num(t, 0, "held_out_delta"), -0.05, 1e-9);
  EXPECT_EQ(text(t, 0, "verdict"), "better");
  // XSA: the paper's setup at 3e-3 (1.7233) against "no emb norm" at 1e-3 (1.81): +0.15, +0.05, +0.06, mean
  // +0.086667, CI [-0.050149, 0.223482], the same held out: the setup does not help XSA.
  EXPECT_DOUBLE_EQ(num(t, 1, "best_lr_paper"), 3e-3);
  EXPECT_DOUBLE_EQ(num(t, 1, "best_lr_setup"), 1e-3);
  EXPECT_NEAR(num(t, 1, "best_delta"), 0.086667, 1e-6);
  EXPECT_NEAR(num(t, 1, "held_out_ci_low"), -0.050149, 1e-6);
  EXPECT_NEAR(num(t, 1, "held_out_ci_high"), 0.223482, 1e-6);
  EXPECT_EQ(text(t, 1, "verdict"), "within noise");
  // Two setups but not the paper's ("no emb norm" and "learned pos, no emb norm"): nothing to judge them
  // against, though each arm can still choose between them.
  std::vector<ExperimentResult> without_paper;
  for (const auto& p : two_setups())
    if (!p.config.model.embed_norm) {
      without_paper.push_back(p);
      without_paper.push_back(p);
      without_paper.back().config.model.pos = PositionEncoding::kLearned;
    }
  const Report other_setups = build_report(without_paper);
  EXPECT_TRUE(other_setups.table("setup_effect").rows.empty());
  EXPECT_EQ(other_setups.table("setup_selection").rows.size(), 1u);
}

TEST(Report, SetupEffectByLrJudgesEachArmAtEachSharedLr) {
  std::vector<ExperimentResult> points = two_setups();
  points.push_back(point(2, 1e-2, 1, 1.0, 0.9, "", json{{"embed_norm", false}}));  // no paper's setup at 1e-2
  const Report report = build_report(points);
  const Table& t = report.table("setup_effect_by_lr");
  ASSERT_EQ(t.rows.size(), 4u);  // "no emb norm" at 1e-3 and 3e-3, SA then XSA; 1e-2 has nothing to pair with
  EXPECT_EQ(text(t, 0, "model"), "2L d128 4×32");
  EXPECT_EQ(text(t, 0, "setup"), "no emb norm");
  EXPECT_DOUBLE_EQ(num(t, 0, "lr"), 1e-3);
  EXPECT_EQ(text(t, 0, "arm"), "sa");
  EXPECT_EQ(text(t, 1, "arm"), "λ=1");
  EXPECT_DOUBLE_EQ(num(t, 2, "lr"), 3e-3);
  EXPECT_EQ(integer(t, 0, "n"), 3);  // seed 9 has no paper's-setup run
  // SA at 1e-3: 1.8 − 2.0, 1.9 − 2.1, 1.75 − 2.0 = -0.2, -0.2, -0.25: mean -0.216667, sd 0.028868, t(2)
  // 4.302653 × 0.016667 = 0.071711.
  EXPECT_NEAR(num(t, 0, "paper_loss"), 2.033333, 1e-6);
  EXPECT_NEAR(num(t, 0, "setup_loss"), 1.816667, 1e-6);
  EXPECT_NEAR(num(t, 0, "delta"), -0.216667, 1e-6);
  EXPECT_NEAR(num(t, 0, "delta_ci_low"), -0.288378, 1e-6);
  EXPECT_NEAR(num(t, 0, "delta_ci_high"), -0.144956, 1e-6);
  EXPECT_EQ(text(t, 0, "verdict"), "better");
  // XSA at 1e-3: 1.85 − 1.8, 1.8 − 1.9, 1.78 − 1.85 = +0.05, -0.1, -0.07: mean -0.04, within noise.
  EXPECT_NEAR(num(t, 1, "delta"), -0.04, 1e-9);
  EXPECT_EQ(text(t, 1, "verdict"), "within noise");
  // SA at 3e-3 is setup_effect's SA row (both sides best there): mean -0.116667.
  EXPECT_NEAR(num(t, 2, "delta"), -0.116667, 1e-6);
  // XSA at 3e-3: 1.9 − 1.7, 1.85 − 1.75, 1.8 − 1.72 = +0.2, +0.1, +0.08: mean +0.126667, CI [-0.033041,
  // +0.286374]: within noise.
  EXPECT_NEAR(num(t, 3, "delta"), 0.126667, 1e-6);
  EXPECT_NEAR(num(t, 3, "delta_ci_low"), -0.033041, 1e-6);
  EXPECT_NEAR(num(t, 3, "delta_ci_high"), 0.286374, 1e-6);
  EXPECT_EQ(text(t, 3, "verdict"), "within noise");
  // One setup: nothing to judge.
  EXPECT_TRUE(build_report({point(2, 1e-3, 1, 2.0, 1.9), point(2, 3e-3, 1, 1.9, 1.8)})
                  .table("setup_effect_by_lr")
                  .rows.empty());
}

}  // namespace
}  // namespace xsa::report
