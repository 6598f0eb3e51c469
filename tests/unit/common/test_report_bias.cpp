// The bias sections (xsa/report/sections_bias.cpp): the final bias metrics averaged over seeds (bias), the
// metrics at init (bias_init), the learned λ per head (learned_lambda), the per-seed slope over relative
// depth (bias_depth) and the change between neighbouring budgets paired by seed (bias_budget_change), with
// how markdown folds their ± columns. On the fixtures in tests/fixtures/report and on results built in
// memory, with hand-computed statistics in the comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "report_fixtures.h"
#include "xsa/records/results.h"
#include "xsa/report/sections.h"
#include "xsa/report/table.h"

namespace xsa::report {
namespace {

using namespace fixtures;  // tests/unit/common/report_fixtures.h

TEST(Report, BiasAtInitAndLearnedLambdaPerHead) {
  std::vector<ExperimentResult> ex;
  // Learned λ per head at the end: seed 1 {0.2, 0.8}, seed 2 {0.4, 0.6}; layer means 0.5, 0.5.
  const std::vector<std::vector<double>> heads = {{0.2, 0.8}, {0.4, 0.6}};
  for (int s = 0; s < 2; ++s) {
    ExperimentResult e = budget_experiment(s + 1, 100, "learned", {9, 4, 3}, {9, 4, 3}, 2.9, 2.9);
    for (int r = 0; r < 2; ++r) {
      LayerBias init{0, 0.1 * (s + 1), r == 0 ? 0.1 * (s + 1) : 0.0, 0.05, 0.2, {}, {}};
      LayerBias end{0, 0.5 + 0.1 * s, r == 0 ? 0.5 + 0.1 * s : 0.01, 0.1, 0.4, {}, {}};
      if (r == 1) end.lambda_per_head = heads[s];
      e.runs[r].bias = {{0, {init}}, {100, {end}}};
    }
    ex.push_back(e);
  }
  const Report r = build_report(ex);
  const Table& init = r.table("bias_init");
  ASSERT_EQ(init.rows.size(), 1u);
  EXPECT_EQ(integer(init, 0, "step"), 0);
  // cos(y,v) at init: {0.1, 0.2} -> 0.15 ± t_{0.975,1} * 0.0707107/√2 = 12.706205 * 0.05 = 0.635310.
  EXPECT_NEAR(num(init, 0, "base_cos_y_v"), 0.15, 1e-12);
  EXPECT_NEAR(num(init, 0, "base_cos_y_v_ci"), 0.635310, 1e-5);
  EXPECT_NEAR(num(init, 0, "var_cos_z_v"), 0.0, 1e-12);
  const Table& fin = r.table("bias");
  EXPECT_EQ(integer(fin, 0, "step"), 100);
  EXPECT_NEAR(num(fin, 0, "var_cos_y_v"), 0.55, 1e-12);
  EXPECT_NEAR(num(fin, 0, "var_lambda_mean"), 0.5, 1e-12);

  const Table& l = r.table("learned_lambda");
  ASSERT_EQ(l.rows.size(), 1u);
  EXPECT_EQ(text(l, 0, "variant"), "learned");
  EXPECT_EQ(integer(l, 0, "n"), 2);
  EXPECT_NEAR(num(l, 0, "head_0"), 0.3, 1e-12);
  EXPECT_NEAR(num(l, 0, "head_0_sd"), 0.141421, 1e-6);  // sd of {0.2, 0.4}
  EXPECT_NEAR(num(l, 0, "head_1"), 0.7, 1e-12);
  EXPECT_NEAR(num(l, 0, "layer_mean"), 0.5, 1e-12);
  EXPECT_NEAR(num(l, 0, "layer_mean_sd"), 0.0, 1e-12);

  // Markdown folds each ± column into its mean column: "0.300 ± 0.141", and shows no "SD" column.
  const std::string md = render_markdown(select_sections(r, "learned_lambda"));
  EXPECT_NE(md.find("| 0.300 ± 0.141 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("head 0 SD"), std::string::npos) << md;
  // CSV keeps both as numbers.
  const std::string csv = render_csv(select_sections(r, "learned_lambda"));
  EXPECT_NE(csv.find("head_0_sd"), std::string::npos) << csv;
}

TEST(Report, BiasMetricsAreFinalValuesAveragedOverSeeds) {
  const Report report = fixture_report();
  const Table& t = report.table("bias");
  // 64/0.5 and 64/1 and 128/1 and 128/learned, two layers each.
  ASSERT_EQ(t.rows.size(), 8u);
  // Row 2 = seq_len 64, xsa, layer 0. Final (step 100) xsa cos_y_v over seeds = {0.30, 0.32, 0.34} -> 0.32,
  // cos_z_v {0.01, 0.02, 0.03} -> 0.02; sa cos_y_v {0.40, 0.41, 0.42} -> 0.41, attn_diag {0.20,0.22,0.24} ->
  // 0.22.
  EXPECT_EQ(text(t, 2, "lambda"), "1");
  EXPECT_EQ(integer(t, 2, "layer"), 0);
  EXPECT_EQ(integer(t, 2, "n"), 3);
  EXPECT_EQ(integer(t, 2, "step"), 100);
  EXPECT_NEAR(num(t, 2, "var_cos_y_v"), 0.32, 1e-9);
  EXPECT_NEAR(num(t, 2, "var_cos_z_v"), 0.02, 1e-9);
  EXPECT_NEAR(num(t, 2, "base_cos_y_v"), 0.41, 1e-9);
  EXPECT_NEAR(num(t, 2, "base_attn_diag"), 0.22, 1e-9);
  EXPECT_TRUE(empty(t, 2, "var_lambda_mean"));
  // Row 6 = seq_len 128, learned, layer 0: heads {0.5, 0.7, 0.9, 0.3} -> mean learned λ 0.6.
  EXPECT_EQ(text(t, 6, "lambda"), "learned");
  EXPECT_NEAR(num(t, 6, "var_lambda_mean"), 0.6, 1e-12);
}

TEST(Report, BiasDepthTrendIsThePerSeedSlopeOverRelativeDepth) {
  // Four layers at relative depth 0, 1/3, 2/3, 1. SA's cos(y,v) is linear in the layer per seed: seed s goes
  // from 0.1 up by 0.1·(s+3)/3 per layer, so its first-to-last change is 0.4, 0.5, 0.6 (per layer index the
  // slope would be a third of that). Mean 0.5, SD 0.1, SEM 0.057735, t_{0.975,2} = 4.302653: half-width
  // 0.248414, [0.251586, 0.748414], rises in 3/3 seeds. XSA's cos(z,v) is 0 everywhere: slope 0, within
  // noise. XSA's attn_diag falls by 0.2 in seed 1 and rises by 0.2 in seeds 2 and 3 (last minus first, the
  // middle layers on the line between): mean 0.0667, within noise, 2 seeds rising.
  std::vector<ExperimentResult> ex;
  for (int s = 1; s <= 3; ++s) {
    ExperimentResult e = budget_experiment(s, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
    std::vector<LayerBias> sa, xsa;
    const double step = 0.1 * (s + 3) / 3, diag = s == 1 ? -0.2 / 3 : 0.2 / 3;
    for (int layer = 0; layer < 4; ++layer) {
      sa.push_back({layer, 0.1 + step * layer, 0.1 + step * layer, 0.05, 0.1, {}, {}});
      xsa.push_back({layer, 0.5, 0.0, 0.3 + diag * layer, 0.4, {}, {}});
    }
    e.runs[0].bias = {{100, sa}};
    e.runs[1].bias = {{100, xsa}};
    ex.push_back(e);
  }
  // A fourth seed whose XSA run lacks layer 2 would tilt its slope: it is left out of n.
  ExperimentResult partial = budget_experiment(4, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
  partial.runs[0].bias = ex[0].runs[0].bias;
  partial.runs[1].bias = ex[0].runs[1].bias;
  partial.runs[1].bias[0].layers.erase(partial.runs[1].bias[0].layers.begin() + 2);
  ex.push_back(partial);

  const Report report = build_report(ex);
  const Table& t = report.table("bias_depth");
  ASSERT_EQ(t.rows.size(), 4u);  // one group, one row per metric in kBiasMetrics' order
  EXPECT_EQ(text(t, 0, "metric"), "cos(y,v)");
  EXPECT_EQ(integer(t, 0, "layers"), 4);
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_NEAR(num(t, 0, "base_depth_change"), 0.5, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_depth_ci_low"), 0.251586, 1e-6);
  EXPECT_NEAR(num(t, 0, "base_depth_ci_high"), 0.748414, 1e-6);
  EXPECT_EQ(integer(t, 0, "base_rising"), 3);
  EXPECT_EQ(text(t, 0, "base_depth_verdict"), "rises with depth");
  EXPECT_NEAR(num(t, 0, "var_depth_change"), 0.0, 1e-12);  // XSA's raw cos(y,v) is flat at 0.5
  EXPECT_EQ(text(t, 1, "metric"), "cos(z,v)");
  EXPECT_NEAR(num(t, 1, "var_depth_change"), 0.0, 1e-12);
  EXPECT_EQ(integer(t, 1, "var_rising"), 0);
  EXPECT_EQ(text(t, 1, "var_depth_verdict"), "flat");  // CI [0, 0]: within ±0.0005, below print precision
  EXPECT_EQ(text(t, 2, "metric"), "attn_diag");
  EXPECT_NEAR(num(t, 2, "var_depth_change"), 0.2 / 3, 1e-12);
  EXPECT_EQ(integer(t, 2, "var_rising"), 2);
  EXPECT_EQ(text(t, 2, "var_depth_verdict"), "within noise");

  // XSA's cos(z,v) rounding residue rising by 1e-8, 2e-8, 3e-8 from the first layer to the last: a CI that
  // excludes 0 ([-0.0000000, +0.0000000] printed) but lies within ±0.0005 reads "flat", not "rises with
  // depth". value_cos rising by 0.001 per seed (CI [0.001, 0.001], above 0.0005) still rises.
  std::vector<ExperimentResult> tiny = ex;
  tiny.pop_back();
  for (int s = 0; s < 3; ++s)
    for (int layer = 0; layer < 4; ++layer) {
      tiny[s].runs[1].bias[0].layers[layer].cos_z_v = 1e-8 * (s + 10) * layer / 3;
      tiny[s].runs[1].bias[0].layers[layer].value_cos = 0.4 + 0.001 * layer / 3;
    }
  const Report tiny_report = build_report(tiny);
  const Table& flat = tiny_report.table("bias_depth");
  EXPECT_GT(num(flat, 1, "var_depth_ci_low"), 0);
  EXPECT_EQ(text(flat, 1, "var_depth_verdict"), "flat");
  EXPECT_NEAR(num(flat, 3, "var_depth_change"), 0.001, 1e-12);
  EXPECT_EQ(text(flat, 3, "var_depth_verdict"), "rises with depth");

  // One layer: no depth, no rows.
  for (auto& e : ex)
    for (auto& r : e.runs) r.bias[0].layers.resize(1);
  EXPECT_TRUE(build_report(ex).table("bias_depth").rows.empty());
}

TEST(Report, BiasBudgetChangeIsPairedBySeedBetweenNeighbouringBudgets) {
  // Layer 0's final bias (step = steps; an init point at step 0 must not be used) at 100, 200 and 400 steps.
  // (cos(y,v), attn_diag, value_cos) per seed and budget, for the variant; the baseline's attn_diag is 0.1 at
  // 100 steps and 0.15 at 200 in both seeds (change +0.05, zero spread).
  //   seed 1: 100 (0.5, 0.2, 0.4)  200 (0.7, 0.25, 0.4)  400 (0.7, 0.3, 0.3)
  //   seed 2: 100 (0.6, 0.2, 0.4)  200 (0.9, 0.25, 0.5)  400 (0.9, 0.3, 0.3)
  //   seed 3: 100 only (5, 5, 5): it has no neighbour, so it is in neither interval.
  // 100 -> 200: Δ cos(y,v) = 0.2, 0.3 -> mean 0.25, sd 0.0707107, SEM 0.05, ± t_{0.975,1} * 0.05 = 0.635310.
  // 200 -> 400: Δ value_cos = -0.1, -0.2 -> mean -0.15 ± 0.635310; Δ attn_diag = 0.05, 0.05 -> ± 0.
  struct At {
    double cos, diag, vcos;
  };
  const std::map<std::int64_t, std::vector<At>> var = {{100, {{0.5, 0.2, 0.4}, {0.6, 0.2, 0.4}, {5, 5, 5}}},
                                                       {200, {{0.7, 0.25, 0.4}, {0.9, 0.25, 0.5}}},
                                                       {400, {{0.7, 0.3, 0.3}, {0.9, 0.3, 0.3}}}};
  std::vector<ExperimentResult> ex;
  for (const auto& [steps, seeds] : var)
    for (std::size_t s = 0; s < seeds.size(); ++s) {
      ExperimentResult e =
          budget_experiment(static_cast<std::int64_t>(s) + 1, steps, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
      const double base_diag = steps == 100 ? 0.1 : 0.15;
      const LayerBias init{0, 9, 9, 9, 9, {}, {}};
      e.runs[0].bias = {{0, {init}}, {steps, {LayerBias{0, 0.3, 0.3, base_diag, 0.2, {}, {}}}}};
      e.runs[1].bias = {{0, {init}},
                        {steps, {LayerBias{0, seeds[s].cos, 0.0, seeds[s].diag, seeds[s].vcos, {}, {}}}}};
      ex.push_back(e);
    }
  // Left out, as it would shift the means: seed 4, whose baseline has no bias at 200 steps (variant Δ
  // cos(y,v) +10).
  ExperimentResult one_sided_100 = budget_experiment(4, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
  ExperimentResult one_sided_200 = budget_experiment(4, 200, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
  one_sided_100.runs[0].bias = {{100, {LayerBias{0, 0.3, 0.3, 0.1, 0.2, {}, {}}}}};
  one_sided_100.runs[1].bias = {{100, {LayerBias{0, 0.0, 0.0, 0.2, 0.4, {}, {}}}}};
  one_sided_200.runs[1].bias = {{200, {LayerBias{0, 10.0, 0.0, 0.2, 0.4, {}, {}}}}};
  std::vector<ExperimentResult> all = ex;
  for (const auto& e : {one_sided_100, one_sided_200}) all.push_back(e);
  // A second layer in seeds 1 and 2 at 100 and 200 steps: the variant's cos(y,v) is 0.1 at 100 steps and 0.2
  // at 200 (Δ +0.1 in both seeds, ± 0), the baseline's 0.
  for (auto& e : all) {
    const int steps = e.config.train.steps;
    if (e.config.seed > 2 || (steps != 100 && steps != 200)) continue;
    for (auto& run : e.runs)
      run.bias.back().layers.push_back({1, run.variant == "xsa" ? steps / 1000.0 : 0.0, 0, 0, 0, {}, {}});
  }
  const Report r = build_report(all);
  const Table& t = r.table("bias_budget_change");
  ASSERT_EQ(t.rows.size(), 3u);  // 100 -> 200 layers 0 and 1, 200 -> 400 layer 0
  EXPECT_EQ(text(t, 1, "budgets"), "100 200");
  EXPECT_EQ(integer(t, 1, "layer"), 1);
  EXPECT_EQ(integer(t, 1, "n"), 2);
  EXPECT_NEAR(num(t, 1, "var_cos_y_v_change"), 0.1, 1e-12);
  EXPECT_NEAR(num(t, 1, "var_cos_y_v_change_ci"), 0.0, 1e-9);
  EXPECT_EQ(text(t, 0, "budgets"), "100 200");
  EXPECT_EQ(integer(t, 0, "layer"), 0);
  EXPECT_EQ(integer(t, 0, "n"), 2);
  EXPECT_NEAR(num(t, 0, "var_cos_y_v_change"), 0.25, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_cos_y_v_change_ci"), 0.635310, 1e-6);
  EXPECT_NEAR(num(t, 0, "var_cos_z_v_change"), 0.0, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_attn_diag_change"), 0.05, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_attn_diag_change_ci"), 0.0, 1e-9);
  EXPECT_NEAR(num(t, 0, "base_cos_y_v_change"), 0.0, 1e-12);
  EXPECT_EQ(text(t, 2, "budgets"), "200 400");
  EXPECT_EQ(integer(t, 2, "n"), 2);
  EXPECT_NEAR(num(t, 2, "var_value_cos_change"), -0.15, 1e-12);
  EXPECT_NEAR(num(t, 2, "var_value_cos_change_ci"), 0.635310, 1e-6);
  EXPECT_NEAR(num(t, 2, "var_attn_diag_change"), 0.05, 1e-12);
  EXPECT_NEAR(num(t, 2, "var_attn_diag_change_ci"), 0.0, 1e-9);

  // One budget: no neighbour, no row.
  const Report one = build_report({ex[0], ex[1]});
  EXPECT_TRUE(one.table("bias_budget_change").rows.empty());
  // Markdown signs the changes and folds the ±: "+0.250 ± 0.635".
  const std::string md = render_markdown(select_sections(r, "bias_budget_change"));
  EXPECT_NE(md.find("| +0.250 ± 0.635 |"), std::string::npos) << md;
}

}  // namespace
}  // namespace xsa::report
