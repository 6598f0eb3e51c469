#pragma once
// Choosing what xsa-inspect reports on: the baseline the variants are compared with, and the variants (by λ
// label); the sections are chosen in xsa/report/sections.h (select_sections).
#include <string>
#include <vector>

#include "xsa/records/results.h"

namespace xsa::report {

// Compares every run of each experiment with the run named `variant` (as results.json names runs: "xsa",
// "lambda=0.5", "xsa@2-3", "tanh_gate") instead of its first run: that run becomes runs[0]. A comparison the
// file holds keeps its per-window SE; the others are computed with compare_runs from the final losses
// (results.json keeps no per-window losses, so they have no SE). Runs share an experiment's init and batches,
// so any two of them are a paired measurement, and variants that share an SA baseline can be compared with
// each other (XSA on half the layers against XSA on every layer). Experiments without that run are dropped;
// InputError when none has it.
std::vector<ExperimentResult> select_baseline(const std::vector<ExperimentResult>& experiments,
                                              const std::string& variant);

// Keeps only the comparisons whose variant has one of these λ labels, as the tables print them ("1", "0.5",
// "learned", "gate"), with their baselines; experiments left without a comparison are dropped. InputError
// names a label that no variant in the experiments has.
std::vector<ExperimentResult> select_lambdas(const std::vector<ExperimentResult>& experiments,
                                             const std::string& comma_separated_labels);

}  // namespace xsa::report
