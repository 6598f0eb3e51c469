// xsa-train's end-of-run table: every column from a hand-made result, in the exact markdown it prints.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "xsa/report/run_summary.h"

namespace xsa::report {
namespace {

ExperimentResult two_runs() {
  ExperimentResult r;
  r.name = "default";
  for (const char* name : {"sa", "xsa"}) {
    RunResult run;
    run.variant = name;
    run.final.val_loss = name == std::string("sa") ? 4.18541 : 4.05149;
    run.final.val_loss_sem = 0.01234;
    BiasPoint first{0, {LayerBias{}}}, last{300, {}};
    for (double c : {0.3, 0.8456}) {
      LayerBias layer;
      layer.cos_y_v = c;
      layer.cos_z_v = name == std::string("sa") ? c : 0.0;
      last.layers.push_back(layer);
    }
    run.bias = {first, last};
    run.timing = RunTiming{};
    run.timing->tokens_per_s = name == std::string("sa") ? 5446.4 : 5943.0;
    r.runs.push_back(run);
  }
  Comparison c;
  c.baseline = "sa";
  c.variant = "xsa";
  c.delta_val_loss = -0.13392;
  c.delta_val_loss_sem = 0.00456;
  c.improvement_pct = 3.19972;
  r.comparisons.push_back(c);
  return r;
}

TEST(RunSummary, EveryColumnInTheMarkdownItPrints) {
  const std::string md = render_markdown({{run_summary_table(two_runs())}});
  EXPECT_EQ(
      md,
      "## default: final validation loss\n\n"
      "| variant | val loss ± SE | Δ vs sa (± paired SE) | improvement % | cos(y,v) per layer | cos(z,v) per "
      "layer | tok/s |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n"
      "| sa | 4.1854 ± 0.0123 | — | — | 0.300 0.846 | 0.300 0.846 | 5446 |\n"
      "| xsa | 4.0515 ± 0.0123 | -0.1339 ± 0.0046 | +3.20 | 0.300 0.846 | 0.000 0.000 | 5943 |\n");
}

TEST(RunSummary, JsonKeepsEveryNumber) {
  const auto js = nlohmann::json::parse(render_json({{run_summary_table(two_runs())}}));
  const auto& rows = js.at("run_summary");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].at("improvement_pct").is_null());  // the baseline's own row
  EXPECT_EQ(rows[1].at("delta_val_loss_sem"), 0.00456);  // full precision, not the markdown's 4 decimals
  EXPECT_EQ(rows[1].at("tokens_per_s"), 5943.0);
  EXPECT_EQ(rows[1].at("cos_z_v"), "0.000 0.000");
}

}  // namespace
}  // namespace xsa::report
