#pragma once
// The table xsa-train prints when a run ends (README "What the main job prints"): per variant the final
// validation loss ± SE, Δ against the baseline ± its paired SE, improvement %, the last bias measurement's
// cos(y,v) and cos(z,v) per layer, and training tok/s. Built through the report's column descriptors
// (xsa/report/columns.h) and rendered like every other table, so a column is one edit here.
#include "xsa/records/results.h"
#include "xsa/report/table.h"

namespace xsa::report {

Table run_summary_table(const ExperimentResult& result);

}  // namespace xsa::report
