#pragma once
// File helpers with errors that name the file. Results are always written atomically.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace xsa {

// Opens `path` read-only and returns the descriptor, if it is a regular file (after symlinks); otherwise
// throws InputError naming the path and what it is ("is a FIFO (named pipe), expected a regular file", a
// folder, a device, a socket; missing; unreadable). Never blocks: the open is O_NONBLOCK, so a FIFO without
// a writer is refused at once instead of hanging. Every input file is opened through here.
int open_regular_file(const std::string& path, const char* what = "file");

// open_regular_file's checks, for inputs checked before any work starts (the descriptor is closed again).
void require_regular_file(const std::string& path, const char* what = "file");

// Reads a regular file (open_regular_file's checks and errors) block by block, handing each block to
// `consume`; a read error is an InputError naming the file. read_file and the file hash go through here.
void read_file_blocks(const std::string& path, const std::function<void(const char*, std::size_t)>& consume);

// Reads a whole regular file (open_regular_file's checks and errors).
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

// A path a command reads, and what it is in the command's words ("the run folder", "--data"), for
// require_output_apart's error.
struct NamedPath {
  std::string path;
  std::string what;
};

// Refuses, with one InputError naming both paths, an output path that is, contains or lies inside one of the
// command's inputs: writing there, or replacing the folder with --force, could destroy what the command reads
// (docs/guide.md "Outputs never destroy inputs"). `--force` never lifts this. Paths are compared after
// resolving symbolic links, "." and "..", so another spelling of the same place is caught too; inputs with an
// empty path are skipped. Called before any work starts.
void require_output_apart(const NamedPath& out, const std::vector<NamedPath>& inputs);

// Refuses, with one InputError showing the name escaped (util/utf8.h printable), a path that is not valid
// UTF-8 or holds a control character (a line break, say): what a command reads is named in its messages and
// in the JSON it writes, which must stay one line and valid UTF-8. `what` names it ("document file",
// "--out").
void require_text_path(const std::string& path, const std::string& what);

}  // namespace xsa
