#pragma once
// The paired comparison of a variant with its baseline, defined once: the trainer writes it into results.json
// and the reader derives it for files without comparisons (docs/ARCHITECTURE.md "Reports"). Torch-free.
#include <vector>

#include "xsa/records/results.h"

namespace xsa {

// A variant against its baseline, the one definition the trainer writes and the reader derives for files
// without comparisons: Δ = variant − baseline (negative = variant better), improvement % = 100 (baseline −
// variant) / baseline, and, given both runs' per-window losses on the same validation windows, the SE of the
// paired per-window difference (0 for one window, as results.json has always held); without them no SE.
// Throws RuntimeFailure when the window lists differ in length.
Comparison compare_runs(const RunResult& baseline, const RunResult& variant,
                        const std::vector<double>* baseline_windows = nullptr,
                        const std::vector<double>* variant_windows = nullptr);

}  // namespace xsa
