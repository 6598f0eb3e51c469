// Fuzzes the results.json reader (parse_results on the file text) and what xsa-inspect does with an accepted
// file: every table in every format.
#include "fuzz_common.h"
#include "xsa/records/results.h"
#include "xsa/report/sections.h"
#include "xsa/report/table.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  xsa::ExperimentResult result;
  try {
    result = xsa::parse_results(xsa::fuzz::as_text(data, size), "runs/fuzz/results.json");
  } catch (const xsa::InputError&) {
    return 0;
  }
  const xsa::report::Report report = xsa::report::build_report({result});
  for (auto format : {xsa::report::Format::kMarkdown, xsa::report::Format::kCsv, xsa::report::Format::kJson})
    (void)xsa::report::render(report, format);
  // The writer's output of an accepted result is itself an accepted result.
  try {
    (void)xsa::parse_results(xsa::to_json(result), "runs/fuzz/rewritten.json");
  } catch (const xsa::InputError& e) {
    xsa::fuzz::invariant_failed(std::string("to_json of an accepted result is rejected: ") + e.what());
  }
  return 0;
}
