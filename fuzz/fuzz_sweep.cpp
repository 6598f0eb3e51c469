// Fuzzes the sweep file reader (parse_sweep) and the grid expansion that follows it in xsa-sweep, plus the
// --shard parser on the input's first line. Accepted sweeps must give run ids that are safe folder names and
// values that summary.json can store.
#include <algorithm>
#include <set>

#include "fuzz_common.h"
#include "xsa/sweep/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = xsa::fuzz::as_text(data, size);
  try {
    (void)xsa::parse_shard(text.substr(0, text.find('\n')));
  } catch (const xsa::InputError&) {
  }

  std::vector<xsa::SweepPoint> points;
  try {
    const xsa::SweepSpec spec = xsa::parse_sweep(text, "sweeps/fuzz.yaml");
    // Large legal grids (up to kMaxSweepPoints) take seconds under ASan and reach no new code: skip them so
    // the fuzzer stays fast and the CI step cannot time out on them. Larger ones must still be refused.
    std::size_t total = 1;
    for (const auto& [key, values] : spec.grid)
      total = std::min(total * values.size(), xsa::kMaxSweepPoints + 1);
    if (total > 1000 && total <= xsa::kMaxSweepPoints) return 0;
    points = xsa::expand_grid(spec);
  } catch (const xsa::InputError&) {
    return 0;
  }
  if (points.empty()) xsa::fuzz::invariant_failed("an accepted sweep has no points");
  std::set<std::string> ids;
  for (const auto& p : points) {
    const std::string& id = p.run_id;
    if (id.empty() || id[0] == '.' || id.find('/') != std::string::npos || id.find('\0') != std::string::npos)
      xsa::fuzz::invariant_failed("run id is not a safe folder name: '" + id + "'");
    if (!ids.insert(id).second) xsa::fuzz::invariant_failed("two points share the run id '" + id + "'");
    (void)p.values.dump();  // summary.json
  }
  return 0;
}
