#include "xsa/util/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "xsa/util/error.h"

namespace fs = std::filesystem;

namespace xsa {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path + ": is a folder, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read file (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read error");
  return ss.str();
}

void write_file_atomic(const std::string& path, const std::string& content) {
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw RuntimeFailure(path + ": cannot create temporary file (" + std::strerror(errno) + ")");
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw RuntimeFailure(path + ": write failed (" + std::strerror(err) + ")");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  // Network file systems report a full disk or quota only at fsync/close: never rename such a file in.
  bool synced = ::fsync(fd) == 0;
  int err = errno;
  bool closed = ::close(fd) == 0;
  if (!closed && synced) err = errno;
  if (!synced || !closed) {
    ::unlink(tmp.c_str());
    throw RuntimeFailure(path + ": write failed (" + std::strerror(err) + ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw RuntimeFailure(path + ": cannot rename into place (" + std::strerror(err) + ")");
  }
  // The rename lives in the folder: without syncing it a crash can bring back the old file (or none).
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd < 0 || ::fsync(dir_fd) != 0) {
    int err = errno;
    if (dir_fd >= 0) ::close(dir_fd);
    throw RuntimeFailure(path + ": cannot sync its folder (" + std::strerror(err) + ")");
  }
  ::close(dir_fd);
}

bool path_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

void make_directories(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec || !fs::is_directory(path)) throw InputError(path + ": cannot create folder (" + ec.message() + ")");
}

std::uint64_t file_size(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  if (ec) throw InputError(path + ": cannot stat file (" + ec.message() + ")");
  return n;
}

}  // namespace xsa
