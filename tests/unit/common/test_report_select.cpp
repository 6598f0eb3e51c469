// Choosing what the report covers, as xsa-inspect's options do, in-process: the baseline every run is
// compared with (select_baseline, --baseline), the variants by λ label with their baselines (select_lambdas,
// --lambda) and the sections in the order asked (select_sections, --section), with the one-line InputError
// naming what there is to choose from. On the fixtures in tests/fixtures/report.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "report_fixtures.h"
#include "time_bound.h"
#include "xsa/records/results.h"
#include "xsa/report/discovery.h"
#include "xsa/report/sections.h"
#include "xsa/report/select.h"
#include "xsa/report/table.h"
#include "xsa/util/error.h"

namespace xsa::report {
namespace {

using namespace fixtures;  // tests/unit/common/report_fixtures.h

TEST(Report, SelectSectionsKeepsOrderAndRejectsUnknownKeys) {
  const Report r = fixture_report();
  const Report two = select_sections(r, "bias,by_lambda");
  ASSERT_EQ(two.tables.size(), 2u);
  EXPECT_EQ(two.tables[0].key, "bias");
  EXPECT_EQ(two.tables[1].key, "by_lambda");
  try {
    select_sections(r, "by_lambda,bogus");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--section 'bogus'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("by_budget"), std::string::npos) << e.what();
  }
}

// Each item of --section copies a whole table: a repeated one is refused, at its first repeat, so the output
// is never the option's length times a table.
TEST(Report, SelectSectionsRefusesARepeatedSection) {
  const Report r = fixture_report();
  std::string repeated = "by_lambda";
  for (int i = 0; i < 100000; ++i) repeated += ",bias";
  const auto start = std::chrono::steady_clock::now();
  try {
    select_sections(r, repeated);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--section 'bias': listed twice, expected each section once");
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            test_support::kLooseSeconds);
}

TEST(Report, SelectLambdasKeepsThoseVariantsWithTheirBaselines) {
  const Discovery d = discover_results({kSingle, kSweep});
  const std::vector<ExperimentResult> kept = select_lambdas(d.experiments, "learned,0.5");
  // tiny keeps sa + learned (its xsa goes); the three λ=0.5 seeds stay; the three λ=1 seeds are dropped.
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept[0].label, "tiny");
  ASSERT_EQ(kept[0].runs.size(), 2u);
  EXPECT_EQ(kept[0].runs[0].variant, "sa");
  EXPECT_EQ(kept[0].runs[1].variant, "learned");
  ASSERT_EQ(kept[0].comparisons.size(), 1u);
  EXPECT_EQ(kept[0].comparisons[0].variant, "learned");
  const Report r = build_report(kept);
  EXPECT_EQ(r.table("paired").rows.size(), 2u + 3u * 2u);
  const Table& by_lambda = r.table("by_lambda");
  ASSERT_EQ(by_lambda.rows.size(), 2u);  // numbers before names
  EXPECT_EQ(text(by_lambda, 0, "lambda"), "0.5");
  EXPECT_EQ(integer(by_lambda, 0, "n"), 3);
  EXPECT_EQ(text(by_lambda, 1, "lambda"), "learned");
  // Spaces around items and other spellings of a number are accepted.
  EXPECT_EQ(select_lambdas(d.experiments, " 0.50 , learned").size(), 4u);
  EXPECT_EQ(select_lambdas(d.experiments, "1.0").size(), 4u);  // tiny (sa, xsa) + three λ=1 seeds
  try {
    select_lambdas(d.experiments, "1,0.3");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--lambda '0.3'"), std::string::npos) << what;
    EXPECT_NE(what.find("0.5, 1, learned"), std::string::npos) << what;
  }
}

TEST(Report, SelectBaselineComparesEveryRunWithTheNamedOne) {
  const Discovery d = discover_results({kSingle, kSweep});
  // xsa is in tiny and the three λ=1 seeds; the λ=0.5 seeds have none and are dropped.
  const std::vector<ExperimentResult> rebased = select_baseline(d.experiments, "xsa");
  ASSERT_EQ(rebased.size(), 4u);
  const ExperimentResult& tiny = rebased[0];
  EXPECT_EQ(tiny.label, "tiny");
  ASSERT_EQ(tiny.runs.size(), 3u);  // the named run first, the others in their order
  EXPECT_EQ(tiny.runs[0].variant, "xsa");
  EXPECT_EQ(tiny.runs[1].variant, "sa");
  EXPECT_EQ(tiny.runs[2].variant, "learned");
  ASSERT_EQ(tiny.comparisons.size(), 2u);
  // Final losses sa 2.5, xsa 2.45, learned 2.47: Δ = run − xsa, improvement = 100 (xsa − run) / xsa.
  EXPECT_EQ(tiny.comparisons[0].baseline, "xsa");
  EXPECT_EQ(tiny.comparisons[0].variant, "sa");
  EXPECT_NEAR(tiny.comparisons[0].delta_val_loss, 0.05, 1e-12);
  EXPECT_NEAR(tiny.comparisons[0].improvement_pct, -100.0 * 0.05 / 2.45, 1e-9);
  EXPECT_FALSE(tiny.comparisons[0].delta_val_loss_sem.has_value());  // no per-window losses in a file
  EXPECT_NEAR(tiny.comparisons[1].delta_val_loss, 0.02, 1e-12);
  // The three λ=1 seeds: sa − xsa = 2.0 − 1.95, 2.1 − 2.04, 1.9 − 1.86 = +0.05, +0.06, +0.04: mean +0.05,
  // sd 0.01, 95% CI ±t(0.975, 2) · 0.01 / √3, every seed against SA, so "worse".
  const std::vector<ExperimentResult> sweep = select_baseline(discover_results({kSweep}).experiments, "xsa");
  ASSERT_EQ(sweep.size(), 3u);
  const Report report = build_report(sweep);
  const Table& by_lambda = report.table("by_lambda");
  ASSERT_EQ(by_lambda.rows.size(), 1u);
  EXPECT_EQ(text(by_lambda, 0, "baseline"), "xsa");
  EXPECT_EQ(text(by_lambda, 0, "lambda"), "0");
  EXPECT_EQ(integer(by_lambda, 0, "n"), 3);
  EXPECT_NEAR(num(by_lambda, 0, "mean_delta"), 0.05, 1e-9);
  const double half = 4.302652729911 * 0.01 / std::sqrt(3.0);
  EXPECT_NEAR(num(by_lambda, 0, "delta_ci_low"), 0.05 - half, 1e-9);
  EXPECT_NEAR(num(by_lambda, 0, "delta_ci_high"), 0.05 + half, 1e-9);
  EXPECT_NEAR(num(by_lambda, 0, "mean_improvement_pct"),
              -100.0 * (0.05 / 1.95 + 0.06 / 2.04 + 0.04 / 1.86) / 3.0, 1e-9);
  EXPECT_EQ(text(by_lambda, 0, "verdict"), "worse");
  // Naming the first run keeps the file's comparisons, and with them their per-window SE.
  std::vector<ExperimentResult> with_se = {d.experiments[0]};
  with_se[0].comparisons[0].delta_val_loss_sem = 0.004;
  const std::vector<ExperimentResult> same = select_baseline(with_se, "sa");
  ASSERT_EQ(same[0].comparisons.size(), 2u);
  EXPECT_EQ(same[0].comparisons[0].variant, "xsa");
  EXPECT_EQ(same[0].comparisons[0].delta_val_loss_sem, 0.004);
  EXPECT_NEAR(same[0].comparisons[0].delta_val_loss, -0.05, 1e-12);
  EXPECT_FALSE(same[0].comparisons[1].delta_val_loss_sem.has_value());
  // Applied before the λ filter: xsa against learned only.
  const std::vector<ExperimentResult> learned = select_lambdas(rebased, "learned");
  ASSERT_EQ(learned.size(), 1u);
  ASSERT_EQ(learned[0].runs.size(), 2u);
  EXPECT_EQ(learned[0].runs[0].variant, "xsa");
  EXPECT_EQ(learned[0].runs[1].variant, "learned");
  try {
    select_baseline(d.experiments, "lambda=0.3");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--baseline 'lambda=0.3'"), std::string::npos) << what;
    EXPECT_NE(what.find("lambda=0.5, learned, sa, xsa"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace xsa::report
