#pragma once
// Folder discovery: the results.json files (and sweep summaries, for notes) under the paths xsa-inspect and
// the plots are given. Torch-free.
#include <string>
#include <vector>

#include "xsa/records/results.h"

namespace xsa::report {

// Everything found under the given paths. A file is read as results.json whatever its name; a folder is
// searched recursively for files named results.json, so a sweep folder (shards included) merges naturally.
// Sweep summaries (summary*.json) found in folders are only used for notes about points without results.
struct Discovery {
  std::vector<ExperimentResult> experiments;  // sorted by source path, duplicates removed
  std::vector<std::string> notes;             // human-readable remarks (e.g. unfinished sweep points)
};

// Throws InputError for a path that does not exist, an invalid results file, or when nothing is found.
Discovery discover_results(const std::vector<std::string>& paths);

}  // namespace xsa::report
