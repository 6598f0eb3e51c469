#pragma once
// A folder built beside its destination and moved into place in one rename, so a reader sees the old folder
// or the complete new one, never a half-written one (xsa-prepare's data, xsa-export's exports).
#include <filesystem>
#include <string>

namespace xsa {

// The output is built in a hidden sibling folder `.NAME.tmp-XXXXXX` and renamed into place by commit(). If
// commit() is never reached (an error), the destructor removes the temporary folder and any parent folders
// it created. A writer that was killed cannot run its destructor: its temporary folder is removed by the next
// StagingFolder for the same destination. The writer holds an flock on its temporary folder for as long as it
// lives, and the kernel drops it when the process dies, so a sibling whose lock can be taken is an orphan and
// one still being written (a concurrent writer) is left alone.
class StagingFolder {
 public:
  // Checks `out_dir` (exists without `force`: InputError; exists and is not a folder: InputError), creates
  // the missing parents and the temporary folder. Errors name `out_dir`.
  StagingFolder(const std::string& out_dir, bool force);
  ~StagingFolder();
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;

  // A path inside the temporary folder.
  std::string file(const std::string& name) const { return temp_ + "/" + name; }
  const std::string& path() const { return temp_; }

  // Moves the temporary folder to `out_dir` (with `force`, an existing folder is swapped out and deleted).
  void commit();

 private:
  void remove_created_parents();

  std::string out_;
  bool force_;
  std::string temp_;
  int lock_fd_ = -1;
  std::filesystem::path created_parent_;
  bool committed_ = false;
};

// StagingFolder's checks of `out_dir` alone (exists without `force`: InputError; exists and is not a folder:
// InputError), for a command that checks its output before any work and builds the folder later.
void require_replaceable_folder(const std::string& out_dir, bool force);

// Removes the orphaned temporary folders of killed writers beside `out_dir` (`.NAME.tmp-*` whose flock can
// be taken, and their `.old` leftovers); returns how many. StagingFolder calls it; exposed for the tests.
int remove_orphaned_staging(const std::string& out_dir);

}  // namespace xsa
