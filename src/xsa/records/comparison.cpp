#include "xsa/records/comparison.h"

#include "xsa/stats/stats.h"
#include "xsa/util/error.h"

namespace xsa {

Comparison compare_runs(const RunResult& baseline, const RunResult& variant,
                        const std::vector<double>* baseline_windows,
                        const std::vector<double>* variant_windows) {
  const double b = baseline.final.val_loss, v = variant.final.val_loss;
  Comparison c;
  c.baseline = baseline.variant;
  c.variant = variant.variant;
  c.delta_val_loss = v - b;
  c.improvement_pct = 100.0 * (b - v) / b;
  if (baseline_windows != nullptr && variant_windows != nullptr) {
    const auto &wb = *baseline_windows, &wv = *variant_windows;
    if (wv.size() != wb.size()) {
      throw RuntimeFailure("runs '" + baseline.variant + "' and '" + variant.variant +
                           "' were evaluated on different validation windows");
    }
    std::vector<double> diff(wb.size());
    for (std::size_t k = 0; k < wb.size(); ++k) diff[k] = wv[k] - wb[k];
    c.delta_val_loss_sem = diff.size() < 2 ? 0.0 : stats::standard_error(diff);
  }
  return c;
}

}  // namespace xsa
