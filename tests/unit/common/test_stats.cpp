// Statistics for paired comparisons, checked against closed forms and published t-table values.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "xsa/stats/stats.h"

namespace xsa::stats {
namespace {

TEST(Stats, MeanSdAndStandardErrorOfAHandVector) {
  // {2,4,4,4,5,5,7,9}: mean 40/8 = 5; squared deviations 9+1+1+1+0+0+4+16 = 32;
  // sample sd = sqrt(32/7) = 2.138090; SEM = 2.138090 / sqrt(8) = 0.755929.
  const std::vector<double> xs = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(xs), 5.0);
  EXPECT_NEAR(sample_sd(xs), 2.138090, 1e-6);
  EXPECT_NEAR(standard_error(xs), 0.755929, 1e-6);
}

TEST(Stats, DegenerateSizesGiveNaN) {
  EXPECT_TRUE(std::isnan(mean({})));
  EXPECT_TRUE(std::isnan(sample_sd({1.0})));
  EXPECT_TRUE(std::isnan(standard_error({1.0})));
  EXPECT_DOUBLE_EQ(mean({3.5}), 3.5);
}

TEST(Stats, IncompleteBetaMatchesClosedForms) {
  // I_x(1,1) = x;  I_x(a,1) = x^a;  I_x(1,b) = 1 - (1-x)^b;  I_{1/2}(a,a) = 1/2 by symmetry.
  EXPECT_NEAR(regularized_incomplete_beta(1, 1, 0.3), 0.3, 1e-12);
  EXPECT_NEAR(regularized_incomplete_beta(3, 1, 0.6), 0.216, 1e-12);
  EXPECT_NEAR(regularized_incomplete_beta(1, 4, 0.2), 1 - std::pow(0.8, 4), 1e-12);
  EXPECT_NEAR(regularized_incomplete_beta(7.5, 7.5, 0.5), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(regularized_incomplete_beta(2, 3, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(regularized_incomplete_beta(2, 3, 1.0), 1.0);
  EXPECT_THROW(regularized_incomplete_beta(0, 1, 0.5), std::invalid_argument);
  EXPECT_THROW(regularized_incomplete_beta(1, 1, 1.5), std::invalid_argument);
}

TEST(Stats, TCdfMatchesClosedForms) {
  // ν = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/π, so F(1) = 0.75.
  EXPECT_NEAR(student_t_cdf(1.0, 1), 0.75, 1e-12);
  EXPECT_NEAR(student_t_cdf(-3.0, 1), 0.5 + std::atan(-3.0) / M_PI, 1e-12);
  // ν = 2: F(t) = 1/2 + t / (2 sqrt(t² + 2)); F(2) = 0.5 + 2/(2·√6) = 0.908248.
  EXPECT_NEAR(student_t_cdf(2.0, 2), 0.908248290, 1e-9);
  EXPECT_DOUBLE_EQ(student_t_cdf(0.0, 5), 0.5);
}

TEST(Stats, TQuantilesMatchTheTTable) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 5e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.30265, 5e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.77645, 5e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.26216, 5e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 29), 2.04523, 5e-6);
  EXPECT_NEAR(student_t_quantile(0.995, 4), 4.60409, 5e-6);
  // Large ν approaches the normal quantile 1.959964.
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.959966, 1e-5);
  // Symmetry and the median.
  EXPECT_NEAR(student_t_quantile(0.025, 4), -2.77645, 5e-6);
  EXPECT_NEAR(student_t_quantile(0.5, 3), 0.0, 1e-12);
  EXPECT_THROW(student_t_quantile(1.0, 3), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(0.9, 0), std::invalid_argument);
}

TEST(Stats, PairedIntervalComputedByHand) {
  // Δ = {-0.05, -0.06, -0.04}: mean -0.05; deviations 0, -0.01, 0.01 -> sd = sqrt(0.0002/2) = 0.01;
  // SEM = 0.01/√3 = 0.00577350; t_{0.975,2} = 4.302653 -> half width 0.0248414;
  // CI = [-0.0748414, -0.0251586]: entirely below 0, the variant's loss is lower -> better.
  const PairedInterval ci = paired_interval({-0.05, -0.06, -0.04});
  EXPECT_EQ(ci.n, 3u);
  EXPECT_NEAR(ci.mean, -0.05, 1e-12);
  ASSERT_TRUE(ci.defined());
  EXPECT_NEAR(*ci.sd, 0.01, 1e-12);
  EXPECT_NEAR(*ci.low, -0.0748414, 1e-7);
  EXPECT_NEAR(*ci.high, -0.0251586, 1e-7);
  EXPECT_EQ(verdict_for_loss_delta(ci), Verdict::kBetter);
}

TEST(Stats, PairedIntervalWorseAndWithinNoise) {
  // {1,2,3,4,5}: mean 3, sd sqrt(10/4) = 1.581139, SEM 0.707107, t_{0.975,4} = 2.776445 -> ± 1.963243.
  const PairedInterval worse = paired_interval({1, 2, 3, 4, 5});
  EXPECT_NEAR(*worse.low, 1.036757, 1e-6);
  EXPECT_NEAR(*worse.high, 4.963243, 1e-6);
  EXPECT_EQ(verdict_for_loss_delta(worse), Verdict::kWorse);

  // {-0.02, -0.03, 0.01}: mean -0.0133333, sd = sqrt(0.00086667/2) = 0.0208167, SEM 0.0120185,
  // ± 4.302653 · 0.0120185 = 0.0517114 -> [-0.0650447, 0.0383781] contains 0 -> within noise.
  const PairedInterval noise = paired_interval({-0.02, -0.03, 0.01});
  EXPECT_NEAR(*noise.low, -0.0650447, 1e-6);
  EXPECT_NEAR(*noise.high, 0.0383781, 1e-6);
  EXPECT_EQ(verdict_for_loss_delta(noise), Verdict::kWithinNoise);
  EXPECT_EQ(loss_delta_verdict(noise), "within noise");
}

TEST(Stats, ASingleSeedHasNoInterval) {
  const PairedInterval ci = paired_interval({-0.05});
  EXPECT_EQ(ci.n, 1u);
  EXPECT_DOUBLE_EQ(ci.mean, -0.05);
  EXPECT_FALSE(ci.defined());
  EXPECT_FALSE(ci.sd.has_value());
  EXPECT_EQ(verdict_for_loss_delta(ci), Verdict::kUndefined);
  EXPECT_EQ(loss_delta_verdict(ci), "undefined (n=1)");
}

// The label names the n it was computed from: no differences at all is n=0, not n=1.
TEST(Stats, AnUndefinedVerdictNamesItsN) {
  const PairedInterval none = paired_interval({});
  EXPECT_EQ(none.n, 0u);
  EXPECT_EQ(verdict_for_loss_delta(none), Verdict::kUndefined);
  EXPECT_EQ(loss_delta_verdict(none), "undefined (n=0)");
  // {-0.010, -0.011, -0.012}: mean -0.011, sd 0.001, ± 4.302653 · 0.001/√3 = 0.00248 -> [-0.0135, -0.0085].
  EXPECT_EQ(loss_delta_verdict(paired_interval({-0.010, -0.011, -0.012})), "better");
  EXPECT_EQ(loss_delta_verdict(paired_interval({0.010, 0.011, 0.012})), "worse");
}

TEST(Stats, IdenticalDifferencesGiveAPointInterval) {
  // sd = 0: the interval collapses onto the mean, which is below 0 -> better.
  const PairedInterval ci = paired_interval({-0.01, -0.01});
  EXPECT_DOUBLE_EQ(*ci.low, -0.01);
  EXPECT_DOUBLE_EQ(*ci.high, -0.01);
  EXPECT_EQ(verdict_for_loss_delta(ci), Verdict::kBetter);
}

TEST(Stats, CountsSeedsWithLowerVariantLoss) {
  // A tie (0) does not favour the variant.
  EXPECT_EQ(count_favouring_variant({-0.1, 0.2, 0.0, -0.3}), 2u);
  EXPECT_EQ(count_favouring_variant({}), 0u);
}

}  // namespace
}  // namespace xsa::stats
