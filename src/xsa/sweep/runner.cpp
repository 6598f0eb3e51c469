#include "xsa/sweep/runner.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include "xsa/records/sweep_records.h"
#include "xsa/sweep/claim.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/progress.h"
#include "xsa/util/stop_signal.h"
#include "xsa/util/timing.h"

namespace fs = std::filesystem;

namespace xsa {
namespace {

using Clock = std::chrono::steady_clock;

struct PointState {
  const SweepPoint* point = nullptr;
  PointStatus status = PointStatus::kPending;
  int exit_code = -1;  // -1: not run in this session
  std::string message;
  double wall_s = 0.0;
  Clock::time_point started;
  double started_at = 0.0;  // unix time
  int attempt = 0;          // 1 + the attempts recorded in the point's status.json
  std::unique_ptr<Claim> claim;
  bool claim_lost = false;
};

// Last non-empty line of the child's output: the trainer's one-line error on failure.
std::string last_line(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const InputError&) {
    return "";
  }
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto cr = line.rfind('\r');  // progress lines rewritten with '\r': keep the final state
    if (cr != std::string::npos) line = line.substr(cr + 1);
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  }
  if (last.size() > 400) last = last.substr(0, 400) + "...";
  return last;
}

// Starts the trainer with stdout+stderr in `log_path`. The child is killed when the sweep dies (even by
// kill -9), so an interrupted sweep leaves no orphan trainers writing into the folder.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw RuntimeFailure(log_path + ": cannot create (" + std::strerror(errno) + ")");
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fd);
    throw RuntimeFailure(std::string("cannot start a trainer process (") + std::strerror(err) + ")");
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the sweep died before prctl took effect
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execv(args[0], args.data());
    dprintf(STDERR_FILENO, "xsa-sweep: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(fd);
  return pid;
}

void sleep_ms(int ms) {
  struct timespec ts {
    ms / 1000, (ms % 1000) * 1000000L
  };
  ::nanosleep(&ts, nullptr);  // SIGTERM ends it early, which is what the wait loop wants
}

class SweepRun {
 public:
  SweepRun(const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepRunOptions& options,
           std::ostream& status)
      : spec_(spec), options_(options), status_(status) {
    for (const auto& p : points) {
      PointState s;
      s.point = &p;
      if (path_exists(results_path(p))) {
        s.status = PointStatus::kSkipped;
        s.message = "already done";
      }
      states_.push_back(std::move(s));
    }
  }

  int run() {
    make_directories(options_.out_dir);
    install_stop_signal_handler();
    claim_summary_name();
    std::deque<std::size_t> queue;
    for (std::size_t i = 0; i < states_.size(); ++i)
      if (states_[i].status == PointStatus::kPending) queue.push_back(i);
    write_summary();
    report("start", "");
    auto last_heartbeat = Clock::now();
    auto last_held_check = Clock::now();
    bool forwarded = false;
    while (!queue.empty() || !running_.empty() || (!held_.empty() && !stop_requested())) {
      if (stop_requested()) {
        queue.clear();  // start nothing new; unstarted points stay pending for the rerun
        if (!forwarded) {
          forwarded = true;
          report("SIGTERM", "stopping: " + std::to_string(running_.size()) +
                                " running point(s) checkpoint and stop, the rest stay pending");
          for (const auto& [pid, i] : running_) ::kill(pid, SIGTERM);
        }
      }
      while (!queue.empty() && static_cast<int>(running_.size()) < options_.workers) {
        std::size_t i = queue.front();
        queue.pop_front();
        start(i);
      }
      if (running_.empty() && queue.empty() && !held_.empty() && !stop_requested()) {
        // Only points others hold are left: look again every few seconds until each is done there, or
        // released unfinished / its holder died (then it is ours to run).
        if (Clock::now() - last_held_check >= std::chrono::seconds(2)) {
          last_held_check = Clock::now();
          std::vector<std::size_t> still_held;
          for (std::size_t i : held_) {
            if (path_exists(results_path(*states_[i].point))) {
              mark_done_elsewhere(i);
            } else if (ClaimState c = inspect_claim(claim_path(*states_[i].point)); !c.exists || c.stale) {
              queue.push_back(i);
            } else {
              still_held.push_back(i);
            }
          }
          held_ = still_held;
        }
        if (Clock::now() - last_heartbeat >= std::chrono::seconds(kHeartbeatSeconds)) {
          last_heartbeat = Clock::now();
          heartbeat();
        }
        if (queue.empty()) sleep_ms(200);
        continue;
      }
      int wstatus = 0;
      pid_t pid = ::waitpid(-1, &wstatus, WNOHANG);
      if (pid < 0 && errno != EINTR && errno != ECHILD)
        throw RuntimeFailure(std::string("waitpid failed (") + std::strerror(errno) + ")");
      if (pid > 0) {
        auto it = running_.find(pid);
        if (it == running_.end()) continue;  // not one of ours
        std::size_t i = it->second;
        running_.erase(it);
        finish(i, wstatus);
        continue;
      }
      if (Clock::now() - last_heartbeat >= std::chrono::seconds(kHeartbeatSeconds)) {
        last_heartbeat = Clock::now();
        heartbeat();
      }
      sleep_ms(50);
    }
    for (std::size_t i : held_) {  // stopped while waiting for them
      states_[i].message = "held by another process when this one stopped";
    }
    write_summary();
    summary_claim_.reset();
    if (options_.tty) status_ << "\n";
    status_ << "summary: " << (fs::path(options_.out_dir) / summary_name_).string() << "\n";
    status_.flush();
    if (stop_requested()) return kExitInterrupted;
    return count(PointStatus::kFailed) > 0 ? kExitRuntime : kExitOk;
  }

 private:
  std::string point_dir(const SweepPoint& p) const {
    return (fs::path(options_.out_dir) / p.run_id).string();
  }
  std::string results_path(const SweepPoint& p) const { return point_dir(p) + "/results.json"; }
  std::string claim_path(const SweepPoint& p) const { return point_dir(p) + "/claim.lock"; }

  // summary.json / summary.shard-K-of-N.json belongs to one live process at a time; a second live process
  // on the same slice (a second submission, a local run beside the array, the second lane of a science
  // round) takes the first free numbered name, summary[.shard-K-of-N].2.json, .3, ..., so no live process
  // overwrites another's record. A name whose process is gone is taken again (its snapshot is stale; every
  // attempt stays in the points' status.json), so a folder holds as many summaries as processes ever ran
  // into it at once, not one per process. xsa-inspect and --status read every summary*.json.
  void claim_summary_name() {
    const std::string first = summary_file_name(options_.shard);
    const std::string stem = first.substr(0, first.size() - 5);  // without ".json"
    for (int slot = 1; slot <= kSummarySlots; ++slot) {
      const std::string name = slot == 1 ? first : stem + "." + std::to_string(slot) + ".json";
      ClaimState held;
      summary_claim_ =
          Claim::try_acquire((fs::path(options_.out_dir) / ("." + name + ".lock")).string(), &held, nullptr);
      if (summary_claim_) {
        summary_name_ = name;
        return;
      }
    }
    // Every numbered name is held by a live process: a name of its own, unclaimed (nobody else writes it).
    const ClaimHolder me = this_process_holder();
    summary_name_ = stem + "." + me.host + "-" + std::to_string(me.pid) + ".json";
  }

  void heartbeat() {
    if (summary_claim_) summary_claim_->heartbeat();
    for (auto& [pid, i] : running_) {
      PointState& s = states_[i];
      if (s.claim && !s.claim->heartbeat()) {
        // Someone judged us dead and took the point over: stop writing into its folder at once.
        ::kill(pid, SIGKILL);
        s.claim_lost = true;
      }
    }
  }

  // Per-point record of the last attempt, written only by the claim holder (so never by two processes).
  void write_point_status(const PointState& s, double started_at) const {
    const ClaimHolder& h = s.claim->holder();
    PointRecord r;
    r.run_id = s.point->run_id;
    r.status = s.status;
    if (s.exit_code >= 0) r.exit_code = s.exit_code;
    r.message = s.message;
    r.process = {h.host, static_cast<long>(h.pid), h.job};
    r.attempt = s.attempt;
    r.started_at = started_at;
    r.updated_at = unix_seconds();
    r.wall_s = s.wall_s;
    write_file_atomic(point_dir(*s.point) + "/status.json", to_json(r).dump(1) + "\n");
  }

  // results.json appeared while this process did not hold the point: another process trained it.
  void mark_done_elsewhere(std::size_t i) {
    states_[i].status = PointStatus::kSkipped;
    states_[i].message = "done by another process";
    write_summary();
    report("skipped", states_[i].point->run_id + " (done by another process)");
  }

  void start(std::size_t i) {
    PointState& s = states_[i];
    const SweepPoint& p = *s.point;
    const std::string dir = point_dir(p);
    make_directories(dir);
    ClaimState held;
    std::string note;
    s.claim = Claim::try_acquire(claim_path(p), &held, &note);
    if (!s.claim) {
      if (path_exists(results_path(p))) {
        mark_done_elsewhere(i);
        return;
      }
      s.status = PointStatus::kHeld;
      s.message = held.readable ? "held by " + describe_holder(held.holder) : "held by another process";
      held_.push_back(i);
      report("skipped", p.run_id + " for now: " + s.message + "; will take it if that one stops");
      write_summary();
      return;
    }
    if (!note.empty()) report("recovered", p.run_id + ": " + note);
    // Finished by another process between our first look and the claim.
    if (path_exists(results_path(p))) {
      s.claim.reset();
      mark_done_elsewhere(i);
      return;
    }
    std::vector<std::string> argv = {options_.trainer, "--config", spec_.base_path, "--out", dir, "--quiet"};
    // An interrupted earlier attempt: continue from its checkpoints, or reuse its half-written folder.
    bool resume = is_directory(dir + "/checkpoints");
    if (resume)
      argv.push_back("--resume");
    else if (has_earlier_attempt(dir))
      argv.push_back("--force");
    for (const auto& o : p.overrides) argv.insert(argv.end(), {"--set", o});
    for (const auto& o : child_runtime_overrides()) argv.insert(argv.end(), {"--set", o});
    s.attempt = previous_attempts(p) + 1;
    pid_t pid = spawn(argv, dir + "/train.out");
    running_[pid] = i;
    s.status = PointStatus::kRunning;
    s.started = Clock::now();
    s.started_at = unix_seconds();
    write_point_status(s, s.started_at);
    write_summary();
    report("started", p.run_id + (resume ? " (resuming from its checkpoints)" : ""));
  }

  // Anything in the folder besides the claim and status files is left from an earlier attempt.
  static bool has_earlier_attempt(const std::string& dir) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name != "status.json" && name.rfind("claim.lock", 0) != 0 && name.rfind(".claim.lock", 0) != 0)
        return true;
    }
    return false;
  }

  int previous_attempts(const SweepPoint& p) const {
    const auto last = read_point_record(point_dir(p) + "/status.json");
    return last ? last->attempt : 0;
  }

  void finish(std::size_t i, int wstatus) {
    PointState& s = states_[i];
    const SweepPoint& p = *s.point;
    s.wall_s = std::chrono::duration<double>(Clock::now() - s.started).count();
    if (WIFEXITED(wstatus)) {
      s.exit_code = WEXITSTATUS(wstatus);
    } else {
      s.exit_code = 128 + WTERMSIG(wstatus);
    }
    if (s.claim_lost) {
      s.status = PointStatus::kSkipped;
      s.message = "claim taken over by another process; its trainer here was stopped";
      s.claim.reset();  // no longer ours: leaves the other process's claim file alone
      write_summary();
      report("LOST", p.run_id + ": " + s.message);
      return;
    }
    if (s.exit_code == 0 && path_exists(results_path(p))) {
      s.status = PointStatus::kDone;
      s.message.clear();
      finished_walls_.push_back(s.wall_s);
    } else if (s.exit_code == kExitInterrupted) {
      s.status = PointStatus::kInterrupted;
      s.message = "stopped by SIGTERM after a checkpoint; a rerun resumes it";
    } else {
      s.status = PointStatus::kFailed;
      s.message = last_line(point_dir(p) + "/train.out");
      if (s.exit_code == 0) s.message = "trainer exited 0 but wrote no results.json";
      if (s.message.empty())
        s.message = WIFSIGNALED(wstatus) ? "killed by signal " + std::to_string(WTERMSIG(wstatus))
                                         : "exit code " + std::to_string(s.exit_code);
    }
    write_point_status(s, s.started_at);
    s.claim.reset();  // released only after the status is on disk
    write_summary();
    if (s.status == PointStatus::kDone)
      report("done", p.run_id + " in " + format_duration(s.wall_s));
    else if (s.status == PointStatus::kInterrupted)
      report("interrupted", p.run_id + " (checkpointed; a rerun resumes it)");
    else
      report("FAILED", p.run_id + " (exit " + std::to_string(s.exit_code) + "): " + s.message);
  }

  int count(PointStatus status) const {
    int n = 0;
    for (const auto& s : states_) n += s.status == status;
    return n;
  }

  std::string eta() const {
    int remaining = count(PointStatus::kPending) + count(PointStatus::kRunning);
    if (remaining == 0) return "0s";
    if (finished_walls_.empty()) return "?";
    double mean = 0;
    for (double w : finished_walls_) mean += w;
    mean /= static_cast<double>(finished_walls_.size());
    int lanes = std::max(1, std::min(options_.workers, remaining));
    return format_duration(mean * remaining / lanes);
  }

  std::string status_line() const {
    const int skipped = count(PointStatus::kSkipped), held = count(PointStatus::kHeld),
              interrupted = count(PointStatus::kInterrupted);
    std::ostringstream line;
    line << spec_.name << ": " << count(PointStatus::kDone) + skipped << "/" << states_.size() << " done";
    if (skipped) line << " (" << skipped << " skipped)";
    line << ", " << count(PointStatus::kRunning) << " running, " << count(PointStatus::kFailed) << " failed";
    if (held) line << ", " << held << " held elsewhere";
    if (interrupted) line << ", " << interrupted << " interrupted";
    line << ", ETA " << eta();
    return line.str();
  }

  // On a TTY one line is rewritten in place (failures still get their own line); otherwise one line per
  // event.
  void report(const std::string& event, const std::string& detail) {
    if (options_.tty) {
      if (event != "started" && event != "done" && event != "start")
        status_ << "\r\033[K" << event << " " << detail << "\n";
      status_ << "\r\033[K" << status_line();
    } else {
      status_ << "[" << status_line() << "] " << event << (detail.empty() ? "" : " " + detail) << "\n";
    }
    status_.flush();
  }

  void write_summary() const {
    SweepSummary summary;
    summary.name = spec_.name;
    summary.sweep_file = spec_.path;
    summary.base = spec_.base_path;
    for (const auto& [key, values] : spec_.grid)
      for (const auto& v : values) summary.grid[key].push_back(v.json);
    for (const auto& [key, v] : spec_.set) summary.set[key] = v.json;
    summary.shard_index = options_.shard.index;
    summary.shard_count = options_.shard.count;
    summary.workers = options_.workers;
    const ClaimHolder me = this_process_holder();
    summary.process = {me.host, static_cast<long>(me.pid), me.job};
    for (const auto& s : states_) {
      SummaryPoint point;
      point.run_id = s.point->run_id;
      point.index = s.point->index;
      point.overrides = summary.set;
      point.overrides.update(s.point->values);
      point.status = s.status;
      if (s.exit_code >= 0) point.exit_code = s.exit_code;
      point.message = s.message;
      point.wall_s = s.wall_s;
      summary.points.push_back(std::move(point));
    }
    write_file_atomic((fs::path(options_.out_dir) / summary_name_).string(), to_json(summary).dump(2) + "\n");
  }

  const SweepSpec& spec_;
  const SweepRunOptions& options_;
  std::ostream& status_;
  std::vector<PointState> states_;
  std::map<pid_t, std::size_t> running_;
  std::vector<std::size_t> held_;  // points another live process holds
  std::vector<double> finished_walls_;
  std::string summary_name_;
  std::unique_ptr<Claim> summary_claim_;
};

}  // namespace

std::string summary_file_name(const Shard& shard) {
  if (shard.count == 1) return "summary.json";
  return "summary.shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count) + ".json";
}

int run_sweep(const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepRunOptions& options,
              std::ostream& status) {
  if (options.workers < 1)
    throw InputError("--workers " + std::to_string(options.workers) + ": expected >= 1");
  return SweepRun(spec, points, options, status).run();
}

}  // namespace xsa
