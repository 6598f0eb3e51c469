#pragma once
// Helpers shared by the end-to-end tests that run the real executables and read what they wrote.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "process.h"

namespace xsa::e2e {

using xsa::testing::slurp;  // tests/support/process.h

// The numbers of a results.json (what determinism promises: bit-identical on a rerun or a resume), without
// the environment, the runtime settings and the timings, which may differ.
inline nlohmann::json deterministic_numbers(nlohmann::json r) {
  r.erase("environment");
  r["config"].erase("runtime");
  for (auto& run : r["runs"]) run.erase("timing");
  return r;
}

}  // namespace xsa::e2e
