#pragma once
// File helpers with errors that name the file. Results are always written atomically.
#include <cstdint>
#include <string>

namespace xsa {

// Reads a whole file; throws InputError("<path>: cannot read ...") if missing or unreadable.
std::string read_file(const std::string& path);

// Writes `content` to `path` via a temporary file in the same folder + fsync + rename + fsync of the
// folder, so readers see either the old file or the complete new one, never a half-written one, and the
// new one survives a crash once this returns. Results and checkpoints both go through here.
void write_file_atomic(const std::string& path, const std::string& content);

bool path_exists(const std::string& path);
bool is_directory(const std::string& path);
// Creates the folder and its parents; throws InputError naming the folder if it cannot.
void make_directories(const std::string& path);
std::uint64_t file_size(const std::string& path);

}  // namespace xsa
