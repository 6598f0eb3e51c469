#include "xsa/util/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "xsa/util/error.h"

namespace fs = std::filesystem;

namespace xsa {

namespace {

const char* not_regular_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "is a folder";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

}  // namespace

int open_regular_file(const std::string& path, const char* what) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
      throw InputError(path + ": " + not_regular_kind(info.st_mode) + ", expected a regular " + what);
    }
    throw InputError(path + ": cannot read " + what + " (" + std::strerror(err) + ")");
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    int err = errno;
    ::close(fd);
    throw InputError(path + ": cannot stat " + what + " (" + std::strerror(err) + ")");
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw InputError(path + ": " + not_regular_kind(info.st_mode) + ", expected a regular " + what);
  }
  // Back to blocking reads (a regular file ignores the flag, but say what we mean).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

void require_regular_file(const std::string& path, const char* what) {
  ::close(open_regular_file(path, what));
}

void read_file_blocks(const std::string& path, const std::function<void(const char*, std::size_t)>& consume) {
  int fd = open_regular_file(path);
  std::vector<char> block(1 << 16);
  while (true) {
    ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw InputError(path + ": read error (" + std::strerror(err) + ")");
    }
    if (n == 0) break;
    consume(block.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
}

std::string read_file(const std::string& path) {
  std::string content;
  read_file_blocks(path, [&](const char* data, std::size_t size) { content.append(data, size); });
  return content;
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
