// xsa-inspect PATH... [--format markdown|csv|json]: tables and statistics from results.json files or sweep
// folders (searched recursively, so the shards of one sweep merge). The work lives in xsa/report.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "xsa/records/results.h"
#include "xsa/report/discovery.h"
#include "xsa/report/sections.h"
#include "xsa/report/select.h"
#include "xsa/report/table.h"
#include "xsa/util/cli_main.h"
#include "xsa/util/error.h"

namespace {

struct InspectOptions {
  std::vector<std::string> paths;
  std::string format = "markdown";
  std::string sections;  // comma-separated table keys; empty = all
  std::string lambdas;   // comma-separated λ labels of the variants to keep; empty = all
  std::string baseline;  // the run every other run is compared with; empty = each experiment's first
};

void setup_inspect_cli(CLI::App& app, InspectOptions& opt) {
  std::string description =
      "Tables from xsa results: paired runs, comparisons grouped by λ, training budget and sequence length "
      "with a 95% Student t CI of the paired difference over seeds, trends of the gain per doubling of steps "
      "or "
      "of T (CI over seeds), bias metrics per layer, and a verdict per group (better / worse / within noise; "
      "grows / shrinks / within noise for a trend; undefined below two seeds).\n"
      "CSV: one block per section separated by blank lines; each block has a header row starting with "
      "\"section\" and each row repeats the section key.\nSections, in report order:";
  for (const auto& s : xsa::report::sections()) description += "\n  " + s.key + ": " + s.help;
  app.description(description);
  app.add_option("paths", opt.paths, "results.json files or folders (searched recursively for results.json)")
      ->required();
  app.add_option("--format", opt.format, "output format")
      ->check(CLI::IsMember({"markdown", "md", "csv", "json"}))
      ->capture_default_str();
  app.add_option("--section", opt.sections,
                 "only these sections, comma-separated, in this order (" + xsa::report::section_keys() + ")");
  app.add_option(
      "--lambda", opt.lambdas,
      "only the variants with these λ, comma-separated as the tables print them (e.g. 1,0.5,learned); "
      "their baselines stay");
  app.add_option("--baseline", opt.baseline,
                 "compare every run with this one (a run name as results.json has it: sa, xsa, lambda=0.5, "
                 "xsa@2-3, tanh_gate) instead of each experiment's first run; experiments without it are "
                 "left out; applied before --lambda");
  app.set_version_flag("--version", std::string("xsa-inspect ") + XSA_VERSION + " (no LibTorch linked)");
}

int run_inspect(const InspectOptions& opt) {
  const xsa::report::Format format = xsa::report::parse_format(opt.format);
  const xsa::report::Discovery found = xsa::report::discover_results(opt.paths);
  std::vector<xsa::ExperimentResult> experiments = found.experiments;
  if (!opt.baseline.empty()) experiments = xsa::report::select_baseline(experiments, opt.baseline);
  if (!opt.lambdas.empty()) experiments = xsa::report::select_lambdas(experiments, opt.lambdas);
  xsa::report::Report report = xsa::report::build_report(experiments, found.notes);
  if (!opt.sections.empty()) report = xsa::report::select_sections(report, opt.sections);
  std::cout << xsa::report::render(report, format);
  return xsa::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return xsa::cli_main<InspectOptions>(argc, argv, "xsa-inspect", setup_inspect_cli, run_inspect);
}
