// The xsa-inspect command itself, run as a process on the fixtures in tests/fixtures/report: markdown by
// default, CSV with one block per section, JSON with every section, the --lambda and --baseline options end
// to end, exit code 2 with one line on stderr for bad input or options, and --help / --version.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "process.h"
#include "report_fixtures.h"
#include "xsa/report/sections.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace xsa::report {
namespace {

using namespace fixtures;  // tests/unit/common/report_fixtures.h

using xsa::testing::CommandResult;

// xsa-inspect with space-separated arguments (the fixtures' paths have no spaces).
CommandResult run_inspect(const std::string& args) {
  const std::string exe = std::string(XSA_BINARY_DIR) + "/xsa-inspect";
  if (!fs::exists(exe)) ADD_FAILURE() << exe << " is not built (build the xsa-inspect target)";
  std::vector<std::string> argv;
  std::istringstream words(args);
  for (std::string w; words >> w;) argv.push_back(w);
  return xsa::testing::run_command(exe, argv);
}

using xsa::testing::count_lines;

TEST(InspectCli, MarkdownIsTheDefault) {
  const CommandResult r = run_inspect(kSingle + " " + kSweep);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("## Paired runs"), std::string::npos);
  EXPECT_NE(r.out.find("| tiny | 128 | 1337 | xsa | 1 | 2.4500 | 0.0120 | -0.0500 | +2.00 |"),
            std::string::npos);
  EXPECT_NE(r.out.find(
                "| 64 | 32 | 2048 | 100 | sa | 0.5 | 2L d32 4×8 | explicit | 0.001 | 3 | 2 | +0.63 | -1.92 | "
                "+3.19 | -0.0133 | -0.0650 | +0.0384 | "
                "within noise |"),
            std::string::npos);
  EXPECT_NE(
      r.out.find("| 128 | 32 | 4096 | 100 | sa | 1 | 2L d32 4×8 | explicit | 0.001 | 1 | 1 | +2.00 | — | — | "
                 "-0.0500 | — | — | undefined (n=1) |"),
      std::string::npos);
  EXPECT_NE(r.out.find("- λ=1 vs sa, seq_len 64: better"), std::string::npos);
  EXPECT_NE(r.out.find("lambda1-seed4 (failed)"), std::string::npos);
}

TEST(InspectCli, CsvHasOneBlockPerSectionWithASectionColumn) {
  const CommandResult r = run_inspect(kSweep + " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::vector<std::string> headers;
  std::size_t by_lambda_rows = 0;
  std::string xsa_row;
  while (std::getline(in, line)) {
    if (line.rfind("section,", 0) == 0) headers.push_back(line);
    if (line.rfind("by_lambda,", 0) == 0) {
      ++by_lambda_rows;
      if (line.rfind("by_lambda,sa,1,", 0) == 0) xsa_row = line;
    }
  }
  // paired, by_lambda, by_budget, budget_trend, budget_trend_change, by_seq_len, seq_len_trend, size_trend,
  // lr_selection, lr_change, setup_selection, setup_effect, setup_effect_by_lr, eval_curve, loss_by_position,
  // bias_init, bias, bias_depth, bias_budget_change, plateau_escape, dynamics, dynamics_summary,
  // learned_lambda, verdicts, notes
  ASSERT_EQ(headers.size(), 25u);
  EXPECT_EQ(headers[1],
            "section,baseline,lambda,steps,seq_lens,model,attention_impl,lr,n,favouring,mean_improvement_pct,"
            "improvement_ci_low,"
            "improvement_ci_high,mean_delta,delta_ci_low,delta_ci_high,verdict");
  EXPECT_EQ(by_lambda_rows, 2u);
  // Full precision in CSV: mean Δ -0.05, CI low -0.0748414.
  EXPECT_NE(xsa_row.find(",-0.05,-0.07484"), std::string::npos) << xsa_row;
  EXPECT_NE(xsa_row.find(",better"), std::string::npos);
}

TEST(InspectCli, JsonCarriesEverySection) {
  const CommandResult r = run_inspect(kSingle + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["schema"], "xsa.inspect/1");
  EXPECT_EQ(doc["paired"].size(), 3u);
  ASSERT_EQ(doc["by_lambda"].size(), 2u);
  EXPECT_EQ(doc["by_lambda"][0]["lambda"], "1");
  EXPECT_TRUE(doc["by_lambda"][0]["delta_ci_low"].is_null());  // one seed: no CI
  EXPECT_EQ(doc["by_lambda"][0]["verdict"], "undefined (n=1)");
  EXPECT_NEAR(doc["by_lambda"][1]["mean_improvement_pct"].get<double>(), 1.2, 1e-9);
  EXPECT_EQ(doc["bias"].size(), 4u);
  EXPECT_EQ(doc["verdicts"].size(), 2u);
  EXPECT_TRUE(doc["notes"].empty());
}

void expect_one_line_input_error(const std::string& args, const std::string& needle) {
  const CommandResult r = run_inspect(args);
  EXPECT_EQ(r.exit_code, 2) << args;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(InspectCli, LambdaFilterKeepsOnlyThoseVariants) {
  const CommandResult r = run_inspect(kSweep + " --lambda 1 --section by_lambda --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 2) << r.out;  // header + the λ=1 group
  EXPECT_NE(r.out.find("by_lambda,sa,1,"), std::string::npos) << r.out;
  const CommandResult bad = run_inspect(kSweep + " --lambda 0.3");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("--lambda '0.3'"), std::string::npos) << bad.err;
}

TEST(InspectCli, BaselineOptionRebasesTheComparisons) {
  const CommandResult r = run_inspect(kSweep + " --baseline xsa --section by_lambda --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 2) << r.out;  // header + sa against xsa
  EXPECT_NE(r.out.find("by_lambda,xsa,0,"), std::string::npos) << r.out;
  const CommandResult bad = run_inspect(kSweep + " --baseline gate");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("--baseline 'gate'"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

TEST(InspectCli, BadInputExitsTwoWithOneLine) {
  expect_one_line_input_error("/nonexistent/results", "/nonexistent/results: no such file or folder");
  expect_one_line_input_error(kFixtures + "/bad/wrong_schema.json", "key schema: expected \"xsa.results/1\"");
  expect_one_line_input_error(kFixtures + "/bad/missing_key", "missing key runs[1].final.val_loss");
  expect_one_line_input_error(kFixtures + "/bad/not_json.json", "not valid JSON");
  const xsa::testing::TempDir empty;
  expect_one_line_input_error(empty.path(), "no results.json found");
  expect_one_line_input_error(kSingle + " --format xml", "--format");
  expect_one_line_input_error("", "paths");
  expect_one_line_input_error(kSingle + " --no-such-flag", "--no-such-flag");
}

TEST(InspectCli, HelpAndVersion) {
  const CommandResult help = run_inspect("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--format"), std::string::npos);
  for (const auto& section : sections())  // the help lists every section with its help line
    EXPECT_NE(help.out.find(section.key + ": " + section.help), std::string::npos) << section.key;
  const CommandResult version = run_inspect("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find(XSA_VERSION), std::string::npos);
}

}  // namespace
}  // namespace xsa::report
