#include "xsa/sweep/runner.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <sstream>

#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/progress.h"

namespace fs = std::filesystem;

namespace xsa {
namespace {

using Clock = std::chrono::steady_clock;

struct PointState {
  const SweepPoint* point = nullptr;
  std::string status = "pending";  // pending | running | done | failed | skipped
  int exit_code = -1;              // -1: not run in this session
  std::string message;
  double wall_s = 0.0;
  Clock::time_point started;
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

class SweepRun {
 public:
  SweepRun(const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepRunOptions& options,
           std::ostream& status)
      : spec_(spec), options_(options), status_(status) {
    for (const auto& p : points) {
      PointState s;
      s.point = &p;
      if (path_exists(results_path(p))) {
        s.status = "skipped";
        s.message = "already done";
      }
      states_.push_back(s);
    }
  }

  int run() {
    make_directories(options_.out_dir);
    std::deque<std::size_t> queue;
    for (std::size_t i = 0; i < states_.size(); ++i)
      if (states_[i].status == "pending") queue.push_back(i);
    write_summary();
    report("start", "");
    while (!queue.empty() || !running_.empty()) {
      while (!queue.empty() && static_cast<int>(running_.size()) < options_.workers) {
        start(queue.front());
        queue.pop_front();
      }
      int wstatus = 0;
      pid_t pid = ::waitpid(-1, &wstatus, 0);
      if (pid < 0) {
        if (errno == EINTR) continue;
        throw RuntimeFailure(std::string("waitpid failed (") + std::strerror(errno) + ")");
      }
      auto it = running_.find(pid);
      if (it == running_.end()) continue;  // not one of ours
      std::size_t i = it->second;
      running_.erase(it);
      finish(i, wstatus);
    }
    if (options_.tty) status_ << "\n";
    status_ << "summary: " << (fs::path(options_.out_dir) / summary_file_name(options_.shard)).string()
            << "\n";
    status_.flush();
    return count("failed") > 0 ? kExitRuntime : kExitOk;
  }

 private:
  std::string point_dir(const SweepPoint& p) const {
    return (fs::path(options_.out_dir) / p.run_id).string();
  }
  std::string results_path(const SweepPoint& p) const { return point_dir(p) + "/results.json"; }

  void start(std::size_t i) {
    PointState& s = states_[i];
    const SweepPoint& p = *s.point;
    const std::string dir = point_dir(p);
    std::vector<std::string> argv = {options_.trainer, "--config", spec_.base_path, "--out", dir, "--quiet"};
    // An interrupted earlier attempt: continue from its checkpoints, or reuse its half-written folder.
    if (is_directory(dir + "/checkpoints"))
      argv.push_back("--resume");
    else if (path_exists(dir))
      argv.push_back("--force");
    make_directories(dir);
    for (const auto& o : p.overrides) argv.insert(argv.end(), {"--set", o});
    for (const auto& o : child_runtime_overrides()) argv.insert(argv.end(), {"--set", o});
    pid_t pid = spawn(argv, dir + "/train.out");
    running_[pid] = i;
    s.status = "running";
    s.started = Clock::now();
    write_summary();
    report("started", p.run_id);
  }

  void finish(std::size_t i, int wstatus) {
    PointState& s = states_[i];
    const SweepPoint& p = *s.point;
    s.wall_s = std::chrono::duration<double>(Clock::now() - s.started).count();
    finished_walls_.push_back(s.wall_s);
    if (WIFEXITED(wstatus)) {
      s.exit_code = WEXITSTATUS(wstatus);
    } else {
      s.exit_code = 128 + WTERMSIG(wstatus);
    }
    if (s.exit_code == 0 && path_exists(results_path(p))) {
      s.status = "done";
      s.message.clear();
    } else {
      s.status = "failed";
      s.message = last_line(point_dir(p) + "/train.out");
      if (s.exit_code == 0) s.message = "trainer exited 0 but wrote no results.json";
      if (s.message.empty())
        s.message = WIFSIGNALED(wstatus) ? "killed by signal " + std::to_string(WTERMSIG(wstatus))
                                         : "exit code " + std::to_string(s.exit_code);
    }
    write_summary();
    if (s.status == "done")
      report("done", p.run_id + " in " + format_duration(s.wall_s));
    else
      report("FAILED", p.run_id + " (exit " + std::to_string(s.exit_code) + "): " + s.message);
  }

  int count(const std::string& status) const {
    int n = 0;
    for (const auto& s : states_) n += s.status == status;
    return n;
  }

  std::string eta() const {
    int remaining = count("pending") + count("running");
    if (remaining == 0) return "0s";
    if (finished_walls_.empty()) return "?";
    double mean = 0;
    for (double w : finished_walls_) mean += w;
    mean /= static_cast<double>(finished_walls_.size());
    int lanes = std::max(1, std::min(options_.workers, remaining));
    return format_duration(mean * remaining / lanes);
  }

  std::string status_line() const {
    std::ostringstream line;
    line << spec_.name << ": " << count("done") + count("skipped") << "/" << states_.size() << " done";
    if (count("skipped")) line << " (" << count("skipped") << " skipped)";
    line << ", " << count("running") << " running, " << count("failed") << " failed, ETA " << eta();
    return line.str();
  }

  // On a TTY one line is rewritten in place (failures still get their own line); otherwise one line per
  // event.
  void report(const std::string& event, const std::string& detail) {
    if (options_.tty) {
      if (event == "FAILED") status_ << "\r\033[K" << event << " " << detail << "\n";
      status_ << "\r\033[K" << status_line();
    } else {
      status_ << "[" << status_line() << "] " << event << (detail.empty() ? "" : " " + detail) << "\n";
    }
    status_.flush();
  }

  void write_summary() const {
    nlohmann::json grid = nlohmann::json::object();
    for (const auto& [key, values] : spec_.grid)
      for (const auto& v : values) grid[key].push_back(v.json);
    nlohmann::json set = nlohmann::json::object();
    for (const auto& [key, v] : spec_.set) set[key] = v.json;
    nlohmann::json points = nlohmann::json::array();
    for (const auto& s : states_) {
      nlohmann::json overrides = set;
      overrides.update(s.point->values);
      points.push_back(
          {{"run_id", s.point->run_id},
           {"index", s.point->index},
           {"overrides", overrides},
           {"status", s.status},
           {"exit_code", s.exit_code < 0 ? nlohmann::json(nullptr) : nlohmann::json(s.exit_code)},
           {"message", s.message},
           {"wall_s", s.wall_s}});
    }
    nlohmann::json summary = {{"schema", "xsa.sweep/1"},
                              {"name", spec_.name},
                              {"sweep_file", spec_.path},
                              {"base", spec_.base_path},
                              {"grid", grid},
                              {"set", set},
                              {"shard", {{"index", options_.shard.index}, {"count", options_.shard.count}}},
                              {"workers", options_.workers},
                              {"counts",
                               {{"done", count("done")},
                                {"skipped", count("skipped")},
                                {"failed", count("failed")},
                                {"running", count("running")},
                                {"pending", count("pending")}}},
                              {"points", points}};
    write_file_atomic((fs::path(options_.out_dir) / summary_file_name(options_.shard)).string(),
                      summary.dump(2) + "\n");
  }

  const SweepSpec& spec_;
  const SweepRunOptions& options_;
  std::ostream& status_;
  std::vector<PointState> states_;
  std::map<pid_t, std::size_t> running_;
  std::vector<double> finished_walls_;
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
