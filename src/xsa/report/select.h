#pragma once
// Choosing what xsa-inspect reports on: the variants (by λ label); the sections are chosen in
// xsa/report/sections.h (select_sections).
#include <string>
#include <vector>

#include "xsa/report/results.h"

namespace xsa::report {

// Keeps only the comparisons whose variant has one of these λ labels, as the tables print them ("1", "0.5",
// "learned", "gate"), with their baselines; experiments left without a comparison are dropped. InputError
// names a label that no variant in the experiments has.
std::vector<ExperimentResult> select_lambdas(const std::vector<ExperimentResult>& experiments,
                                             const std::string& comma_separated_labels);

}  // namespace xsa::report
