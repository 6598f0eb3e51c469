#include "xsa/sweep/status.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "xsa/sweep/claim.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace xsa {
namespace {

std::string clock_time(double unix_time) {
  std::time_t t = static_cast<std::time_t>(unix_time);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buf;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

PointReport point_report(const fs::path& dir, const std::string& run_id) {
  PointReport p{run_id, PointStatus::kPending, ""};
  const fs::path folder = dir / run_id;
  const std::optional<PointRecord> last = read_point_record((folder / "status.json").string());
  auto where = [&]() {
    std::string s = last->process.host + " pid " + std::to_string(last->process.pid);
    if (!last->process.job.empty()) s += ", Slurm job " + last->process.job;
    return s;
  };
  if (path_exists((folder / "results.json").string())) {
    p.state = PointStatus::kDone;
    if (last && last->status == PointStatus::kDone)
      p.detail = seconds(last->wall_s) + " on " + where() + ", attempt " + std::to_string(last->attempt);
    return p;
  }
  ClaimState claim = inspect_claim((folder / "claim.lock").string());
  if (claim.exists && !claim.stale) {
    p.state = PointStatus::kRunning;
    if (claim.readable)
      p.detail = describe_holder(claim.holder) + " since " + clock_time(claim.holder.since) + ", heartbeat " +
                 seconds(claim.heartbeat_age) + " ago";
    return p;
  }
  if (claim.exists) {
    p.state = PointStatus::kInterrupted;
    p.detail = "its holder is gone (" + claim.stale_reason + "); a rerun takes it over";
    if (fs::exists(folder / "checkpoints")) p.detail += " and resumes from its checkpoints";
    return p;
  }
  if (!last) return p;
  if (last->status == PointStatus::kFailed) {
    p.state = PointStatus::kFailed;
    p.detail = "exit " + (last->exit_code ? std::to_string(*last->exit_code) : std::string("?")) + " on " +
               where() + ": " + last->message;
  } else if (last->status == PointStatus::kInterrupted || last->status == PointStatus::kRunning) {
    p.state = PointStatus::kInterrupted;
    p.detail = last->status == PointStatus::kInterrupted
                   ? "stopped by SIGTERM on " + where() + "; a rerun resumes it"
                   : "its process on " + where() + " ended without an outcome";
    if (fs::exists(folder / "checkpoints")) p.detail += " from its checkpoints";
  }
  return p;
}

}  // namespace

int SweepStatus::count(PointStatus state) const {
  return static_cast<int>(
      std::count_if(points.begin(), points.end(), [&](const PointReport& p) { return p.state == state; }));
}

SweepStatus collect_sweep_status(const std::string& dir) {
  if (!is_directory(dir)) throw InputError(dir + ": no such sweep folder");
  SweepStatus status;
  status.dir = dir;
  // Points in the unsharded order: every summary lists its points with their index.
  std::map<std::string, std::size_t> index_of;
  bool any_summary = false;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!is_summary_file_name(entry.path().filename().string())) continue;
    const std::optional<SweepSummary> summary = read_sweep_summary(entry.path().string());
    if (!summary) continue;
    any_summary = true;
    if (status.name.empty()) status.name = summary->name;
    for (const auto& p : summary->points) index_of.emplace(p.run_id, p.index.value_or(SIZE_MAX));
  }
  if (ec) throw InputError(dir + ": cannot list folder (" + ec.message() + ")");
  // Point folders no summary mentions (a summary lost with its process) still count.
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_directory()) continue;
    const fs::path f = entry.path();
    if (fs::exists(f / "status.json") || fs::exists(f / "claim.lock") || fs::exists(f / "results.json"))
      index_of.emplace(f.filename().string(), SIZE_MAX);
  }
  if (!any_summary && index_of.empty())
    throw InputError(dir + ": not a sweep folder (no summary*.json and no point folders)");
  std::vector<std::pair<std::size_t, std::string>> order;
  for (const auto& [id, index] : index_of) order.emplace_back(index, id);
  std::sort(order.begin(), order.end());
  for (const auto& [index, id] : order) status.points.push_back(point_report(dir, id));
  return status;
}

int print_sweep_status(const SweepStatus& status, std::ostream& out) {
  std::size_t width = 8;
  for (const auto& p : status.points) width = std::max(width, p.run_id.size());
  for (const auto& p : status.points) {
    const std::string state = point_status_name(p.state);
    out << p.run_id << std::string(width + 2 - p.run_id.size(), ' ') << state
        << std::string(13 - std::min<std::size_t>(12, state.size()), ' ') << p.detail << "\n";
  }
  const int done = status.count(PointStatus::kDone), failed = status.count(PointStatus::kFailed);
  out << (status.name.empty() ? status.dir : status.name) << ": " << status.points.size()
      << " points: " << done << " done, " << status.count(PointStatus::kRunning) << " running, "
      << status.count(PointStatus::kInterrupted) << " interrupted, " << failed << " failed, "
      << status.count(PointStatus::kPending) << " pending\n";
  if (failed > 0) return kExitRuntime;
  if (done == static_cast<int>(status.points.size())) return kExitOk;
  return kExitIncomplete;
}

}  // namespace xsa
