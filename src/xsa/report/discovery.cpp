#include "xsa/report/discovery.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "xsa/records/sweep_records.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace xsa::report {

namespace {

// Points a sweep summary lists whose results.json is not there (yet): worth a note, never an error, since
// shards of a running sweep land in the same folder at different times.
void note_missing_points(const fs::path& summary_path, const std::set<std::string>& found,
                         std::vector<std::string>& notes) {
  // read_file, not read_sweep_summary: a summary that exists but cannot be read (permissions) is an error
  // naming it, as for any other input; only one that is not a sweep summary is a note.
  const std::optional<SweepSummary> summary =
      parse_sweep_summary(json::parse(read_file(summary_path.string()), nullptr, /*allow_exceptions=*/false));
  if (!summary) {
    notes.push_back(summary_path.string() + ": ignored (not a sweep summary with \"points\")");
    return;
  }
  std::vector<std::string> missing;
  for (const auto& point : summary->points) {
    fs::path expected = fs::weakly_canonical(summary_path.parent_path() / point.run_id / "results.json");
    if (found.count(expected.string())) continue;
    missing.push_back(point.run_id + " (" + point_status_name(point.status) + ")");
  }
  if (missing.empty()) return;
  std::string line =
      summary_path.string() + ": " + std::to_string(missing.size()) + " point(s) without results.json: ";
  for (std::size_t i = 0; i < missing.size(); ++i) line += (i ? ", " : "") + missing[i];
  notes.push_back(line);
}

}  // namespace

Discovery discover_results(const std::vector<std::string>& paths) {
  std::vector<fs::path> result_files;
  std::vector<fs::path> summaries;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw InputError(path + ": no such file or folder");
    if (!fs::is_directory(path, ec)) {
      result_files.emplace_back(path);
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      if (it->path().filename() == "results.json")
        result_files.push_back(it->path());
      else if (is_summary_file_name(it->path().filename().string()))
        summaries.push_back(it->path());
    }
    if (ec) throw InputError(path + ": cannot list folder (" + ec.message() + ")");
  }

  // A file given twice (directly and through its folder) counts once.
  std::set<std::string> seen;
  std::vector<fs::path> unique;
  for (const auto& p : result_files)
    if (seen.insert(fs::weakly_canonical(p).string()).second) unique.push_back(p);
  std::sort(unique.begin(), unique.end());

  Discovery out;
  if (unique.empty()) {
    std::string joined;
    for (std::size_t i = 0; i < paths.size(); ++i) joined += (i ? ", " : "") + paths[i];
    throw InputError(joined + ": no results.json found");
  }
  for (const auto& p : unique) out.experiments.push_back(read_results(p.string()));

  std::sort(summaries.begin(), summaries.end());
  summaries.erase(std::unique(summaries.begin(), summaries.end()), summaries.end());
  for (const auto& s : summaries) note_missing_points(s, seen, out.notes);
  return out;
}

}  // namespace xsa::report
