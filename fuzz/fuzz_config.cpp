// Fuzzes the experiment config reader: YAML text plus --set overrides (parse_config). Lines of the input that
// start with "#--set " are also passed as overrides (YAML sees them as comments), so seeds stay plain files.
// Accepted configs must survive what xsa-train does with them: written as JSON and YAML, read back equal.
#include <sstream>
#include <vector>

#include "fuzz_common.h"
#include "xsa/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = xsa::fuzz::as_text(data, size);
  std::vector<std::string> overrides;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("#--set ", 0) == 0) overrides.push_back(line.substr(7));

  xsa::Config config;
  try {
    config = xsa::parse_config(text, "fuzz.yaml", overrides);
  } catch (const xsa::InputError&) {
    return 0;
  }
  const std::string json_text = xsa::config_to_json(config).dump();  // results.json stores it
  const std::string yaml = xsa::config_to_yaml(config);              // runs/<name>/config.yaml
  xsa::Config again;
  try {
    again = xsa::parse_config(yaml, "config.yaml");
  } catch (const xsa::InputError& e) {
    xsa::fuzz::invariant_failed(std::string("the resolved config does not read back: ") + e.what());
  }
  if (again != config) xsa::fuzz::invariant_failed("the resolved config reads back different:\n" + yaml);
  return 0;
}
