#pragma once
// Small-sample statistics for paired experiments (a handful of seeds): Student t intervals computed from
// the regularized incomplete beta function, so any n and confidence level works without tables.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace xsa::stats {

double mean(const std::vector<double>& xs);            // NaN for an empty vector
double sample_sd(const std::vector<double>& xs);       // n-1 denominator; NaN for n < 2
double standard_error(const std::vector<double>& xs);  // sample_sd / sqrt(n); NaN for n < 2
double median(std::vector<double> xs);                 // mean of the middle two for even n; NaN if empty

// I_x(a, b), the regularized incomplete beta function, for a, b > 0 and x in [0, 1].
double regularized_incomplete_beta(double a, double b, double x);
// P(T <= t) for Student's t with `dof` > 0 degrees of freedom.
double student_t_cdf(double t, double dof);
// The t with P(T <= t) = p, for p in (0, 1); found by bisection on the CDF.
double student_t_quantile(double p, double dof);

// Confidence interval of the mean of paired differences: mean ± t_{1-α/2, n-1} · sd / √n.
struct PairedInterval {
  std::size_t n = 0;
  double mean = 0;
  std::optional<double> sd;   // absent for n < 2
  std::optional<double> low;  // absent for n < 2: one pair says nothing about the noise
  std::optional<double> high;
  bool defined() const { return low.has_value(); }
};
PairedInterval paired_interval(const std::vector<double>& differences, double level = 0.95);

// How many differences favour the variant, for "variant − baseline" loss differences (lower is better).
std::size_t count_favouring_variant(const std::vector<double>& loss_deltas);

enum class Verdict { kBetter, kWorse, kWithinNoise, kUndefined };
// For a CI of "variant − baseline" loss: entirely below 0 -> better, above 0 -> worse, containing 0 ->
// within noise; no CI (fewer than two differences) -> undefined.
Verdict verdict_for_loss_delta(const PairedInterval& ci);
// The verdict on `ci` as a table writes it: "better" | "worse" | "within noise" | "undefined (n=K)", K the
// number of differences the interval was computed from (0 or 1).
std::string loss_delta_verdict(const PairedInterval& ci);

// The verdict on the interval of a signed statistic over seeds: `above` when the interval lies above 0,
// `below` when below, else "within noise"; "undefined (n=K)" below two seeds.
std::string sign_verdict(const PairedInterval& ci, const std::string& above, const std::string& below);

// Least-squares slope of ys over xs (equal sizes, at least two distinct xs).
double least_squares_slope(const std::vector<double>& xs, const std::vector<double>& ys);

// One seed's points of a series: log2 x and the seed's improvement % there, in increasing x, for a seed that
// has every x of the series (a seed without every x would bias its slope).
struct SeedSeries {
  std::vector<double> log_xs;
  std::vector<double> ys;
};

// A trend over seeds: per seed, the least-squares slope of its improvement % over log2 x (so the unit is
// "per doubling of x"); then the mean slope with a Student t interval over seeds, like every other
// comparison here.
struct Trend {
  std::vector<double> slopes;  // one per seed
  PairedInterval ci;
  std::size_t falling() const;  // seeds with a negative slope
  // "grows with <what>" / "shrinks with <what>" / "within noise" / "undefined (n=K)"
  std::string verdict(const std::string& what) const;
};
Trend per_seed_trend(const std::vector<SeedSeries>& seeds);

// Does a trend bend? Per seed (three or more xs): the slope between the last two xs minus the slope between
// the first two, each per doubling of x; the mean change with a t interval over seeds.
struct SlopeChange {
  std::vector<double> first, last, change;  // per seed
  PairedInterval ci;                        // of `change`
  std::size_t rising() const;               // seeds whose slope rises (change > 0)
};
SlopeChange per_seed_slope_change(const std::vector<SeedSeries>& seeds);

// Choosing each arm's learning rate. losses[s][i]: one seed's final validation loss at candidate lr i (every
// seed has every lr). The best lr of an arm has the lowest mean over seeds. The in-sample difference, per
// seed variant(its best) − baseline(its best), reuses the seeds that chose the lrs and so is optimistic for
// whichever arm the noise favoured; the held-out one chooses both lrs for seed s on the other seeds alone
// (leave one seed out) and evaluates them on s, so the choice never sees the loss it is judged by.
struct LrSelection {
  std::size_t best_baseline = 0, best_variant = 0;    // indices into the candidate lrs
  std::vector<double> baseline_means, variant_means;  // per lr, over seeds
  PairedInterval in_sample, held_out;                 // of the per-seed variant − baseline differences
};
LrSelection select_learning_rates(const std::vector<std::vector<double>>& baseline,
                                  const std::vector<std::vector<double>>& variant);

}  // namespace xsa::stats
