#include "xsa/sweep/claim.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "xsa/util/error.h"
#include "xsa/util/text.h"
#include "xsa/util/timing.h"

namespace fs = std::filesystem;

namespace xsa {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::string boot_id() {
  return trim_trailing_whitespace(slurp("/proc/sys/kernel/random/boot_id"));
}

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); 0 if unknown. The command name
// (field 2) may hold spaces and parentheses, so counting starts after its last ')'.
long long process_start_time(long pid) {
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && (rest >> field); ++i)
    if (i == 22) return std::atoll(field.c_str());
  return 0;
}

std::string slurm_job() {
  const char* array_job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (array_job && task) return std::string(array_job) + "_" + task;
  const char* job = std::getenv("SLURM_JOB_ID");
  return job ? job : "";
}

nlohmann::json to_json(const ClaimHolder& h) {
  return {{"token", h.token},
          {"host", h.host},
          {"boot_id", h.boot_id},
          {"pid", h.pid},
          {"process_start", h.process_start},
          {"since", h.since},
          {"job", h.job}};
}

bool from_json(const std::string& text, ClaimHolder* h) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return false;
  try {
    h->token = j.at("token").get<std::string>();
    h->host = j.at("host").get<std::string>();
    h->boot_id = j.at("boot_id").get<std::string>();
    h->pid = j.at("pid").get<long>();
    h->process_start = j.at("process_start").get<long long>();
    h->since = j.at("since").get<double>();
    h->job = j.value("job", "");
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  return !h->token.empty();
}

// Writes `content` to a new file and fsyncs it (the lock must be complete before it appears).
bool write_new_file(const std::string& path, const std::string& content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  if (!ok) ::unlink(path.c_str());
  return ok;
}

double file_age(const struct stat& st) {
  return unix_seconds() -
         (static_cast<double>(st.st_mtim.tv_sec) + 1e-9 * static_cast<double>(st.st_mtim.tv_nsec));
}

// One process at a time removes a stale claim: it re-checks under an O_EXCL break file that the claim it
// judged stale is still the same one, so a claim taken fresh in between is never removed.
bool break_stale(const std::string& path, const ClaimState& judged, std::string* note) {
  const std::string break_path = path + ".break";
  int fd = ::open(break_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    struct stat st {};
    // A breaker that died between its two steps leaves the break file: remove it once it is old.
    if (errno == EEXIST && ::stat(break_path.c_str(), &st) == 0 && file_age(st) > kStaleSeconds)
      ::unlink(break_path.c_str());
    return false;
  }
  ::close(fd);
  ClaimState now = inspect_claim(path);
  bool removed = false;
  if (!now.exists) {
    removed = true;
  } else if (now.stale && now.readable == judged.readable &&
             (!now.readable || now.holder.token == judged.holder.token)) {
    removed = ::unlink(path.c_str()) == 0 || errno == ENOENT;
    if (removed && note)
      *note = "took over a stale claim (" +
              (now.readable ? describe_holder(now.holder) + ": " : std::string()) + now.stale_reason + ")";
  }
  ::unlink(break_path.c_str());
  return removed;
}

std::string random_hex() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

}  // namespace

ClaimHolder this_process_holder() {
  ClaimHolder h;
  h.host = host_name();
  h.boot_id = boot_id();
  h.pid = static_cast<long>(::getpid());
  h.process_start = process_start_time(h.pid);
  h.since = unix_seconds();
  h.job = slurm_job();
  h.token = h.host + "-" + std::to_string(h.pid) + "-" + random_hex();
  return h;
}

std::string describe_holder(const ClaimHolder& h) {
  std::string s = h.host + " pid " + std::to_string(h.pid);
  if (!h.job.empty()) s += " (Slurm job " + h.job + ")";
  return s;
}

ClaimState inspect_claim(const std::string& path) {
  ClaimState state;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return state;
  state.exists = true;
  state.heartbeat_age = file_age(st);
  state.readable = from_json(slurp(path), &state.holder);
  char age[32];
  std::snprintf(age, sizeof age, "%.0f", state.heartbeat_age);
  if (!state.readable) {
    state.stale = state.heartbeat_age > kStaleSeconds;
    state.stale_reason = std::string("unreadable claim file, untouched for ") + age + " s";
    return state;
  }
  const ClaimHolder& h = state.holder;
  if (h.host == host_name()) {
    if (h.boot_id != boot_id()) {
      state.stale = true;
      state.stale_reason = "host " + h.host + " rebooted since";
    } else if (::kill(static_cast<pid_t>(h.pid), 0) != 0 && errno == ESRCH) {
      state.stale = true;
      state.stale_reason = "pid " + std::to_string(h.pid) + " on " + h.host + " is gone";
    } else if (process_start_time(h.pid) != h.process_start) {
      state.stale = true;
      state.stale_reason = "pid " + std::to_string(h.pid) + " on " + h.host + " is another process now";
    }
    // A live holder on this host is trusted even if its heartbeat is late (stopped, swapping): a second
    // trainer in the same folder would be worse than waiting.
    return state;
  }
  if (state.heartbeat_age > kStaleSeconds) {
    state.stale = true;
    state.stale_reason = std::string("no heartbeat from ") + h.host + " for " + age + " s";
  }
  return state;
}

std::unique_ptr<Claim> Claim::try_acquire(const std::string& path, ClaimState* held_by, std::string* note) {
  ClaimHolder me = this_process_holder();
  const fs::path target(path);
  const std::string tmp =
      (target.parent_path() / ("." + target.filename().string() + "." + me.token)).string();
  if (!write_new_file(tmp, to_json(me).dump() + "\n"))
    throw RuntimeFailure(tmp + ": cannot create claim file (" + std::strerror(errno) + ")");
  ClaimState state;
  bool taken = false;
  for (int attempt = 0; attempt < 3 && !taken; ++attempt) {
    // link(2) fails if the name exists. Over NFS a lost reply can report failure for a link that was
    // made, so success is judged by the link count of our own file, as open(2) advises.
    (void)::link(tmp.c_str(), path.c_str());
    struct stat st {};
    if (::stat(tmp.c_str(), &st) == 0 && st.st_nlink == 2) {
      taken = true;
      break;
    }
    state = inspect_claim(path);
    if (!state.exists) continue;  // released in between: try again
    if (!state.stale || !break_stale(path, state, note)) break;
  }
  ::unlink(tmp.c_str());
  if (taken) return std::unique_ptr<Claim>(new Claim(path, me));
  if (held_by) *held_by = state;
  return nullptr;
}

Claim::~Claim() {
  release();
}

bool Claim::heartbeat() {
  if (released_) return false;
  ClaimHolder on_disk;
  if (!from_json(slurp(path_), &on_disk) || on_disk.token != holder_.token) return false;
  ::utimensat(AT_FDCWD, path_.c_str(), nullptr, 0);  // mtime = now
  return true;
}

void Claim::release() {
  if (released_) return;
  released_ = true;
  ClaimHolder on_disk;
  if (from_json(slurp(path_), &on_disk) && on_disk.token == holder_.token) ::unlink(path_.c_str());
}

}  // namespace xsa
