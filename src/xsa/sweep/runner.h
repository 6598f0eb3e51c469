#pragma once
// Runs sweep points as xsa-train child processes: a worker pool, resume by results.json, a live status
// line and summary.json rewritten atomically on every change. Several processes (local runs, Slurm array
// tasks, a second submission) may run into one folder: each point is claimed first (claim.h), points done
// or held elsewhere are skipped and said so, and points held elsewhere are waited for at the end (taken
// over if their holder stops or dies). SIGTERM is forwarded to the trainers, which checkpoint and stop;
// the points are recorded as interrupted. Torch-free.
#include <ostream>
#include <string>
#include <vector>

#include "xsa/sweep/sweep.h"

namespace xsa {

struct SweepRunOptions {
  std::string out_dir;  // sweeps/<name>
  std::string trainer;  // xsa-train executable
  int workers = 1;      // concurrent child runs
  Shard shard;          // only these points are run; names the summary file
  bool tty = false;     // rewrite one status line with '\r' instead of a line per event
};

// "summary.json", or "summary.shard-K-of-N.json" when sharded, so shards never write the same file.
std::string summary_file_name(const Shard& shard);
// A second, third, ... live process on one slice writes summary[.shard-K-of-N].2.json, .3, ... up to this
// many names in all; with every one held live, summary[.shard-K-of-N].<host>-<pid>.json.
inline constexpr int kSummarySlots = 16;

// Runs `points` (already sharded and validated). Points whose <out>/<run-id>/results.json exists are
// skipped untouched. Returns kExitOk if every point is done, kExitInterrupted (75) if stopped by SIGTERM
// (running points checkpointed), else kExitRuntime if any failed.
int run_sweep(const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepRunOptions& options,
              std::ostream& status);

}  // namespace xsa
