#include "xsa/records/sweep_records.h"

#include <algorithm>

#include "xsa/util/error.h"
#include "xsa/util/fs.h"

using nlohmann::json;

namespace xsa {

namespace {

json optional_int(const std::optional<int>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<int> read_optional_int(const json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

template <class T>
T value_or(const json& doc, const char* key, T fallback) {
  auto it = doc.find(key);
  if (it == doc.end()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;  // a mistyped field reads as absent: these files are status, not data
  }
}

std::optional<json> read_json_file(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const InputError&) {
    return std::nullopt;
  }
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}

}  // namespace

json to_json(const PointRecord& r) {
  return {{"schema", kPointStatusSchema},
          {"run_id", r.run_id},
          {"status", point_status_name(r.status)},
          {"exit_code", optional_int(r.exit_code)},
          {"message", r.message},
          {"host", r.process.host},
          {"pid", r.process.pid},
          {"job", r.process.job},
          {"attempt", r.attempt},
          {"started_at", r.started_at},
          {"updated_at", r.updated_at},
          {"wall_s", r.wall_s}};
}

std::optional<PointRecord> read_point_record(const std::string& path) {
  const auto doc = read_json_file(path);
  if (!doc || !doc->is_object()) return std::nullopt;
  const auto status = parse_point_status(value_or<std::string>(*doc, "status", ""));
  if (!status) return std::nullopt;
  PointRecord r;
  r.run_id = value_or<std::string>(*doc, "run_id", "");
  r.status = *status;
  r.exit_code = read_optional_int(*doc, "exit_code");
  r.message = value_or<std::string>(*doc, "message", "");
  r.process = {value_or<std::string>(*doc, "host", "?"), value_or<long>(*doc, "pid", 0),
               value_or<std::string>(*doc, "job", "")};
  r.attempt = value_or<int>(*doc, "attempt", 1);
  r.started_at = value_or<double>(*doc, "started_at", 0.0);
  r.updated_at = value_or<double>(*doc, "updated_at", 0.0);
  r.wall_s = value_or<double>(*doc, "wall_s", 0.0);
  return r;
}

int SweepSummary::count(PointStatus status) const {
  return static_cast<int>(
      std::count_if(points.begin(), points.end(), [&](const SummaryPoint& p) { return p.status == status; }));
}

json to_json(const SweepSummary& s) {
  json points = json::array();
  for (const auto& p : s.points)
    points.push_back({{"run_id", p.run_id},
                      {"index", p.index ? json(*p.index) : json(nullptr)},
                      {"overrides", p.overrides},
                      {"status", point_status_name(p.status)},
                      {"exit_code", optional_int(p.exit_code)},
                      {"message", p.message},
                      {"wall_s", p.wall_s}});
  json counts = json::object();
  for (const auto& status : kPointStatuses) counts[status.name] = s.count(status.value);
  return {{"schema", kSweepSummarySchema},
          {"name", s.name},
          {"sweep_file", s.sweep_file},
          {"base", s.base},
          {"grid", s.grid},
          {"set", s.set},
          {"shard", {{"index", s.shard_index}, {"count", s.shard_count}}},
          {"workers", s.workers},
          {"process", {{"host", s.process.host}, {"pid", s.process.pid}, {"job", s.process.job}}},
          {"counts", counts},
          {"points", points}};
}

std::optional<SweepSummary> parse_sweep_summary(const json& doc) {
  if (!doc.is_object() || !doc.contains("points") || !doc["points"].is_array()) return std::nullopt;
  SweepSummary s;
  s.name = value_or<std::string>(doc, "name", "");
  s.sweep_file = value_or<std::string>(doc, "sweep_file", "");
  s.base = value_or<std::string>(doc, "base", "");
  s.grid = value_or<json>(doc, "grid", json::object());
  s.set = value_or<json>(doc, "set", json::object());
  const json shard = value_or<json>(doc, "shard", json::object());
  if (shard.is_object()) {
    s.shard_index = value_or<int>(shard, "index", 0);
    s.shard_count = value_or<int>(shard, "count", 1);
  }
  s.workers = value_or<int>(doc, "workers", 1);
  const json process = value_or<json>(doc, "process", json::object());
  if (process.is_object())
    s.process = {value_or<std::string>(process, "host", ""), value_or<long>(process, "pid", 0),
                 value_or<std::string>(process, "job", "")};
  for (const auto& p : doc["points"]) {
    if (!p.is_object() || !p.contains("run_id") || !p["run_id"].is_string()) continue;
    SummaryPoint point;
    point.run_id = p["run_id"].get<std::string>();
    if (p.contains("index") && p["index"].is_number_unsigned()) point.index = p["index"].get<std::size_t>();
    point.overrides = value_or<json>(p, "overrides", json::object());
    point.status = parse_point_status(value_or<std::string>(p, "status", "")).value_or(PointStatus::kPending);
    point.exit_code = read_optional_int(p, "exit_code");
    point.message = value_or<std::string>(p, "message", "");
    point.wall_s = value_or<double>(p, "wall_s", 0.0);
    s.points.push_back(std::move(point));
  }
  return s;
}

std::optional<SweepSummary> read_sweep_summary(const std::string& path) {
  const auto doc = read_json_file(path);
  if (!doc) return std::nullopt;
  return parse_sweep_summary(*doc);
}

bool is_summary_file_name(const std::string& name) {
  return name.rfind("summary", 0) == 0 && name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
}

}  // namespace xsa
