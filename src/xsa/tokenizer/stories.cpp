#include "xsa/tokenizer/stories.h"

#include <nlohmann/json.hpp>

#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/sha256.h"

namespace xsa {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Parses a llama2.c shard and copies its stories (trimmed, non-empty) into one contiguous buffer.
void read_json_stories(const std::string& path, const std::string& content, StoryFile& file) {
  nlohmann::json shard;
  try {
    shard = nlohmann::json::parse(content);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
  if (!shard.is_array()) {
    throw InputError(path + ": expected a JSON array of objects with a \"story\" field, found " +
                     std::string(shard.type_name()));
  }
  auto storage = std::make_shared<std::string>();
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // offset, length into storage
  for (std::size_t i = 0; i < shard.size(); ++i) {
    const auto& element = shard[i];
    if (!element.is_object() || !element.contains("story") || !element["story"].is_string()) {
      throw InputError(path + ": element " + std::to_string(i) +
                       " is not an object with a string field \"story\"");
    }
    std::string_view story = trim_ascii_whitespace(element["story"].get_ref<const std::string&>());
    if (story.empty()) continue;
    spans.emplace_back(storage->size(), story.size());
    storage->append(story);
  }
  // Views are taken only after the buffer stopped growing.
  for (auto [offset, length] : spans) file.stories.emplace_back(storage->data() + offset, length);
  file.storage = std::move(storage);
}

}  // namespace

std::string_view trim_ascii_whitespace(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && is_ascii_space(text[begin])) ++begin;
  while (end > begin && is_ascii_space(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

std::vector<std::string_view> split_on_marker_lines(std::string_view text, std::string_view marker) {
  std::vector<std::string_view> pieces;
  std::size_t piece_begin = 0;
  std::size_t line_begin = 0;
  while (line_begin < text.size()) {
    std::size_t line_end = text.find('\n', line_begin);
    if (line_end == std::string_view::npos) line_end = text.size();
    if (trim_ascii_whitespace(text.substr(line_begin, line_end - line_begin)) == marker) {
      pieces.push_back(text.substr(piece_begin, line_begin - piece_begin));
      piece_begin = line_end + 1;
    }
    line_begin = line_end + 1;
  }
  if (piece_begin < text.size()) pieces.push_back(text.substr(piece_begin));
  return pieces;
}

std::vector<std::string_view> split_text_stories(std::string_view text) {
  std::vector<std::string_view> stories;
  for (const std::string_view piece : split_on_marker_lines(text, kStorySeparator)) {
    const std::string_view story = trim_ascii_whitespace(piece);
    if (!story.empty()) stories.push_back(story);
  }
  return stories;
}

StoryFile read_story_file(const std::string& path, const std::string& split) {
  const bool is_text = ends_with(path, ".txt");
  const bool is_json = ends_with(path, ".json");
  if (!path_exists(path)) throw InputError(path + ": input file not found");
  if (!is_text && !is_json) {
    throw InputError(path + ": unknown input format, expected a .txt file (stories separated by " +
                     std::string(kStorySeparator) + " lines) or a .json shard");
  }
  auto content = std::make_shared<std::string>(read_file(path));
  if (content->empty()) throw InputError(path + ": input file is empty");
  std::size_t bad = find_invalid_utf8(*content);
  if (bad != std::string_view::npos) {
    throw InputError(path + ": not valid UTF-8 at byte offset " + std::to_string(bad));
  }

  StoryFile file;
  file.path = path;
  file.split = split;
  file.bytes = content->size();
  file.sha256 = sha256_hex(*content);
  if (is_text) {
    file.stories = split_text_stories(*content);
    file.storage = std::move(content);
  } else {
    read_json_stories(path, *content, file);
  }
  if (file.stories.empty()) throw InputError(path + ": contains no stories");
  return file;
}

}  // namespace xsa
