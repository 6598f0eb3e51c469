// The trend sections (xsa/report/sections_trends.cpp): the improvement's mean per-seed slope per doubling of
// the sequence length (seq_len_trend, under both length designs) and of the training budget (budget_trend),
// the change of that slope from the first budget interval to the last (budget_trend_change), their
// Student-t intervals and verdicts, and which seeds are left out. On paired results built in memory, with
// hand-computed statistics in the comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "report_fixtures.h"
#include "xsa/config/config.h"
#include "xsa/records/results.h"
#include "xsa/report/sections.h"
#include "xsa/report/table.h"

namespace xsa::report {
namespace {

using namespace fixtures;  // tests/unit/common/report_fixtures.h

// The same at a training budget of `steps` steps.
ExperimentResult budget_point(std::int64_t steps, std::int64_t seq_len, std::int64_t batch,
                              std::uint64_t seed, double improvement) {
  ExperimentResult e = length_point(seq_len, batch, seed, improvement);
  e.config.train.steps = static_cast<int>(steps);
  return e;
}

TEST(Report, SeqLenTrendIsTheMeanPerSeedSlopePerDoublingOfT) {
  std::vector<ExperimentResult> points;
  // 4,096 tokens per step (batch = 4096 / T), improvements % at T = 64, 128, 256 (log2 T = 6, 7, 8):
  // seed 1: 3, 2, 1 -> slope -1; seed 2: 4, 4, 1 -> slope ((-1)(+1) + (+1)(-2)) / 2 = -1.5; seed 3: 2, 2, 2
  // -> 0. Mean -0.833333, sd 0.763763, SEM 0.440959, t_{0.975,2} = 4.302653 -> CI [-2.730625, +1.063958]:
  // noise.
  const double improvements[3][3] = {{3, 2, 1}, {4, 4, 1}, {2, 2, 2}};
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 3; ++i)
      points.push_back(length_point(64 << i, 64 >> i, seed, improvements[seed - 1][i]));
  points.push_back(length_point(64, 64, 4, 9.0));  // seed 4 lacks T = 128 and 256: left out of the slope
  // Batch fixed at 32 (tokens per step grow with T) at T = 64 and 256; T = 128 at batch 32 is on both lines,
  // this one and the 4,096-tokens one above. Seed 1: 5, 2, 1 -> slope ((-1)(5 - 8/3) + (+1)(1 - 8/3)) / 2 =
  // -2; seed 2: 6, 4, 2 -> -2; sd 0 -> CI [-2, -2]. Seed 3 has only T = 128 at batch 32: left out.
  points.push_back(length_point(64, 32, 1, 5));
  points.push_back(length_point(256, 32, 1, 1));
  points.push_back(length_point(64, 32, 2, 6));
  points.push_back(length_point(256, 32, 2, 2));

  const Report report = build_report(points);
  const Table& t = report.table("seq_len_trend");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(text(t, 0, "design"), "4096 tokens/step");
  EXPECT_EQ(text(t, 0, "seq_lens"), "64 128 256");
  EXPECT_EQ(text(t, 0, "lambda"), "1");
  EXPECT_EQ(integer(t, 0, "steps"), 300);
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(integer(t, 0, "falling"), 2);
  EXPECT_NEAR(num(t, 0, "slope"), -0.833333, 1e-6);
  EXPECT_NEAR(num(t, 0, "slope_ci_low"), -2.730625, 1e-5);
  EXPECT_NEAR(num(t, 0, "slope_ci_high"), 1.063958, 1e-5);
  EXPECT_EQ(text(t, 0, "verdict"), "within noise");

  EXPECT_EQ(text(t, 1, "design"), "batch 32");
  EXPECT_EQ(text(t, 1, "seq_lens"), "64 128 256");
  EXPECT_EQ(integer(t, 1, "n"), 2);
  EXPECT_EQ(integer(t, 1, "falling"), 2);
  EXPECT_NEAR(num(t, 1, "slope"), -2.0, 1e-12);
  EXPECT_NEAR(num(t, 1, "slope_ci_high"), -2.0, 1e-9);
  EXPECT_EQ(text(t, 1, "verdict"), "shrinks with T");

  // Rising gains give the opposite verdict: seed 1: 1, 2, 3; seed 2: 1, 3, 4 (slope 1.5); seed 3: 0, 1, 2.
  std::vector<ExperimentResult> rising;
  const double up[3][3] = {{1, 2, 3}, {1, 3, 4}, {0, 1, 2}};
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 3; ++i) rising.push_back(length_point(64 << i, 64 >> i, seed, up[seed - 1][i]));
  const Report rising_report = build_report(rising);
  const Table& r = rising_report.table("seq_len_trend");
  ASSERT_EQ(r.rows.size(), 1u);
  // Slopes {1, 1.5, 1}: mean 1.166667, sd 0.288675, SEM 0.166667 -> CI [0.449558, 1.883775].
  EXPECT_NEAR(num(r, 0, "slope_ci_low"), 0.449558, 1e-5);
  EXPECT_EQ(integer(r, 0, "falling"), 0);
  EXPECT_EQ(text(r, 0, "verdict"), "grows with T");

  // Results whose config lacks the seed pair by the runs' seed: seeds 1-3 at T = 64 and 128 (slope = the
  // difference): 2 -> 1, 3 -> 1, 1 -> 1 give slopes {-1, -2, 0}, mean -1.
  std::vector<ExperimentResult> run_seeds;
  const double two[3][2] = {{2, 1}, {3, 1}, {1, 1}};
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 2; ++i)
      run_seeds.push_back(length_point(64 << i, 64 >> i, seed, two[seed - 1][i], false));
  ASSERT_EQ(run_seeds[0].config.seed, Config{}.seed);  // the config's seed reads as its default
  const Report run_seed_report = build_report(run_seeds);
  const Table& u = run_seed_report.table("seq_len_trend");
  ASSERT_EQ(u.rows.size(), 1u);
  EXPECT_EQ(integer(u, 0, "n"), 3);
  EXPECT_NEAR(num(u, 0, "slope"), -1.0, 1e-12);
}

TEST(Report, SeqLenTrendNeedsSeedsWithEveryLength) {
  // The fixtures' λ=1 has seq_len 64 (sweep seeds 1-3) and 128 (the single run, seed 1337): no seed has both.
  const Report report = fixture_report();
  const Table& t = report.table("seq_len_trend");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(text(t, 0, "seq_lens"), "64 128");
  EXPECT_EQ(text(t, 0, "design"), "batch 32");  // the fixtures' configs leave train.batch_size at its default
  EXPECT_EQ(integer(t, 0, "n"), 0);
  EXPECT_TRUE(empty(t, 0, "slope"));
  EXPECT_EQ(text(t, 0, "verdict"), "undefined (n=0)");
  // A single length has no trend at all.
  const Report single = build_report({read_results(kSingle + "/tiny/results.json")});
  const Table& one = single.table("seq_len_trend");
  EXPECT_TRUE(one.rows.empty());
}

TEST(Report, BudgetTrendIsTheMeanPerSeedSlopePerDoublingOfSteps) {
  // T = 128 at batch 32, improvements % at 300, 1,200 and 2,400 steps (log2: 8.2288, 10.2288, 11.2288;
  // centred -1.6667, +0.3333, +1.3333, Sxx 4.6667): seed 1: 3, 2, 1.5 -> Sxy -2.3333, slope -0.5; seed 2: 4,
  // 3, 2.5 -> -0.5; seed 3: 3.5, 2.4, 2.0 -> Sxy -2.3667, slope -0.507143. Mean -0.502381, sd 0.004124, SEM
  // 0.002381, t_{0.975,2} = 4.302653 -> CI [-0.512625, -0.492137]: shrinks. Seed 4 has only 300 steps: left
  // out.
  const double gains[3][3] = {{3, 2, 1.5}, {4, 3, 2.5}, {3.5, 2.4, 2.0}};
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 3; ++i)
      points.push_back(
          budget_point(std::int64_t{300} << (i == 0 ? 0 : i + 1), 128, 32, seed, gains[seed - 1][i]));
  points.push_back(budget_point(300, 128, 32, 4, 9.0));
  // T = 256 at batch 16, 300 and 1,200 steps (log2 apart by 2): seed 1: 1 -> 2 (slope 0.5); seed 2: 1 -> 3
  // (1.0). Mean 0.75, sd 0.353553, SEM 0.25, t_{0.975,1} = 12.706205 -> CI [-2.426551, +3.926551]: noise.
  points.push_back(budget_point(300, 256, 16, 1, 1));
  points.push_back(budget_point(1200, 256, 16, 1, 2));
  points.push_back(budget_point(300, 256, 16, 2, 1));
  points.push_back(budget_point(1200, 256, 16, 2, 3));
  points.push_back(budget_point(300, 64, 64, 1, 5));  // one budget at T = 64: no trend, no row

  const Report report = build_report(points);
  const Table& t = report.table("budget_trend");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(integer(t, 0, "seq_len"), 128);
  EXPECT_EQ(integer(t, 0, "batch"), 32);
  EXPECT_EQ(text(t, 0, "lambda"), "1");
  EXPECT_EQ(text(t, 0, "budgets"), "300 1200 2400");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(integer(t, 0, "falling"), 3);
  EXPECT_NEAR(num(t, 0, "slope"), -0.502381, 1e-6);
  EXPECT_NEAR(num(t, 0, "slope_ci_low"), -0.512625, 1e-6);
  EXPECT_NEAR(num(t, 0, "slope_ci_high"), -0.492137, 1e-6);
  EXPECT_EQ(text(t, 0, "verdict"), "shrinks with the budget");

  EXPECT_EQ(integer(t, 1, "seq_len"), 256);
  EXPECT_EQ(text(t, 1, "budgets"), "300 1200");
  EXPECT_EQ(integer(t, 1, "n"), 2);
  EXPECT_EQ(integer(t, 1, "falling"), 0);
  EXPECT_NEAR(num(t, 1, "slope"), 0.75, 1e-12);
  EXPECT_NEAR(num(t, 1, "slope_ci_low"), -2.426551, 1e-5);
  EXPECT_NEAR(num(t, 1, "slope_ci_high"), 3.926551, 1e-5);
  EXPECT_EQ(text(t, 1, "verdict"), "within noise");

  // A single budget has no trend; one seed at two budgets has a slope but no CI.
  EXPECT_TRUE(build_report({budget_point(300, 128, 32, 1, 3)}).table("budget_trend").rows.empty());
  const Report one_seed = build_report({budget_point(300, 128, 32, 1, 3), budget_point(1200, 128, 32, 1, 2)});
  const Table& o = one_seed.table("budget_trend");
  ASSERT_EQ(o.rows.size(), 1u);
  EXPECT_NEAR(num(o, 0, "slope"), -0.5, 1e-12);
  EXPECT_TRUE(empty(o, 0, "slope_ci_low"));
  EXPECT_EQ(text(o, 0, "verdict"), "undefined (n=1)");
}

TEST(Report, BudgetTrendChangeIsTheLastIntervalsSlopeMinusTheFirstsPerSeed) {
  // T = 128 at batch 32, improvements % at 300, 600, 1,200, 2,400 steps (one doubling apart), so a slope over
  // an interval is the difference of the gains. Seed 1: 4, 3, 2.6, 2.4 -> first -1, last -0.2, change +0.8;
  // seed 2: 5, 3.8, 3.0, 2.7 -> -1.2, -0.3, +0.9; seed 3: 4.5, 3.5, 3.1, 2.9 -> -1.0, -0.2, +0.8. Changes:
  // mean 0.833333, sd 0.057735, SEM 0.033333, t_{0.975,2} = 4.302653 -> CI [0.689912, 0.976755]: the slope
  // rises (the shrinking slows). First slopes mean -1.066667, last -0.233333. Seed 4 lacks 600 and 1,200:
  // left out. The middle point (600 -> 1,200) is in neither interval.
  auto at = [](std::int64_t steps, std::int64_t seq_len, std::uint64_t seed, double gain) {
    return budget_point(steps, seq_len, 32, seed, gain);
  };
  const double gains[3][4] = {{4, 3, 2.6, 2.4}, {5, 3.8, 3.0, 2.7}, {4.5, 3.5, 3.1, 2.9}};
  std::vector<ExperimentResult> points;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int i = 0; i < 4; ++i) points.push_back(at(std::int64_t{300} << i, 128, seed, gains[seed - 1][i]));
  points.push_back(at(300, 128, 4, 9.0));
  points.push_back(at(2400, 128, 4, 1.0));
  // T = 256: two budgets only, one interval: no row.
  points.push_back(at(300, 256, 1, 1));
  points.push_back(at(1200, 256, 1, 2));

  const Report report = build_report(points);
  const Table& t = report.table("budget_trend_change");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(integer(t, 0, "seq_len"), 128);
  EXPECT_EQ(text(t, 0, "budgets"), "300 600 1200 2400");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_NEAR(num(t, 0, "first_slope"), -1.066667, 1e-6);
  EXPECT_NEAR(num(t, 0, "last_slope"), -0.233333, 1e-6);
  EXPECT_EQ(integer(t, 0, "rising"), 3);
  EXPECT_NEAR(num(t, 0, "change"), 0.833333, 1e-6);
  EXPECT_NEAR(num(t, 0, "change_ci_low"), 0.689912, 1e-6);
  EXPECT_NEAR(num(t, 0, "change_ci_high"), 0.976755, 1e-6);
  EXPECT_EQ(text(t, 0, "verdict"), "slope rises");

  // Unequal intervals: 300 -> 1,200 is two doublings. Gains 3, 2, 1.5 give -0.5 and -0.5 (change 0); a
  // steeper fall over the last interval (3, 2, 1) gives -0.5 and -1 (change -0.5). One seed: no CI.
  auto three = [&](std::uint64_t seed, double a, double b, double c) {
    return std::vector<ExperimentResult>{at(300, 128, seed, a), at(1200, 128, seed, b),
                                         at(2400, 128, seed, c)};
  };
  const Report one_seed = build_report(three(1, 3, 2, 1.5));
  const Table& flat = one_seed.table("budget_trend_change");
  ASSERT_EQ(flat.rows.size(), 1u);
  EXPECT_NEAR(num(flat, 0, "change"), 0.0, 1e-12);
  EXPECT_EQ(integer(flat, 0, "rising"), 0);
  EXPECT_TRUE(empty(flat, 0, "change_ci_low"));
  EXPECT_EQ(text(flat, 0, "verdict"), "undefined (n=1)");
  std::vector<ExperimentResult> steeper = three(1, 3, 2, 1);
  for (auto& e : three(2, 4, 3, 1.9)) steeper.push_back(e);  // -0.5, -1.1: change -0.6
  const Report two_seeds = build_report(steeper);
  const Table& s = two_seeds.table("budget_trend_change");
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_NEAR(num(s, 0, "change"), -0.55, 1e-12);
  EXPECT_NEAR(num(s, 0, "last_slope"), -1.05, 1e-12);
  // changes -0.5, -0.6: sd 0.070711, SEM 0.05, t_{0.975,1} = 12.706205 -> [-1.185310, +0.085310]: noise.
  EXPECT_NEAR(num(s, 0, "change_ci_low"), -1.185310, 1e-5);
  EXPECT_EQ(text(s, 0, "verdict"), "within noise");
}

}  // namespace
}  // namespace xsa::report
