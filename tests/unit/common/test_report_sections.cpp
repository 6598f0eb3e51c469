// The section registry and the comparison sections (xsa/report/sections.h, sections_comparisons.cpp): the
// report carries every registered section in the registry's order, with distinct column keys; the paired
// table lists every run; by_seq_len's per-group Student-t intervals and verdicts; and the verdict lines, one
// per group plus a pooled line only where it pools; loss_by_position's paired Δ per position bucket. On the
// fixtures in tests/fixtures/report, with the
// expected numbers worked out by hand from the fixture losses in the comments.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "report_fixtures.h"
#include "xsa/report/sections.h"
#include "xsa/report/table.h"

namespace xsa::report {
namespace {

using namespace fixtures;  // tests/unit/common/report_fixtures.h

// The registry is the one list of sections: the report carries them in its order, under its keys and titles,
// and within every section the column keys are distinct and every "± column" names a column of the section.
TEST(Report, SectionsComeFromTheRegistryInItsOrder) {
  const Report r = fixture_report();
  ASSERT_EQ(r.tables.size(), sections().size());
  for (std::size_t i = 0; i < r.tables.size(); ++i) {
    const Table& t = r.tables[i];
    EXPECT_EQ(t.key, sections()[i].key);
    EXPECT_EQ(t.title, sections()[i].title);
    EXPECT_FALSE(sections()[i].help.empty()) << t.key;
    std::set<std::string> keys;
    for (const auto& c : t.columns)
      EXPECT_TRUE(keys.insert(c.key).second) << t.key << ": " << c.key << " twice";
    for (const auto& c : t.columns) {
      if (!c.plus_minus.empty()) {
        EXPECT_TRUE(keys.count(c.plus_minus)) << t.key << ": " << c.plus_minus;
      }
    }
    for (const auto& row : t.rows) EXPECT_EQ(row.size(), t.columns.size()) << t.key;
  }
  EXPECT_EQ(section_keys(","),
            "paired,by_lambda,by_budget,budget_trend,budget_trend_change,by_seq_len,"
            "seq_len_trend,size_trend,lr_selection,lr_change,setup_selection,setup_effect,setup_effect_by_lr,"
            "eval_curve,loss_by_position,"
            "bias_init,bias,bias_depth,"
            "bias_budget_change,plateau_escape,dynamics,dynamics_summary,learned_lambda,verdicts,notes");
}

TEST(Report, PairedTableListsEveryRunWithDeltaOnVariantsOnly) {
  const Report report = fixture_report();
  const Table& t = report.table("paired");
  ASSERT_EQ(t.rows.size(), 3u + 12u);  // tiny: sa, xsa, learned; sweep: 6 × (sa + variant)
  // Rows follow the sorted paths: .../single/tiny before .../sweep/lam/...
  EXPECT_EQ(text(t, 0, "experiment"), "tiny");
  EXPECT_TRUE(empty(t, 0, "delta_val_loss"));
  EXPECT_EQ(text(t, 1, "variant"), "xsa");
  EXPECT_DOUBLE_EQ(num(t, 1, "val_loss"), 2.45);
  EXPECT_DOUBLE_EQ(num(t, 1, "val_loss_sem"), 0.012);
  EXPECT_NEAR(num(t, 1, "delta_val_loss"), -0.05, 1e-12);
  EXPECT_NEAR(num(t, 1, "improvement_pct"), 2.0, 1e-9);
  // lambda0.5-seed3: 1.91 vs 1.90 -> Δ +0.01, improvement 100·(-0.01)/1.90 = -0.526316 %.
  EXPECT_EQ(text(t, 8, "experiment"), "lambda0.5-seed3");
  EXPECT_EQ(text(t, 8, "variant"), "lambda=0.5");
  EXPECT_EQ(text(t, 8, "lambda"), "0.5");
  EXPECT_EQ(integer(t, 8, "seed"), 3);
  EXPECT_NEAR(num(t, 8, "improvement_pct"), -0.526316, 1e-6);
}

TEST(Report, BySeqLenGroupsSeedsWithStudentTIntervals) {
  const Report report = fixture_report();
  const Table& t = report.table("by_seq_len");
  // Sorted by seq_len, then λ (numbers before "learned").
  ASSERT_EQ(t.rows.size(), 4u);

  // seq_len 64, λ=0.5: Δ = {-0.02, -0.03, +0.01}; mean -0.0133333, sd 0.0208167, SEM 0.0120185,
  // t_{0.975,2} = 4.302653 -> CI [-0.0650447, 0.0383781] contains 0. Improvements {1, 1.428571, -0.526316}:
  // mean 0.634085, sd 1.027529, SEM 0.593244 -> CI [-1.918438, 3.186608]. 2 of 3 seeds lower the loss.
  EXPECT_EQ(integer(t, 0, "seq_len"), 64);
  EXPECT_EQ(text(t, 0, "lambda"), "0.5");
  EXPECT_EQ(integer(t, 0, "n"), 3);
  EXPECT_EQ(integer(t, 0, "favouring"), 2);
  EXPECT_NEAR(num(t, 0, "mean_delta"), -0.0133333, 1e-6);
  EXPECT_NEAR(num(t, 0, "delta_ci_low"), -0.0650447, 1e-6);
  EXPECT_NEAR(num(t, 0, "delta_ci_high"), 0.0383781, 1e-6);
  EXPECT_NEAR(num(t, 0, "mean_improvement_pct"), 0.634085, 1e-6);
  EXPECT_NEAR(num(t, 0, "improvement_ci_low"), -1.918438, 1e-5);
  EXPECT_NEAR(num(t, 0, "improvement_ci_high"), 3.186608, 1e-5);
  EXPECT_EQ(text(t, 0, "verdict"), "within noise");
  // Each arm's mean final val loss: SA {2.0, 2.1, 1.9} -> 2.0, λ=0.5 {1.98, 2.07, 1.91} -> 1.986667.
  EXPECT_NEAR(num(t, 0, "base_val_loss"), 2.0, 1e-12);
  EXPECT_NEAR(num(t, 0, "var_val_loss"), 5.96 / 3, 1e-12);

  // seq_len 64, xsa (λ=1): Δ = {-0.05, -0.06, -0.04} -> CI [-0.0748414, -0.0251586] -> better, 3/3.
  // Improvements {2.5, 2.857143, 2.105263}: mean 2.487469.
  EXPECT_EQ(text(t, 1, "lambda"), "1");
  EXPECT_EQ(integer(t, 1, "favouring"), 3);
  EXPECT_NEAR(num(t, 1, "delta_ci_low"), -0.0748414, 1e-6);
  EXPECT_NEAR(num(t, 1, "delta_ci_high"), -0.0251586, 1e-6);
  EXPECT_NEAR(num(t, 1, "mean_improvement_pct"), 2.487469, 1e-6);
  EXPECT_EQ(text(t, 1, "verdict"), "better");

  // seq_len 128: single seed -> no CI, verdict undefined.
  EXPECT_EQ(integer(t, 2, "seq_len"), 128);
  EXPECT_EQ(integer(t, 2, "n"), 1);
  EXPECT_TRUE(empty(t, 2, "delta_ci_low"));
  EXPECT_TRUE(empty(t, 2, "improvement_ci_high"));
  EXPECT_EQ(text(t, 2, "verdict"), "undefined (n=1)");
  EXPECT_EQ(text(t, 3, "lambda"), "learned");
}

TEST(Report, VerdictLinesPerGroupPlusPooledOnlyWhenItPools) {
  const Report report = fixture_report();
  const Table& t = report.table("verdicts");
  // Four per-seq_len groups + one pooled line (λ=1 spans 64 and 128); λ=0.5 and learned pool nothing new.
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(text(t, 0, "text"),
            "λ=0.5 vs sa, seq_len 64: within noise — mean Δ -0.0133 (95% CI [-0.0650, +0.0384]), "
            "improvement +0.63%, 2/3 seeds favour the variant");
  EXPECT_EQ(text(t, 1, "verdict"), "better");
  EXPECT_NE(text(t, 2, "text").find("CI undefined with a single seed"), std::string::npos);
  EXPECT_EQ(text(t, 4, "scope"), "pooled");
  EXPECT_EQ(text(t, 4, "verdict"), "better");
}

// The row of loss_by_position for a length, batch and first position (the table's order is the groups' order,
// which this test need not know).
std::size_t position_row(const Table& t, std::int64_t seq_len, std::int64_t batch, std::int64_t first) {
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    if (integer(t, i, "seq_len") == seq_len && integer(t, i, "batch") == batch &&
        integer(t, i, "first") == first)
      return i;
  ADD_FAILURE() << "no row T=" << seq_len << " batch " << batch << " from " << first;
  return 0;
}

// fixtures/report/lengths (make_fixtures.py): per bucket sa's loss, and xsa = sa − 0.02 × gain × w. Two
// seeds, so the CI's half-width is t_{0.975,1} × SE = 12.7062047 × |Δ₁ − Δ₂| / 2.
TEST(Report, LossByPositionPairsSeedsPerBucket) {
  const Discovery d = discover_results({kFixtures + "/lengths"});
  const Report report = build_report(d.experiments, d.notes);
  const Table& t = report.table("loss_by_position");
  // T=64 (×2 batches) 1–16, 17–64; T=128 1–16, 17–64, 65–128; T=256 (×2 batches) 1–16, 17–64, 65–256.
  ASSERT_EQ(t.rows.size(), 2u * 2u + 3u + 2u * 3u);

  // T=64 at batch 64, gains 3 and 4 %. Positions 1–16 (w 0.25): Δ = −0.005 × gain = {−0.015, −0.02}, mean
  // −0.0175, SE 0.0025, half-width 0.0317655; sa 2.6, xsa 2.6 − 0.0175 = 2.5825.
  std::size_t r = position_row(t, 64, 64, 1);
  EXPECT_EQ(integer(t, r, "last"), 16);
  EXPECT_EQ(integer(t, r, "n"), 2);
  EXPECT_EQ(text(t, r, "baseline"), "sa");
  EXPECT_EQ(text(t, r, "lambda"), "1");
  EXPECT_EQ(integer(t, r, "steps"), 300);
  EXPECT_NEAR(num(t, r, "base_val_loss"), 2.6, 1e-12);
  EXPECT_NEAR(num(t, r, "var_val_loss"), 2.5825, 1e-12);
  EXPECT_NEAR(num(t, r, "mean_delta"), -0.0175, 1e-12);
  EXPECT_NEAR(num(t, r, "delta_ci_low"), -0.0492655, 1e-6);
  EXPECT_NEAR(num(t, r, "delta_ci_high"), 0.0142655, 1e-6);
  // Positions 17–64 (w 1.25): Δ = −0.025 × gain = {−0.075, −0.1}, mean −0.0875, SE 0.0125, half 0.1588276.
  r = position_row(t, 64, 64, 17);
  EXPECT_EQ(integer(t, r, "last"), 64);
  EXPECT_NEAR(num(t, r, "base_val_loss"), 1.8, 1e-12);
  EXPECT_NEAR(num(t, r, "mean_delta"), -0.0875, 1e-12);
  EXPECT_NEAR(num(t, r, "delta_ci_low"), -0.2463276, 1e-6);
  EXPECT_NEAR(num(t, r, "delta_ci_high"), 0.0713276, 1e-6);
  // T=128 at batch 32, gains 2 and 2.5: the last bucket is cut at T; 65–128 (w 1.5): Δ = −0.03 × gain =
  // {−0.06, −0.075}, mean −0.0675, SE 0.0075, half 0.0952965.
  r = position_row(t, 128, 32, 65);
  EXPECT_EQ(integer(t, r, "last"), 128);
  EXPECT_NEAR(num(t, r, "mean_delta"), -0.0675, 1e-12);
  EXPECT_NEAR(num(t, r, "delta_ci_low"), -0.1627965, 1e-6);
  EXPECT_NEAR(num(t, r, "delta_ci_high"), 0.0277965, 1e-6);
  // T=256 at batch 16, gains 1 and 1: the seeds agree, so the interval is the mean itself.
  r = position_row(t, 256, 16, 65);
  EXPECT_EQ(integer(t, r, "last"), 256);
  EXPECT_NEAR(num(t, r, "mean_delta"), -0.025, 1e-12);
  EXPECT_NEAR(num(t, r, "delta_ci_low"), -0.025, 1e-12);
  EXPECT_NEAR(num(t, r, "delta_ci_high"), -0.025, 1e-12);
}

// Results without the field (every committed result before it) give no rows, and a group in which one run
// lacks it gives none either: its buckets would pair fewer seeds than the group's other tables count.
TEST(Report, LossByPositionOnlyWhereEveryPairHasIt) {
  EXPECT_TRUE(fixture_report().table("loss_by_position").rows.empty());
  Discovery d = discover_results({kFixtures + "/lengths"});
  for (auto& e : d.experiments)
    if (e.seq_len() == 64 && e.config.train.batch_size == 64 && e.runs[0].seed == 2u)
      e.runs[1].final.loss_by_position.clear();
  const Report report = build_report(d.experiments, d.notes);
  const Table& t = report.table("loss_by_position");
  EXPECT_EQ(t.rows.size(), 2u + 3u + 2u * 3u);  // T=64 at batch 64 gone, the other groups whole
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    EXPECT_FALSE(integer(t, i, "seq_len") == 64 && integer(t, i, "batch") == 64) << i;
}

}  // namespace
}  // namespace xsa::report
