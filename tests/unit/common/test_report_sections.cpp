// The section registry and the comparison sections (xsa/report/sections.h, sections_comparisons.cpp): the
// report carries every registered section in the registry's order, with distinct column keys; the paired
// table lists every run; by_seq_len's per-group Student-t intervals and verdicts; and the verdict lines, one
// per group plus a pooled line only where it pools. On the fixtures in tests/fixtures/report, with the
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
            "eval_curve,"
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

}  // namespace
}  // namespace xsa::report
