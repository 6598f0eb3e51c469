// xsa-inspect PATH... [--format markdown|csv|json]: tables and statistics from results.json files or sweep
// folders (searched recursively, so the shards of one sweep merge). The work lives in xsa/report.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "xsa/report/results.h"
#include "xsa/report/tables.h"
#include "xsa/util/cli_main.h"
#include "xsa/util/error.h"

namespace {

struct InspectOptions {
  std::vector<std::string> paths;
  std::string format = "markdown";
  std::string sections;  // comma-separated table keys; empty = all
  std::string lambdas;   // comma-separated λ labels of the variants to keep; empty = all
};

void setup_inspect_cli(CLI::App& app, InspectOptions& opt) {
  app.description(
      "Tables from xsa results: paired runs (final val loss ± SEM, Δ vs baseline, improvement %), "
      "comparisons grouped by λ, training budget and sequence length with a 95% Student t CI of the paired "
      "difference over seeds, the trend of the gain with the budget and with sequence length (slope per "
      "doubling of steps or of T, CI over seeds) and its change between the first and last budgets, bias "
      "metrics per layer and their paired change between neighbouring budgets, and a verdict per group "
      "(better / worse / within noise; grows / shrinks with the budget or T / within noise for a trend; "
      "undefined below two seeds).\n"
      "CSV: one block per section separated by blank lines; each block has a header row starting with "
      "\"section\" and each row repeats the section key (paired, by_lambda, by_budget, budget_trend, "
      "budget_trend_change, by_seq_len, seq_len_trend, eval_curve, bias_init, bias, bias_budget_change, "
      "learned_lambda, verdicts, notes).");
  app.add_option("paths", opt.paths, "results.json files or folders (searched recursively for results.json)")
      ->required();
  app.add_option("--format", opt.format, "output format")
      ->check(CLI::IsMember({"markdown", "md", "csv", "json"}))
      ->capture_default_str();
  app.add_option("--section", opt.sections,
                 "only these sections, comma-separated, in this order (paired, by_lambda, by_budget, "
                 "budget_trend, budget_trend_change, by_seq_len, seq_len_trend, eval_curve, bias_init, "
                 "bias, bias_budget_change, learned_lambda, verdicts, notes)");
  app.add_option(
      "--lambda", opt.lambdas,
      "only the variants with these λ, comma-separated as the tables print them (e.g. 1,0.5,learned); "
      "their baselines stay");
  app.set_version_flag("--version", std::string("xsa-inspect ") + XSA_VERSION + " (no LibTorch linked)");
}

int run_inspect(const InspectOptions& opt) {
  const xsa::report::Format format = xsa::report::parse_format(opt.format);
  const xsa::report::Discovery found = xsa::report::discover_results(opt.paths);
  xsa::report::Report report =
      opt.lambdas.empty() ? xsa::report::build_report(found.experiments, found.notes)
                          : xsa::report::build_report(
                                xsa::report::select_lambdas(found.experiments, opt.lambdas), found.notes);
  if (!opt.sections.empty()) report = xsa::report::select_sections(report, opt.sections);
  std::cout << xsa::report::render(report, format);
  return xsa::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xsa-inspect"};
  InspectOptions opt;
  setup_inspect_cli(app, opt);
  return xsa::parse_and_run(app, argc, argv, "xsa-inspect", [&] { return run_inspect(opt); });
}
