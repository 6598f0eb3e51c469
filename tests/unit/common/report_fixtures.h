#pragma once
// What the report tests share: the paths of the results fixtures in tests/fixtures/report (regenerate with
// make_fixtures.py there), the report built on them, the paired results they build in memory (one SA vs
// variant experiment at a given length, budget or seed) and the message of an InputError. A test file brings
// them in, with the typed table cells they assert on, by `using namespace fixtures;` inside namespace
// xsa::report.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "table_cells.h"
#include "xsa/records/results.h"
#include "xsa/report/discovery.h"
#include "xsa/report/sections.h"
#include "xsa/util/error.h"

namespace xsa::report::fixtures {

using xsa::testing::empty;  // a report table's cells, typed (tests/support/table_cells.h)
using xsa::testing::integer;
using xsa::testing::num;
using xsa::testing::text;

inline const std::string kFixtures = std::string(XSA_FIXTURES_DIR) + "/report";
inline const std::string kSingle = kFixtures + "/single";
inline const std::string kSweep = kFixtures + "/sweep";

// The message of the InputError `fn` throws, or "<no InputError>".
inline std::string input_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no InputError>";
}

// The report on both fixtures: the single paired run and the sweep, with the sweep's discovery notes.
inline Report fixture_report() {
  Discovery d = discover_results({kSingle, kSweep});
  return build_report(d.experiments, d.notes);
}

// A paired SA vs XSA result with a given improvement (the comparison is taken as written).
// Without `config_seed` only the runs name the seed.
inline ExperimentResult length_point(std::int64_t seq_len, std::int64_t batch, std::uint64_t seed,
                                     double improvement, bool config_seed = true) {
  using nlohmann::json;
  auto run = [&](const char* variant, double lambda) {
    return json{{"variant", variant},
                {"variant_spec", {{"kind", "fixed"}, {"lambda", lambda}}},
                {"lambda", lambda},
                {"seed", seed},
                {"final", {{"val_loss", 2.0}}}};
  };
  json doc = {{"schema", "xsa.results/1"},
              {"name", "trend"},
              {"config",
               {{"seed", seed},
                {"data", {{"seq_len", seq_len}}},
                {"train", {{"steps", 300}, {"batch_size", batch}}}}},
              {"runs", {run("sa", 0.0), run("xsa", 1.0)}},
              {"comparisons",
               {{{"baseline", "sa"},
                 {"variant", "xsa"},
                 {"delta_val_loss", -improvement / 50},
                 {"improvement_pct", improvement}}}}};
  if (!config_seed) doc["config"].erase("seed");
  return parse_results(doc, "mem.json");
}

// One paired experiment of seed `seed`: sa and one variant, `steps` steps of 4 x 16 tokens on a 1,280-token
// train split, with the given eval curves (step 0, steps/2, steps), final train losses and bias points.
inline ExperimentResult budget_experiment(std::int64_t seed, std::int64_t steps, const std::string& variant,
                                          std::vector<double> base_eval, std::vector<double> var_eval,
                                          double base_train, double var_train) {
  ExperimentResult e;
  e.label = "steps" + std::to_string(steps) + "-seed" + std::to_string(seed);
  e.name = "budget";
  e.data = DataInfo{};
  e.data->train_tokens = 1280;
  e.config.data.seq_len = 16;
  e.config.train.steps = static_cast<int>(steps);
  e.config.train.batch_size = 4;
  e.config.seed = static_cast<std::uint64_t>(seed);
  const std::vector<std::int64_t> at = {0, steps / 2, steps};
  RunResult base, var;
  base.variant = "sa";
  base.spec = variant_record_from_name("sa");
  var.variant = variant;
  var.spec = variant_record_from_name(variant);
  if (variant == "learned") var.spec = {"learned", std::nullopt, std::nullopt};
  for (std::size_t i = 0; i < at.size(); ++i) {
    base.eval.push_back({at[i], base_eval[i]});
    var.eval.push_back({at[i], var_eval[i]});
  }
  base.final.val_loss = base_eval.back();
  base.final.train_loss = base_train;
  var.final.val_loss = var_eval.back();
  var.final.train_loss = var_train;
  e.runs = {base, var};
  e.comparisons.push_back({"sa", variant, var.final.val_loss - base.final.val_loss,
                           100.0 * (base.final.val_loss - var.final.val_loss) / base.final.val_loss});
  return e;
}

}  // namespace xsa::report::fixtures
