#pragma once
// Reading TinyStories inputs into stories. Needs no sentencepiece; lives here because only xsa-prepare uses
// it.
//
// Two formats, chosen by the file extension:
//   .txt   stories separated by a line "<|endoftext|>" (the official TinyStories text files)
//   .json  llama2.c shards: an array of objects, each with a string field "story"
// A story's surrounding whitespace (e.g. the blank line after a separator in TinyStories-train.txt) is
// dropped, as llama2.c does; everything inside a story is kept byte for byte. Empty stories are skipped.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xsa/util/utf8.h"  // find_invalid_utf8: stories must be UTF-8

namespace xsa {

inline constexpr std::string_view kStorySeparator = "<|endoftext|>";

struct StoryFile {
  std::string path;   // as given on the command line
  std::string split;  // "train" or "val"
  std::uint64_t bytes = 0;
  std::string sha256;  // of the file's bytes
  // The stories; views into `storage` (a shared_ptr so the views survive moves of this struct).
  std::vector<std::string_view> stories;
  std::shared_ptr<const std::string> storage;
};

// Removes leading/trailing ASCII whitespace (space, \t, \n, \r, \v, \f).
std::string_view trim_ascii_whitespace(std::string_view text);

// Splits text at marker lines: a line whose content, trimmed, is exactly `marker` ends one piece; text after
// the last marker line is a piece too. The pieces are returned as they are (untrimmed, empty ones included).
std::vector<std::string_view> split_on_marker_lines(std::string_view text, std::string_view marker);

// Splits text in the .txt format into stories: the pieces between "<|endoftext|>" lines, trimmed, empty ones
// skipped.
std::vector<std::string_view> split_text_stories(std::string_view text);

// Reads one input file (format by extension), validating it. Throws InputError with one line naming the file:
// missing/unreadable, empty, not UTF-8 (with byte offset), a .json that is not an array of {"story": string},
// an unknown extension, or no stories at all.
StoryFile read_story_file(const std::string& path, const std::string& split);

}  // namespace xsa
