#include "xsa/util/fs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "xsa/util/error.h"
#include "xsa/util/utf8.h"

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

namespace {

// A killed writer leaves its `.NAME.tmp.XXXXXX` behind; the next write of NAME removes it. A live writer
// holds an flock on its temporary file (dropped by the kernel when the process dies), and a file is only
// taken for an orphan when its lock is free and it has not been written to for a minute, so a writer that has
// just created its file and not yet locked it is never touched.
void remove_orphaned_temporaries(const fs::path& dir, const std::string& prefix) {
  constexpr auto kQuiet = std::chrono::minutes(1);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    const auto written = fs::last_write_time(it->path(), ec);
    if (ec || fs::file_time_type::clock::now() - written < kQuiet) continue;
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlink(it->path().c_str());
    ::close(fd);
  }
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = "." + target.filename().string() + ".tmp.";
  remove_orphaned_temporaries(dir, prefix);
  std::string tmp = (dir / (prefix + "XXXXXX")).string();
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw RuntimeFailure(path + ": cannot create temporary file (" + std::strerror(errno) + ")");
  ::flock(fd, LOCK_EX | LOCK_NB);  // held until the descriptor closes: this file has a live writer
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

namespace {

// The absolute path with symbolic links of its existing part resolved and "." / ".." removed.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) p = fs::absolute(path).lexically_normal();
  // "a/b/" and "a/b" are one place: drop the empty last component a trailing slash leaves.
  if (!p.empty() && p.filename().empty()) p = p.parent_path();
  return p;
}

// Whether `inner` is `outer` or lies below it, component by component ("runs/a" is not inside "runs/ab").
bool is_within(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin(), i = inner.begin();
  for (; o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

}  // namespace

void require_text_path(const std::string& path, const std::string& what) {
  const std::string shown = printable(path);
  if (shown != path)
    throw InputError(
        what + " " + shown +
        ": the name is not valid UTF-8 or holds a control character (shown as \\xNN); rename it");
}

void require_output_apart(const NamedPath& out, const std::vector<NamedPath>& inputs) {
  if (out.path.empty()) return;
  const fs::path o = resolved(out.path);
  for (const NamedPath& in : inputs) {
    if (in.path.empty()) continue;
    const fs::path i = resolved(in.path);
    const char* relation = nullptr;
    if (o == i) {
      relation = "is";
    } else if (is_within(i, o)) {
      relation = "contains";
    } else if (is_within(o, i)) {
      relation = "lies inside";
    }
    if (relation != nullptr)
      throw InputError(out.what + " " + out.path + ": " + relation + " " + in.what + " " + in.path +
                       ", which this command reads; an output never replaces an input, choose another " +
                       out.what);
  }
}

}  // namespace xsa
