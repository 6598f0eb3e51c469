#include "xsa/report/select.h"

#include <cmath>
#include <cstdlib>
#include <set>

#include "xsa/records/comparison.h"
#include "xsa/report/sections.h"
#include "xsa/util/error.h"

namespace xsa::report {
namespace {

// "a, b, c" (sorted, as the set holds them), or "none": what an error message says the results have.
std::string names_or_none(const std::set<std::string>& names) {
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
  return joined.empty() ? "none" : joined;
}

}  // namespace

std::vector<ExperimentResult> select_baseline(const std::vector<ExperimentResult>& experiments,
                                              const std::string& variant) {
  std::vector<ExperimentResult> out;
  std::set<std::string> present;
  for (const auto& e : experiments) {
    for (const auto& run : e.runs) present.insert(run.variant);
    const RunResult* baseline = e.find_run(variant);
    if (!baseline) continue;
    ExperimentResult rebased = e;
    rebased.runs = {*baseline};
    rebased.comparisons.clear();
    for (const auto& run : e.runs) {
      if (run.variant == variant) continue;
      rebased.runs.push_back(run);
      // A comparison the file already holds keeps its per-window SE (--baseline naming the first run).
      const Comparison* kept = nullptr;
      for (const auto& c : e.comparisons)
        if (c.baseline == variant && c.variant == run.variant) kept = &c;
      rebased.comparisons.push_back(kept ? *kept : compare_runs(*baseline, run));
    }
    out.push_back(std::move(rebased));
  }
  if (out.empty()) {
    throw InputError("--baseline '" + variant +
                     "': no run of this name in the results (they have: " + names_or_none(present) + ")");
  }
  return out;
}

std::vector<ExperimentResult> select_lambdas(const std::vector<ExperimentResult>& experiments,
                                             const std::string& comma_separated_labels) {
  std::set<std::string> wanted, present;
  for (std::string label : split_commas(comma_separated_labels)) {
    label.erase(0, label.find_first_not_of(' '));
    label.erase(label.find_last_not_of(' ') + 1);
    // A number is compared in the tables' spelling ("1.0" and "0.50" mean 1 and 0.5).
    char* end = nullptr;
    const double number = std::strtod(label.c_str(), &end);
    if (!label.empty() && end == label.c_str() + label.size() && std::isfinite(number))
      label = lambda_label(number);
    wanted.insert(label);
  }
  std::vector<ExperimentResult> out;
  for (const auto& e : experiments) {
    ExperimentResult kept = e;
    kept.comparisons.clear();
    std::set<std::string> kept_runs;
    for (const auto& c : e.comparisons) {
      const RunResult* variant = e.find_run(c.variant);
      if (!variant) continue;
      const std::string label = variant_group_label(e, *variant);
      present.insert(label);
      if (!wanted.count(label)) continue;
      kept.comparisons.push_back(c);
      kept_runs.insert(c.baseline);
      kept_runs.insert(c.variant);
    }
    if (kept.comparisons.empty()) continue;
    // Runs keep their order (runs[0] is the baseline), minus the variants nobody asked for.
    kept.runs.clear();
    for (const auto& run : e.runs)
      if (kept_runs.count(run.variant)) kept.runs.push_back(run);
    out.push_back(std::move(kept));
  }
  for (const auto& label : wanted) {
    if (present.count(label)) continue;
    throw InputError("--lambda '" + label +
                     "': no variant with this λ in the results (they have: " + names_or_none(present) + ")");
  }
  return out;
}

}  // namespace xsa::report
