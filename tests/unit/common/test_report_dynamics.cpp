// The learning-dynamics sections (xsa/report/sections_dynamics.cpp): the plateau escape (the first evaluation
// at or below a level both arms reach, paired per seed) and the attention dynamics per layer over training.
// On paired results built in memory, with hand-computed values in the comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "report_fixtures.h"
#include "xsa/records/results.h"
#include "xsa/report/sections.h"
#include "xsa/report/table.h"

namespace xsa::report {
namespace {

using namespace fixtures;  // tests/unit/common/report_fixtures.h

// Evaluations at steps 0, 50 and 100. The level is halfway between the common start (9) and the worse arm's
// final loss: seed 1 (9 + 3) / 2 = 6: SA reaches it at 100 (6.5 at 50 is above), XSA at 50 (4), Δ −50;
// seed 2 (9 + 3.2) / 2 = 6.1: both at 50, Δ 0; seed 3 (9 + 3.1) / 2 = 6.05: SA at 100, XSA at 50 (5.9), Δ
// −50. Mean Δ −33.333, SD 28.868, SE 16.667, t_{0.975,2} = 4.302653 -> CI [−105.044, 38.378]; levels
// mean 6.05, SA's steps mean 83.333, XSA's 50.
TEST(Report, PlateauEscapeIsTheFirstEvaluationBelowALevelBothArmsReach) {
  const std::vector<std::vector<double>> base = {{9, 6.5, 3}, {9, 5, 3.2}, {9, 7, 3.1}};
  const std::vector<std::vector<double>> var = {{9, 4, 2.9}, {9, 4, 3.0}, {9, 5.9, 3.0}};
  std::vector<ExperimentResult> ex;
  for (int s = 0; s < 3; ++s) ex.push_back(budget_experiment(s + 1, 100, "xsa", base[s], var[s], 2.9, 2.8));
  // Seed 4's worse final loss (9.5) is not below the common start (9): no plateau to leave, left out.
  ex.push_back(budget_experiment(4, 100, "xsa", {9, 9.2, 9.5}, {9, 4, 3}, 9.4, 2.9));
  const Report r = build_report(ex);
  const Table& t = r.table("plateau_escape");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(integer(t, 0, "seq_len"), 16);
  EXPECT_NEAR(num(t, 0, "level"), 6.05, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_step"), 250.0 / 3, 1e-9);
  EXPECT_NEAR(num(t, 0, "var_step"), 50.0, 1e-12);
  EXPECT_NEAR(num(t, 0, "mean_delta_steps"), -100.0 / 3, 1e-9);
  EXPECT_NEAR(num(t, 0, "delta_ci_low"), -105.044, 1e-3);
  EXPECT_NEAR(num(t, 0, "delta_ci_high"), 38.378, 1e-3);
}

// Two seeds measured the dynamics at step 100 (a third did not and is left out): the means over seeds of each
// arm's max logit (10, 12 -> 11; 4, 6 -> 5), entropy (2.0, 2.2 -> 2.1; 1.5, 1.7 -> 1.6) and first-position
// mass (0.3, 0.5 -> 0.4; 0.1, 0.3 -> 0.2).
TEST(Report, DynamicsArePerStepAndLayerMeansOverSeeds) {
  std::vector<ExperimentResult> ex;
  const AttentionDynamics base[2] = {{10, 2.0, 0.3}, {12, 2.2, 0.5}}, var[2] = {{4, 1.5, 0.1}, {6, 1.7, 0.3}};
  for (int s = 0; s < 3; ++s) {
    ExperimentResult e = budget_experiment(s + 1, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
    for (int r = 0; r < 2; ++r) {
      LayerBias layer{};
      if (s < 2) layer.dynamics = r == 0 ? base[s] : var[s];
      e.runs[r].bias = {{100, {layer}}};
    }
    ex.push_back(e);
  }
  const Report r = build_report(ex);
  const Table& t = r.table("dynamics");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(integer(t, 0, "step"), 100);
  EXPECT_EQ(integer(t, 0, "layer"), 0);
  EXPECT_EQ(integer(t, 0, "n"), 2);
  EXPECT_NEAR(num(t, 0, "base_max_logit"), 11.0, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_max_logit"), 5.0, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_attn_entropy"), 2.1, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_attn_entropy"), 1.6, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_attn_sink"), 0.4, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_attn_sink"), 0.2, 1e-12);
  // A seed whose baseline measured the dynamics from step 100 on only (a run resumed across the version that
  // added them) is left out at every step, so the rows at 50 and 100 both average seeds 1 and 2.
  std::vector<ExperimentResult> resumed;
  for (int s = 0; s < 3; ++s) {
    ExperimentResult e = budget_experiment(s + 1, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
    for (int r = 0; r < 2; ++r) {
      LayerBias early{}, late{};
      early.dynamics = r == 0 ? AttentionDynamics{1, 3.0, 0.2} : AttentionDynamics{2, 3.0, 0.2};
      late.dynamics = r == 0 ? base[s % 2] : var[s % 2];
      if (s == 2 && r == 0) early.dynamics.reset();
      e.runs[r].bias = {{50, {early}}, {100, {late}}};
    }
    resumed.push_back(e);
  }
  const Report with_resumed = build_report(resumed);
  const Table& both = with_resumed.table("dynamics");
  ASSERT_EQ(both.rows.size(), 2u);
  EXPECT_EQ(integer(both, 0, "step"), 50);
  EXPECT_EQ(integer(both, 0, "n"), 2);
  EXPECT_EQ(integer(both, 1, "step"), 100);
  EXPECT_EQ(integer(both, 1, "n"), 2);
  EXPECT_NEAR(num(both, 1, "base_max_logit"), 11.0, 1e-12);  // seed 3 (10 at step 100) would make it 32/3
  EXPECT_NEAR(num(both, 0, "var_max_logit"), 2.0, 1e-12);
  // Results without dynamics (every committed file before question 9) give no rows.
  std::vector<ExperimentResult> old = {budget_experiment(1, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8)};
  const Report none = build_report(old);
  EXPECT_TRUE(none.table("dynamics").rows.empty());
}

// Two seeds, dynamics at steps 50 and 100 of layer 0. Seed means: baseline {25, 0.8, 0.4} at 50 and {11, 2.1,
// 0.1} at 100; variant {5, 2.6, 0.2} and {7, 1.7, 0.2}. The summary keeps each metric's extreme in the
// direction of trouble (largest logit, lowest entropy, largest first-position mass), its step (the first on a
// tie) and the value at the last step.
TEST(Report, DynamicsSummaryKeepsEachMetricsExtremeAndItsEnd) {
  const AttentionDynamics base[2][2] = {{{20, 1.0, 0.3}, {10, 2.0, 0.1}}, {{30, 0.6, 0.5}, {12, 2.2, 0.1}}};
  const AttentionDynamics var[2][2] = {{{4, 2.5, 0.1}, {6, 1.5, 0.2}}, {{6, 2.7, 0.3}, {8, 1.9, 0.2}}};
  std::vector<ExperimentResult> ex;
  for (int s = 0; s < 2; ++s) {
    ExperimentResult e = budget_experiment(s + 1, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8);
    for (int r = 0; r < 2; ++r) {
      LayerBias early{}, late{};
      early.dynamics = r == 0 ? base[s][0] : var[s][0];
      late.dynamics = r == 0 ? base[s][1] : var[s][1];
      e.runs[r].bias = {{50, {early}}, {100, {late}}};
    }
    ex.push_back(e);
  }
  const Report r = build_report(ex);
  const Table& t = r.table("dynamics_summary");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(integer(t, 0, "layer"), 0);
  EXPECT_EQ(integer(t, 0, "n"), 2);
  EXPECT_EQ(integer(t, 0, "end_step"), 100);
  EXPECT_NEAR(num(t, 0, "base_max_logit_extreme"), 25.0, 1e-12);
  EXPECT_EQ(integer(t, 0, "base_max_logit_extreme_step"), 50);
  EXPECT_NEAR(num(t, 0, "base_max_logit_end"), 11.0, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_max_logit_extreme"), 7.0, 1e-12);
  EXPECT_EQ(integer(t, 0, "var_max_logit_extreme_step"), 100);
  EXPECT_NEAR(num(t, 0, "base_attn_entropy_extreme"), 0.8, 1e-12);
  EXPECT_EQ(integer(t, 0, "base_attn_entropy_extreme_step"), 50);
  EXPECT_NEAR(num(t, 0, "base_attn_entropy_end"), 2.1, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_attn_entropy_extreme"), 1.7, 1e-12);
  EXPECT_EQ(integer(t, 0, "var_attn_entropy_extreme_step"), 100);
  EXPECT_NEAR(num(t, 0, "base_attn_sink_extreme"), 0.4, 1e-12);
  EXPECT_NEAR(num(t, 0, "base_attn_sink_end"), 0.1, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_attn_sink_extreme"), 0.2, 1e-12);
  EXPECT_EQ(integer(t, 0, "var_attn_sink_extreme_step"), 50);
  // Results without dynamics give no rows.
  const Report none = build_report({budget_experiment(1, 100, "xsa", {9, 4, 3}, {9, 4, 2.9}, 2.9, 2.8)});
  EXPECT_TRUE(none.table("dynamics_summary").rows.empty());
}

}  // namespace
}  // namespace xsa::report
