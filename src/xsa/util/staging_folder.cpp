#include "xsa/util/staging_folder.h"

#include <fcntl.h>   // AT_FDCWD, open
#include <stdio.h>   // renameat2
#include <stdlib.h>  // mkdtemp
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "xsa/util/error.h"

namespace fs = std::filesystem;

namespace xsa {

namespace {

std::string trimmed(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

fs::path parent_of(const fs::path& p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// Takes an exclusive flock on the folder without waiting; returns its descriptor, or -1 when another process
// holds it (or the folder cannot be opened).
int try_lock_folder(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int remove_orphaned_staging(const std::string& out_dir) {
  const fs::path out(trimmed(out_dir));
  const std::string prefix = "." + out.filename().string() + ".tmp-";
  std::error_code ec;
  int removed = 0;
  for (fs::directory_iterator it(parent_of(out), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !it->is_directory(ec) || it->is_symlink(ec)) continue;
    const int fd = try_lock_folder(it->path().string());
    if (fd < 0) continue;  // a live writer holds it
    std::error_code rm;
    fs::remove_all(it->path(), rm);
    ::close(fd);
    if (!rm) ++removed;
  }
  return removed;
}

void require_replaceable_folder(const std::string& out_dir, bool force) {
  const std::string out = trimmed(out_dir);
  if (out.empty()) throw InputError("--out: expected a folder path");
  std::error_code ec;
  const auto status = fs::symlink_status(out, ec);
  if (fs::exists(status)) {
    if (!force) throw InputError(out + ": output folder already exists (use --force to replace it)");
    if (!fs::is_directory(status)) throw InputError(out + ": exists and is not a folder; not replacing it");
  }
}

StagingFolder::StagingFolder(const std::string& out_dir, bool force) : out_(trimmed(out_dir)), force_(force) {
  require_replaceable_folder(out_, force_);
  std::error_code ec;
  const fs::path out_path(out_);
  const fs::path parent = parent_of(out_path);
  // Remember the top-most parent we create, to remove it again on failure.
  for (fs::path p = parent; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created_parent_ = p;
    if (!p.has_parent_path() || p.parent_path() == p) break;
  }
  if (!created_parent_.empty()) {
    fs::create_directories(parent, ec);
    if (ec || !fs::is_directory(parent)) {
      remove_created_parents();
      throw InputError(out_ + ": cannot create output folder (" +
                       (ec ? ec.message() : std::string("parent is not a folder")) + ")");
    }
  } else if (!fs::is_directory(parent, ec)) {
    throw InputError(out_ + ": cannot create output folder (" + parent.string() + " is not a folder)");
  }
  remove_orphaned_staging(out_);
  std::string pattern = (parent / ("." + out_path.filename().string() + ".tmp-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    const int err = errno;
    remove_created_parents();
    throw InputError(out_ + ": cannot create output folder (" + std::strerror(err) + ")");
  }
  temp_ = pattern;
  lock_fd_ = try_lock_folder(temp_);  // held until this object ends (or the process dies)
  ::chmod(temp_.c_str(), 0755);       // mkdtemp makes it private (0700)
}

StagingFolder::~StagingFolder() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(temp_, ec);
    remove_created_parents();
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void StagingFolder::commit() {
  // RENAME_NOREPLACE: a folder that appeared meanwhile is never overwritten without --force.
  if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, out_.c_str(), RENAME_NOREPLACE) == 0) {
    committed_ = true;
    return;
  }
  int err = errno;
  if (err == EEXIST && !force_)
    throw InputError(out_ + ": output folder already exists (use --force to replace it)");
  if (err == EEXIST) {
    // --force: swap the new folder with the old one in one step, then delete the old one.
    if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, out_.c_str(), RENAME_EXCHANGE) == 0) {
      committed_ = true;
      std::error_code ec;
      fs::remove_all(temp_, ec);  // now holds the old contents
      return;
    }
    err = errno;
    if (err == EINVAL || err == ENOSYS) {  // file system without RENAME_EXCHANGE: two renames
      const std::string old = temp_ + ".old";
      if (::rename(out_.c_str(), old.c_str()) == 0) {
        if (::rename(temp_.c_str(), out_.c_str()) == 0) {
          committed_ = true;
          std::error_code ec;
          fs::remove_all(old, ec);
          return;
        }
        err = errno;
        ::rename(old.c_str(), out_.c_str());  // put the old folder back
      } else {
        err = errno;
      }
    }
  } else if (err == EINVAL || err == ENOSYS) {  // no renameat2 flags: plain rename after a check
    if (!fs::exists(out_) && ::rename(temp_.c_str(), out_.c_str()) == 0) {
      committed_ = true;
      return;
    }
    err = errno;
  }
  throw RuntimeFailure(out_ + ": cannot move the output folder into place (" + std::strerror(err) + ")");
}

void StagingFolder::remove_created_parents() {
  if (created_parent_.empty()) return;
  std::error_code ec;
  fs::remove_all(created_parent_, ec);  // we created it, and it holds nothing but our own folders
}

}  // namespace xsa
