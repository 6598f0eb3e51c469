#pragma once
// The files a sweep writes, typed, each with one writer and one reader (docs/ARCHITECTURE.md "Sweep files and
// summaries"): a point's status.json (its last attempt) and the sweep summaries (summary*.json). The runner
// writes them, `xsa-sweep --status` and xsa-inspect's discovery read them. Torch-free.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "xsa/util/choice.h"

namespace xsa {

// Where a point is. The runner uses every value; the files record them by name (point_status_name).
enum class PointStatus {
  kPending,      // not started (yet)
  kRunning,      // its trainer runs (in this or another process)
  kDone,         // results.json written
  kFailed,       // the trainer failed; the message says why
  kInterrupted,  // stopped by SIGTERM after a checkpoint (or its process vanished): a rerun resumes it
  kHeld,         // another live process holds its claim
  kSkipped,      // done before this process looked, or by another process
};
// Every status with the name the files record it by, in the order the summaries count them.
inline constexpr Choice<PointStatus> kPointStatuses[] = {{PointStatus::kPending, "pending"},
                                                         {PointStatus::kRunning, "running"},
                                                         {PointStatus::kDone, "done"},
                                                         {PointStatus::kFailed, "failed"},
                                                         {PointStatus::kInterrupted, "interrupted"},
                                                         {PointStatus::kHeld, "held"},
                                                         {PointStatus::kSkipped, "skipped"}};
inline constexpr const auto& choices_of(PointStatus) {
  return kPointStatuses;
}
inline const char* point_status_name(PointStatus status) {
  return choice_name(status);
}
inline std::optional<PointStatus> parse_point_status(const std::string& name) {
  return parse_choice<PointStatus>(name);
}

// Who ran (or runs) a point: the claim holder.
struct ProcessRecord {
  std::string host;
  long pid = 0;
  std::string job;  // Slurm job (array) id, empty outside Slurm
};

// <point>/status.json, schema "xsa.point-status/1": the point's last attempt, written only by the claim
// holder (so never by two processes at once).
inline constexpr const char* kPointStatusSchema = "xsa.point-status/1";
struct PointRecord {
  std::string run_id;
  PointStatus status = PointStatus::kPending;
  std::optional<int> exit_code;  // absent while running
  std::string message;
  ProcessRecord process;
  int attempt = 1;        // 1 + the attempts before it
  double started_at = 0;  // unix time
  double updated_at = 0;
  double wall_s = 0;
};
nlohmann::json to_json(const PointRecord& record);
// nullopt when the file is absent, not JSON, or lacks a known status (a damaged file is no attempt record).
std::optional<PointRecord> read_point_record(const std::string& path);

// One point of a summary.
struct SummaryPoint {
  std::string run_id;
  std::optional<std::size_t> index;                     // in the unsharded grid order
  nlohmann::json overrides = nlohmann::json::object();  // the sweep's set plus the point's grid values
  // A point listed without a (known) status has not reported anything: read as pending. The runner always
  // writes one; xsa-inspect's note on a missing point then says "(pending)".
  PointStatus status = PointStatus::kPending;
  std::optional<int> exit_code;
  std::string message;
  double wall_s = 0;
};

// summary.json / summary.shard-K-of-N.json (summary[.shard-K-of-N].2.json, .3, ... for a second, third live
// process on one slice),
// schema "xsa.sweep/1": what one sweep process knows of its points, rewritten atomically on every change.
inline constexpr const char* kSweepSummarySchema = "xsa.sweep/1";
struct SweepSummary {
  std::string name;
  std::string sweep_file;
  std::string base;
  nlohmann::json grid = nlohmann::json::object();  // key -> values, as in the sweep file
  nlohmann::json set = nlohmann::json::object();
  int shard_index = 0, shard_count = 1;
  int workers = 1;
  ProcessRecord process;
  std::vector<SummaryPoint> points;
  int count(PointStatus status) const;  // the "counts" the file carries, one per status
};
nlohmann::json to_json(const SweepSummary& summary);
// nullopt when the document is not a summary (not an object, or no "points" list). Points without a
// run id are left out; a point's unknown or missing status reads as pending.
std::optional<SweepSummary> parse_sweep_summary(const nlohmann::json& doc);
std::optional<SweepSummary> read_sweep_summary(const std::string& path);
// True for the file names summaries have: summary*.json.
bool is_summary_file_name(const std::string& file_name);

}  // namespace xsa
