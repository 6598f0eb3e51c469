#include "xsa/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace xsa::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double mean(const std::vector<double>& xs) {
  if (xs.empty()) return kNaN;
  double sum = 0;
  for (double x : xs) sum += x;
  return sum / static_cast<double>(xs.size());
}

double sample_sd(const std::vector<double>& xs) {
  if (xs.size() < 2) return kNaN;
  // Two-pass: subtracting the mean first avoids the cancellation of the sum-of-squares formula, which
  // matters here because loss deltas are small numbers on top of similar losses.
  const double m = mean(xs);
  double ss = 0;
  for (double x : xs) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(xs.size() - 1));
}

double median(std::vector<double> xs) {
  if (xs.empty()) return kNaN;
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

double standard_error(const std::vector<double>& xs) {
  if (xs.size() < 2) return kNaN;
  return sample_sd(xs) / std::sqrt(static_cast<double>(xs.size()));
}

namespace {

// Continued fraction for I_x(a, b) by the modified Lentz method (Numerical Recipes §6.4); converges fast
// for x < (a + 1) / (a + b + 2), the caller uses the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) otherwise.
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 500;
  constexpr double kEps = 1e-15;
  constexpr double kTiny = 1e-300;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < kEps) break;
  }
  return h;
}

}  // namespace

double regularized_incomplete_beta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1))
    throw std::invalid_argument("regularized_incomplete_beta: need a, b > 0 and x in [0, 1]");
  if (x == 0 || x == 1) return x;
  // Prefactor x^a (1-x)^b / (a B(a,b)), in logs to stay finite for large a, b.
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * beta_continued_fraction(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double dof) {
  if (!(dof > 0)) throw std::invalid_argument("student_t_cdf: degrees of freedom must be > 0");
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  // P(|T| > |t|) = I_{ν/(ν+t²)}(ν/2, 1/2); each tail holds half of it.
  const double tail = 0.5 * regularized_incomplete_beta(dof / 2, 0.5, dof / (dof + t * t));
  return t >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double dof) {
  if (!(p > 0) || !(p < 1)) throw std::invalid_argument("student_t_quantile: p must be in (0, 1)");
  if (!(dof > 0)) throw std::invalid_argument("student_t_quantile: degrees of freedom must be > 0");
  if (p < 0.5) return -student_t_quantile(1 - p, dof);
  // Bracket [0, hi] by doubling (ν = 1 and p close to 1 need large t), then bisect: the CDF is monotone, so
  // bisection always converges and 200 halvings exhaust double precision.
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, dof) < p) {
    lo = hi;
    hi *= 2;
    if (hi > 1e300) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, dof) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

PairedInterval paired_interval(const std::vector<double>& differences, double level) {
  if (!(level > 0) || !(level < 1)) throw std::invalid_argument("paired_interval: level must be in (0, 1)");
  PairedInterval ci;
  ci.n = differences.size();
  ci.mean = mean(differences);
  if (ci.n < 2) return ci;
  ci.sd = sample_sd(differences);
  const double t = student_t_quantile(1 - (1 - level) / 2, static_cast<double>(ci.n - 1));
  const double half = t * *ci.sd / std::sqrt(static_cast<double>(ci.n));
  ci.low = ci.mean - half;
  ci.high = ci.mean + half;
  return ci;
}

std::size_t count_favouring_variant(const std::vector<double>& loss_deltas) {
  std::size_t count = 0;
  for (double d : loss_deltas)
    if (d < 0) ++count;
  return count;
}

Verdict verdict_for_loss_delta(const PairedInterval& ci) {
  if (!ci.defined()) return Verdict::kUndefined;
  if (*ci.high < 0) return Verdict::kBetter;
  if (*ci.low > 0) return Verdict::kWorse;
  return Verdict::kWithinNoise;
}

std::string loss_delta_verdict(const PairedInterval& ci) {
  switch (verdict_for_loss_delta(ci)) {
    case Verdict::kBetter:
      return "better";
    case Verdict::kWorse:
      return "worse";
    case Verdict::kWithinNoise:
      return "within noise";
    case Verdict::kUndefined:
      return "undefined (n=" + std::to_string(ci.n) + ")";
  }
  return "undefined (n=" + std::to_string(ci.n) + ")";  // not reached: every kind is handled above
}

std::string sign_verdict(const PairedInterval& ci, const std::string& above, const std::string& below) {
  if (!ci.defined()) return "undefined (n=" + std::to_string(ci.n) + ")";
  return *ci.low > 0 ? above : *ci.high < 0 ? below : "within noise";
}

double least_squares_slope(const std::vector<double>& xs, const std::vector<double>& ys) {
  const double mx = mean(xs), my = mean(ys);
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) * (xs[i] - mx);
  }
  return sxy / sxx;
}

std::size_t Trend::falling() const {
  return std::count_if(slopes.begin(), slopes.end(), [](double s) { return s < 0; });
}

std::string Trend::verdict(const std::string& what) const {
  return sign_verdict(ci, "grows with " + what, "shrinks with " + what);
}

Trend per_seed_trend(const std::vector<SeedSeries>& seeds) {
  Trend trend;
  for (const auto& s : seeds) trend.slopes.push_back(least_squares_slope(s.log_xs, s.ys));
  trend.ci = paired_interval(trend.slopes);
  return trend;
}

std::size_t SlopeChange::rising() const {
  return std::count_if(change.begin(), change.end(), [](double c) { return c > 0; });
}

SlopeChange per_seed_slope_change(const std::vector<SeedSeries>& seeds) {
  SlopeChange out;
  for (const auto& s : seeds) {
    const std::size_t k = s.ys.size() - 1;
    out.first.push_back((s.ys[1] - s.ys[0]) / (s.log_xs[1] - s.log_xs[0]));
    out.last.push_back((s.ys[k] - s.ys[k - 1]) / (s.log_xs[k] - s.log_xs[k - 1]));
    out.change.push_back(out.last.back() - out.first.back());
  }
  out.ci = paired_interval(out.change);
  return out;
}

namespace {

// Index of the lowest mean over the seeds in `seeds` (a subset of the rows of losses[s][i]); ties: lower i.
std::size_t best_mean_index(const std::vector<std::vector<double>>& losses,
                            const std::vector<std::size_t>& seeds, std::vector<double>* means_out = nullptr) {
  const std::size_t n_lr = losses.empty() ? 0 : losses[0].size();
  std::vector<double> means(n_lr, 0.0);
  for (std::size_t i = 0; i < n_lr; ++i) {
    for (std::size_t s : seeds) means[i] += losses[s][i];
    means[i] /= static_cast<double>(std::max<std::size_t>(1, seeds.size()));
  }
  if (means_out) *means_out = means;
  return static_cast<std::size_t>(std::min_element(means.begin(), means.end()) - means.begin());
}

}  // namespace

LrSelection select_learning_rates(const std::vector<std::vector<double>>& baseline,
                                  const std::vector<std::vector<double>>& variant) {
  LrSelection out;
  const std::size_t n_seeds = baseline.size();
  if (n_seeds == 0 || variant.size() != n_seeds) return out;
  std::vector<std::size_t> all(n_seeds);
  for (std::size_t s = 0; s < n_seeds; ++s) all[s] = s;
  out.best_baseline = best_mean_index(baseline, all, &out.baseline_means);
  out.best_variant = best_mean_index(variant, all, &out.variant_means);
  std::vector<double> in_sample, held_out;
  for (std::size_t s = 0; s < n_seeds; ++s) {
    in_sample.push_back(variant[s][out.best_variant] - baseline[s][out.best_baseline]);
    if (n_seeds < 2) continue;
    std::vector<std::size_t> others;
    for (std::size_t o = 0; o < n_seeds; ++o)
      if (o != s) others.push_back(o);
    held_out.push_back(variant[s][best_mean_index(variant, others)] -
                       baseline[s][best_mean_index(baseline, others)]);
  }
  out.in_sample = paired_interval(in_sample);
  out.held_out = paired_interval(held_out);
  return out;
}

}  // namespace xsa::stats
