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

json read_json_or_null(const fs::path& path) {
  std::string text;
  try {
    text = read_file(path.string());
  } catch (const InputError&) {
    return nullptr;
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(nullptr) : j;
}

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

PointStatus point_status(const fs::path& dir, const std::string& run_id) {
  PointStatus p{run_id, "pending", ""};
  const fs::path folder = dir / run_id;
  json last = read_json_or_null(folder / "status.json");
  const bool has_last = last.is_object() && last.contains("status") && last["status"].is_string();
  auto where = [&]() {
    std::string s = last.value("host", std::string("?")) + " pid " + std::to_string(last.value("pid", 0L));
    std::string job = last.value("job", std::string());
    if (!job.empty()) s += ", Slurm job " + job;
    return s;
  };
  if (path_exists((folder / "results.json").string())) {
    p.state = "done";
    if (has_last && last["status"] == "done") {
      p.detail = seconds(last.value("wall_s", 0.0)) + " on " + where() + ", attempt " +
                 std::to_string(last.value("attempt", 1));
    }
    return p;
  }
  ClaimState claim = inspect_claim((folder / "claim.lock").string());
  if (claim.exists && !claim.stale) {
    p.state = "running";
    if (claim.readable)
      p.detail = describe_holder(claim.holder) + " since " + clock_time(claim.holder.since) + ", heartbeat " +
                 seconds(claim.heartbeat_age) + " ago";
    return p;
  }
  if (claim.exists) {
    p.state = "interrupted";
    p.detail = "its holder is gone (" + claim.stale_reason + "); a rerun takes it over";
    if (fs::exists(folder / "checkpoints")) p.detail += " and resumes from its checkpoints";
    return p;
  }
  if (has_last) {
    const std::string s = last["status"];
    if (s == "failed") {
      p.state = "failed";
      p.detail =
          "exit " +
          (last["exit_code"].is_number() ? std::to_string(last["exit_code"].get<int>()) : std::string("?")) +
          " on " + where() + ": " + last.value("message", std::string());
    } else if (s == "interrupted" || s == "running") {
      p.state = "interrupted";
      p.detail = s == "interrupted" ? "stopped by SIGTERM on " + where() + "; a rerun resumes it"
                                    : "its process on " + where() + " ended without an outcome";
      if (fs::exists(folder / "checkpoints")) p.detail += " from its checkpoints";
    }
  }
  return p;
}

}  // namespace

int SweepStatus::count(const std::string& state) const {
  return static_cast<int>(
      std::count_if(points.begin(), points.end(), [&](const PointStatus& p) { return p.state == state; }));
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
    const std::string name = entry.path().filename().string();
    if (name.rfind("summary", 0) != 0 || entry.path().extension() != ".json") continue;
    json s = read_json_or_null(entry.path());
    if (!s.is_object() || !s.contains("points") || !s["points"].is_array()) continue;
    any_summary = true;
    if (status.name.empty() && s.contains("name") && s["name"].is_string()) status.name = s["name"];
    for (const auto& p : s["points"]) {
      if (!p.is_object() || !p.contains("run_id") || !p["run_id"].is_string()) continue;
      std::size_t index =
          p.contains("index") && p["index"].is_number_unsigned() ? p["index"].get<std::size_t>() : SIZE_MAX;
      index_of.emplace(p["run_id"].get<std::string>(), index);
    }
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
  for (const auto& [index, id] : order) status.points.push_back(point_status(dir, id));
  return status;
}

int print_sweep_status(const SweepStatus& status, std::ostream& out) {
  std::size_t width = 8;
  for (const auto& p : status.points) width = std::max(width, p.run_id.size());
  for (const auto& p : status.points) {
    out << p.run_id << std::string(width + 2 - p.run_id.size(), ' ') << p.state
        << std::string(13 - std::min<std::size_t>(12, p.state.size()), ' ') << p.detail << "\n";
  }
  out << (status.name.empty() ? status.dir : status.name) << ": " << status.points.size()
      << " points: " << status.count("done") << " done, " << status.count("running") << " running, "
      << status.count("interrupted") << " interrupted, " << status.count("failed") << " failed, "
      << status.count("pending") << " pending\n";
  if (status.count("failed") > 0) return kExitRuntime;
  if (status.count("done") == static_cast<int>(status.points.size())) return kExitOk;
  return kExitIncomplete;
}

}  // namespace xsa
