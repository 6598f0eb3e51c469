#pragma once
// `xsa-sweep --status DIR`: the state of every point of a sweep folder, merged across shards and
// processes from what is on disk (results.json, the point's claim and status.json, every summary*.json).
// Torch-free.
#include <ostream>
#include <string>
#include <vector>

#include "xsa/records/sweep_records.h"

namespace xsa {

// One point as --status reports it: done, running, interrupted, failed or pending (a point held or skipped
// by some process is one of these on disk).
struct PointReport {
  std::string run_id;
  PointStatus state = PointStatus::kPending;
  std::string detail;  // who runs it, why it failed, ...
};

struct SweepStatus {
  std::string dir;
  std::string name;  // from the summaries
  std::vector<PointReport> points;
  int count(PointStatus state) const;
};

// InputError if DIR is not a sweep folder (no summary*.json and no point folders).
SweepStatus collect_sweep_status(const std::string& dir);

// One line per point and a count line; returns the exit code: 0 every point done, 1 some point failed,
// 3 none failed but some are running, interrupted or pending.
int print_sweep_status(const SweepStatus& status, std::ostream& out);

constexpr int kExitIncomplete = 3;

}  // namespace xsa
