#include "xsa/tokenizer/documents.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>
#include <utility>

#include "xsa/tokenizer/stories.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/sha256.h"
#include "xsa/util/utf8.h"

namespace fs = std::filesystem;

namespace xsa {
namespace {

using FileId = std::pair<dev_t, ino_t>;

// stat() that follows symbolic links, with the errors a user can act on.
struct stat stat_input(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) return info;
  const int err = errno;
  struct stat link {};
  if (err == ELOOP) throw InputError(path + ": symbolic link loop");
  if (err == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
    throw InputError(path + ": broken symbolic link");
  if (err == ENOENT) throw InputError(path + ": document path not found");
  throw InputError(path + ": cannot read (" + std::strerror(err) + ")");
}

class FileCollector {
 public:
  void add(const std::string& path) {
    require_text_path(path, "document path");
    const struct stat info = stat_input(path);
    if (S_ISDIR(info.st_mode)) {
      std::vector<std::string> found;
      std::vector<std::pair<FileId, std::string>> ancestors;
      walk(path, "", info, ancestors, found);
      // Byte-wise order of the path below the folder, so the order is the same on every machine and locale.
      std::sort(found.begin(), found.end());
      for (const auto& relative : found) add_file(path + "/" + relative);
      return;
    }
    add_file(path);
  }

  std::vector<std::string> files;

 private:
  void add_file(const std::string& path) {
    const struct stat info = stat_input(path);
    if (!S_ISREG(info.st_mode)) require_regular_file(path, "document file");  // throws, naming the kind
    const FileId id{info.st_dev, info.st_ino};
    const auto [it, inserted] = seen_.emplace(id, path);
    if (!inserted) throw InputError(path + ": the same file as " + it->second + " (listed twice)");
    files.push_back(path);
  }

  // Depth first; `ancestors` are the folders from the root down to `relative`, to catch a folder that
  // contains itself through a symbolic link (`ln -s .. loop`), which would otherwise never end.
  void walk(const std::string& root, const std::string& relative, const struct stat& info,
            std::vector<std::pair<FileId, std::string>>& ancestors, std::vector<std::string>& found) {
    const std::string here = relative.empty() ? root : root + "/" + relative;
    const FileId id{info.st_dev, info.st_ino};
    for (const auto& [ancestor, name] : ancestors) {
      if (ancestor == id) throw InputError(here + ": folder loop (the same folder as " + name + ")");
    }
    ancestors.emplace_back(id, here);
    std::vector<std::string> names;
    std::error_code error;
    for (fs::directory_iterator it(here, error), end; !error && it != end; it.increment(error))
      names.push_back(it->path().filename().string());
    if (error) throw InputError(here + ": cannot list folder (" + error.message() + ")");
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      const std::string child_relative = relative.empty() ? name : relative + "/" + name;
      const std::string child = root + "/" + child_relative;
      require_text_path(child, "document path");
      const struct stat child_info = stat_input(child);
      if (S_ISDIR(child_info.st_mode)) {
        walk(root, child_relative, child_info, ancestors, found);
      } else {
        found.push_back(child_relative);
      }
    }
    ancestors.pop_back();
  }

  std::map<FileId, std::string> seen_;
};

std::string folder_of(const std::string& path) {
  const auto parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::vector<std::string> read_list_file(const std::string& list) {
  const std::string text = read_file(list);
  if (find_invalid_utf8(text) != std::string_view::npos)
    throw InputError(list + ": document list is not valid UTF-8 at byte offset " +
                     std::to_string(find_invalid_utf8(text)));
  std::vector<std::string> paths;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!trim_ascii_whitespace(line).empty()) {
      paths.push_back(fs::path(line).is_absolute() ? line : folder_of(list) + "/" + line);
    }
    begin = end + 1;
  }
  if (paths.empty()) throw InputError(list + ": document list names no files");
  return paths;
}

std::string format_fraction(double value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

}  // namespace

std::vector<std::string> collect_document_files(const DocumentSources& sources) {
  FileCollector collector;
  for (const auto& path : sources.paths) collector.add(path);
  for (const auto& list : sources.list_files) {
    if (!path_exists(list)) throw InputError(list + ": document list not found");
    for (const auto& path : read_list_file(list)) collector.add(path);
  }
  if (collector.files.empty()) throw InputError("no document files found in the given paths (empty corpus)");
  return std::move(collector.files);
}

DocumentFile read_document_file(const std::string& path, const std::string& separator,
                                std::uint64_t max_document_bytes) {
  DocumentFile file;
  file.path = path;
  const auto too_long = [&](std::uint64_t bytes, const std::string& which) {
    return InputError(path + ": " + which + " has " + std::to_string(bytes) +
                      " bytes, over --max-document-bytes " + std::to_string(max_document_bytes));
  };
  // Without a separator the file is the document: refused before a huge file is read into memory.
  if (separator.empty() && file_size(path) > max_document_bytes) throw too_long(file_size(path), "document");
  auto content = std::make_shared<std::string>(read_file(path));
  if (const void* nul = std::memchr(content->data(), '\0', content->size())) {
    throw InputError(path + ": binary file (NUL byte at byte offset " +
                     std::to_string(static_cast<const char*>(nul) - content->data()) +
                     "), expected UTF-8 text");
  }
  if (const std::size_t bad = find_invalid_utf8(*content); bad != std::string_view::npos)
    throw InputError(path + ": not valid UTF-8 at byte offset " + std::to_string(bad));
  file.bytes = content->size();
  file.sha256 = sha256_hex(*content);
  std::vector<std::string_view> pieces;
  if (separator.empty()) {
    pieces.push_back(*content);
  } else {
    pieces = split_on_marker_lines(*content, separator);
  }
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const std::string_view document = trim_ascii_whitespace(pieces[i]);
    if (document.empty()) {
      ++file.skipped_empty;
      continue;
    }
    if (document.size() > max_document_bytes) {
      throw too_long(document.size(), "document " + std::to_string(i + 1) + " (counting from 1)");
    }
    file.documents.push_back(document);
  }
  file.storage = std::move(content);
  return file;
}

void require_val_fraction(double val_fraction) {
  if (!(val_fraction > 0.0 && val_fraction < 1.0))  // written so that NaN fails too
    throw InputError("--val-fraction " + format_fraction(val_fraction) + ": expected a number in (0, 1)");
}

std::vector<bool> choose_validation_documents(const std::vector<std::string_view>& documents,
                                              double val_fraction, std::uint64_t seed) {
  require_val_fraction(val_fraction);
  const std::size_t n = documents.size();
  const auto n_val = static_cast<std::size_t>(std::llround(val_fraction * static_cast<double>(n)));
  if (n_val == 0) {
    throw InputError("empty validation split: --val-fraction " + format_fraction(val_fraction) + " of " +
                     std::to_string(n) + " documents rounds to 0 (give more documents or a larger fraction)");
  }
  if (n_val >= n) {
    throw InputError("empty train split: --val-fraction " + format_fraction(val_fraction) + " of " +
                     std::to_string(n) + " documents leaves none to train on");
  }
  const std::string prefix = std::string(kSplitKeyPrefix) + std::to_string(seed) + ":";
  std::vector<std::pair<std::string, std::size_t>> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = {sha256_hex(prefix + std::string(documents[i])), i};
  std::sort(keys.begin(), keys.end());
  // Copies of the last chosen document (the same key) go with it: identical texts never straddle the split.
  std::size_t chosen = n_val;
  while (chosen < n && keys[chosen].first == keys[n_val - 1].first) ++chosen;
  if (chosen >= n) {
    throw InputError("empty train split: --val-fraction " + format_fraction(val_fraction) + " of " +
                     std::to_string(n) +
                     " documents, with the copies of the last one chosen, leaves none to "
                     "train on");
  }
  std::vector<bool> is_val(n, false);
  for (std::size_t k = 0; k < chosen; ++k) is_val[keys[k].second] = true;
  return is_val;
}

std::string validation_split_rule() {
  return "whole documents: the round(val_fraction * documents) documents (halves rounded up) with the "
         "smallest "
         "sha256(\"" +
         std::string(kSplitKeyPrefix) +
         "<seed>:\" + document text), and every copy of the last of them, are the validation split; both "
         "splits keep the corpus order";
}

nlohmann::ordered_json document_length_stats(std::vector<std::uint64_t> lengths) {
  nlohmann::ordered_json stats;
  std::sort(lengths.begin(), lengths.end());
  const std::size_t n = lengths.size();
  const std::uint64_t total = std::accumulate(lengths.begin(), lengths.end(), std::uint64_t{0});
  stats["count"] = n;
  stats["tokens"] = total;
  if (n == 0) return stats;
  // numpy.percentile's default ("linear"): the value at rank (n - 1) * p / 100, interpolated.
  auto percentile = [&](double p) {
    const double rank = static_cast<double>(n - 1) * p / 100.0;
    const auto below = static_cast<std::size_t>(std::floor(rank));
    const std::size_t above = std::min(below + 1, n - 1);
    const double weight = rank - static_cast<double>(below);
    return static_cast<double>(lengths[below]) +
           weight * (static_cast<double>(lengths[above]) - static_cast<double>(lengths[below]));
  };
  stats["mean"] = static_cast<double>(total) / static_cast<double>(n);
  stats["min"] = lengths.front();
  stats["p10"] = percentile(10);
  stats["p25"] = percentile(25);
  stats["median"] = percentile(50);
  stats["p75"] = percentile(75);
  stats["p90"] = percentile(90);
  stats["p99"] = percentile(99);
  stats["max"] = lengths.back();
  nlohmann::ordered_json shares;
  for (const std::uint64_t threshold : kLengthThresholds) {
    std::uint64_t longer = 0;
    for (const std::uint64_t length : lengths) longer += length > threshold ? length : 0;
    shares[std::to_string(threshold)] =
        total == 0 ? 0.0 : static_cast<double>(longer) / static_cast<double>(total);
  }
  stats["share_of_tokens_in_documents_longer_than"] = std::move(shares);
  return stats;
}

}  // namespace xsa
