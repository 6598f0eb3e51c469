#include "xsa/report/run_summary.h"

#include <cstdio>
#include <string>
#include <vector>

#include "xsa/report/columns.h"

namespace xsa::report {

using namespace stats;  // the report is written in the statistics vocabulary (xsa/stats/stats.h)

namespace {

struct SummaryRow {
  const RunResult* run;
  const Comparison* vs_baseline;  // null for the baseline itself
};

// "0.123 0.456": one value per layer of the run's last bias measurement.
template <class Member>
Cell per_layer(const RunResult& run, Member member) {
  if (run.bias.empty()) return Cell();
  std::string out;
  for (const auto& layer : run.bias.back().layers) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", layer.*member);
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  return Cell(out);
}

Columns<SummaryRow> summary_columns(const std::string& baseline) {
  auto vs = [](const SummaryRow& r, auto get) { return r.vs_baseline ? get(*r.vs_baseline) : Cell(); };
  return {
      {{"variant", "variant"}, [](const SummaryRow& r) { return Cell(r.run->variant); }},
      {{"val_loss", "val loss ± SE", 4, false, "val_loss_sem"},
       [](const SummaryRow& r) { return Cell(r.run->final.val_loss); }},
      {{"val_loss_sem", "SE"}, [](const SummaryRow& r) { return opt_cell(r.run->final.val_loss_sem); }},
      {{"delta_val_loss", "Δ vs " + baseline + " (± paired SE)", 4, true, "delta_val_loss_sem"},
       [vs](const SummaryRow& r) {
         return vs(r, [](const Comparison& c) { return Cell(c.delta_val_loss); });
       }},
      {{"delta_val_loss_sem", "paired SE"},
       [vs](const SummaryRow& r) {
         return vs(r, [](const Comparison& c) { return opt_cell(c.delta_val_loss_sem); });
       }},
      {{"improvement_pct", "improvement %", 2, true},
       [vs](const SummaryRow& r) {
         return vs(r, [](const Comparison& c) { return Cell(c.improvement_pct); });
       }},
      {{"cos_y_v", "cos(y,v) per layer"},
       [](const SummaryRow& r) { return per_layer(*r.run, &LayerBias::cos_y_v); }},
      {{"cos_z_v", "cos(z,v) per layer"},
       [](const SummaryRow& r) { return per_layer(*r.run, &LayerBias::cos_z_v); }},
      {{"tokens_per_s", "tok/s", 0},
       [](const SummaryRow& r) { return r.run->timing ? Cell(r.run->timing->tokens_per_s) : Cell(); }},
  };
}

}  // namespace

Table run_summary_table(const ExperimentResult& result) {
  Table t;
  t.key = "run_summary";
  t.title = result.name + ": final validation loss";
  t.empty_text = "no runs";
  std::vector<SummaryRow> rows;
  for (std::size_t i = 0; i < result.runs.size(); ++i) {
    const Comparison* vs_baseline = nullptr;
    for (const auto& c : result.comparisons)
      if (i > 0 && c.variant == result.runs[i].variant) vs_baseline = &c;
    rows.push_back({&result.runs[i], vs_baseline});
  }
  fill_table(t, summary_columns(result.runs.empty() ? std::string() : result.runs[0].variant), rows);
  return t;
}

}  // namespace xsa::report
