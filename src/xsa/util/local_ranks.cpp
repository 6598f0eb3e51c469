#include "xsa/util/local_ranks.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "xsa/util/error.h"
#include "xsa/util/stop_signal.h"

namespace xsa {

int free_local_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw RuntimeFailure(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw RuntimeFailure("cannot find a free port on 127.0.0.1: " + why);
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

namespace {

using Clock = std::chrono::steady_clock;

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return std::string("was killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

// A line a rank wrote to stderr, and when it arrived.
struct RankLine {
  Clock::time_point at;
  std::string text;
};

// One rank: its pid, the read end of its stderr pipe, the part of a line not yet ended, the lines not yet
// passed on, and how it ended.
struct Rank {
  pid_t pid = -1;
  int err_fd = -1;
  std::string partial;
  std::vector<RankLine> held;
  bool ended = false;
  int status = 0;
  bool killed_by_us = false;
};

// Reads what the ranks wrote to stderr (waiting at most wait_ms for something), split into lines.
void collect_stderr(std::vector<Rank>& ranks, int wait_ms) {
  std::vector<pollfd> fds;
  for (const auto& r : ranks)
    if (r.err_fd >= 0) fds.push_back({r.err_fd, POLLIN, 0});
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    return;
  }
  if (::poll(fds.data(), fds.size(), wait_ms) <= 0) return;
  for (auto& r : ranks) {
    if (r.err_fd < 0) continue;
    char buf[4096];
    const ssize_t n = ::read(r.err_fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {  // end of file: the rank (and everything it started) closed its stderr
      ::close(r.err_fd);
      r.err_fd = -1;
      if (!r.partial.empty()) r.held.push_back({Clock::now(), r.partial}), r.partial.clear();
      continue;
    }
    r.partial.append(buf, static_cast<std::size_t>(n));
    for (auto nl = r.partial.find('\n'); nl != std::string::npos; nl = r.partial.find('\n')) {
      r.held.push_back({Clock::now(), r.partial.substr(0, nl)});
      r.partial.erase(0, nl + 1);
    }
  }
}

// Passes on the lines held longer than `hold` (all of them with a zero hold).
void pass_on(std::vector<Rank>& ranks, Clock::duration hold) {
  const auto now = Clock::now();
  for (auto& r : ranks) {
    std::size_t i = 0;
    for (; i < r.held.size() && now - r.held[i].at >= hold; ++i)
      std::fprintf(stderr, "%s\n", r.held[i].text.c_str());
    r.held.erase(r.held.begin(), r.held.begin() + static_cast<std::ptrdiff_t>(i));
  }
  std::fflush(stderr);
}

bool reap(std::vector<Rank>& ranks) {
  bool any = false;
  for (auto& r : ranks) {
    if (r.ended) continue;
    int status = 0;
    if (::waitpid(r.pid, &status, WNOHANG) == r.pid) r.ended = true, r.status = status, any = true;
  }
  return any;
}

bool ok_exit(const Rank& r, bool stop_forwarded) {
  return WIFEXITED(r.status) &&
         (WEXITSTATUS(r.status) == 0 || (stop_forwarded && WEXITSTATUS(r.status) == kExitInterrupted));
}

// After a failure: the one line that says what went wrong, and the exit code. A rank killed by a signal
// nobody here sent is the cause (it could print nothing; the others only saw it vanish); otherwise the first
// line a rank wrote after the last one passed on (a rank that fails writes its own line before it exits, the
// others can only notice once it has gone); otherwise how the first failed rank ended.
std::pair<std::string, int> failure_line(const std::vector<Rank>& ranks, int first_failed,
                                         const std::string& program) {
  const int n = static_cast<int>(ranks.size());
  const std::string stopped = "; the other ranks were stopped";
  for (int r = 0; r < n; ++r) {
    const Rank& k = ranks[static_cast<std::size_t>(r)];
    if (k.ended && WIFSIGNALED(k.status) && !k.killed_by_us)
      return {program + ": rank " + std::to_string(r) + " of " + std::to_string(n) + " " +
                  describe(k.status) + stopped,
              kExitRuntime};
  }
  const RankLine* first = nullptr;
  int first_rank = -1;
  for (int r = 0; r < n; ++r)
    for (const auto& line : ranks[static_cast<std::size_t>(r)].held)
      if (first == nullptr || line.at < first->at) first = &line, first_rank = r;
  const Rank& failed = ranks[static_cast<std::size_t>(first_failed)];
  if (first != nullptr) {
    const Rank& k = ranks[static_cast<std::size_t>(first_rank)];
    const bool input = k.ended && WIFEXITED(k.status) && WEXITSTATUS(k.status) == kExitInput;
    return {first->text, input ? kExitInput : kExitRuntime};
  }
  const bool input = WIFEXITED(failed.status) && WEXITSTATUS(failed.status) == kExitInput;
  return {program + ": rank " + std::to_string(first_failed) + " of " + std::to_string(n) + " " +
              describe(failed.status) + stopped,
          input ? kExitInput : kExitRuntime};
}

// Forks and execs rank r of n with its environment (torchrun's names); its stderr comes back through a pipe.
// Starts every rank or none: if a fork fails, the ranks already started are killed and reaped.
void start_ranks(std::vector<Rank>& ranks, const std::vector<std::string>& argv, const std::string& program) {
  const int n = static_cast<int>(ranks.size());
  const std::string port = std::to_string(free_local_port());
  std::fflush(stdout);
  std::fflush(stderr);
  auto abandon = [&](const std::string& why) {
    const int err = errno;  // before kill and waitpid change it
    for (auto& k : ranks)
      if (k.pid > 0) ::kill(k.pid, SIGKILL), ::waitpid(k.pid, nullptr, 0), ::close(k.err_fd), k.pid = -1;
    throw RuntimeFailure(why + std::strerror(err));
  };
  for (int r = 0; r < n; ++r) {
    int fds[2];
    if (::pipe(fds) != 0) abandon("pipe: ");
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      abandon("fork: ");
    }
    if (pid == 0) {
      ::dup2(fds[1], STDERR_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      for (const auto& k : ranks)
        if (k.err_fd >= 0) ::close(k.err_fd);
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", port.c_str(), 1);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      std::fprintf(stderr, "%s: rank %d: cannot start %s: %s\n", program.c_str(), r, args[0],
                   std::strerror(errno));
      std::_Exit(127);
    }
    ::close(fds[1]);
    ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    ranks[static_cast<std::size_t>(r)].pid = pid;
    ranks[static_cast<std::size_t>(r)].err_fd = fds[0];
  }
}

// Waits until every rank has ended: passes SIGTERM on, passes their lines on (kHold late), and once one has
// failed gives the others kGrace to end by themselves before killing them. Returns the first failed rank, or
// -1; `forwarded` says whether a stop request was passed on.
int supervise(std::vector<Rank>& ranks, bool& forwarded) {
  // Ordinary lines (warnings) are passed on after this delay; after a failure, only the line of its cause.
  constexpr auto kHold = std::chrono::milliseconds(2000);
  // How long the others may take to end by themselves once one rank has failed (a dead peer's all-reduce
  // fails at once) before they are killed.
  constexpr auto kGrace = std::chrono::milliseconds(1000);
  const int n = static_cast<int>(ranks.size());
  forwarded = false;
  int first_failed = -1;
  Clock::time_point failed_at;
  auto all_ended = [&] {
    for (const auto& r : ranks)
      if (!r.ended) return false;
    return true;
  };
  while (!all_ended()) {
    if (stop_requested() && !forwarded) {
      for (const auto& r : ranks)
        if (!r.ended) ::kill(r.pid, SIGTERM);
      forwarded = true;
    }
    collect_stderr(ranks, 50);
    reap(ranks);
    if (first_failed < 0) {
      for (int r = 0; r < n && first_failed < 0; ++r) {
        const Rank& k = ranks[static_cast<std::size_t>(r)];
        if (k.ended && !ok_exit(k, forwarded)) first_failed = r, failed_at = Clock::now();
      }
      if (first_failed < 0) pass_on(ranks, kHold);
    }
    if (first_failed >= 0 && Clock::now() - failed_at >= kGrace) {
      // The others could only wait for the failed rank until their timeout.
      for (auto& r : ranks)
        if (!r.ended) ::kill(r.pid, SIGKILL), r.killed_by_us = true;
    }
  }
  return first_failed;
}

// Every rank has ended: whatever they wrote last is in the pipes (or its writer's children still hold them).
void drain_stderr(std::vector<Rank>& ranks) {
  for (auto deadline = Clock::now() + std::chrono::milliseconds(200); Clock::now() < deadline;) {
    bool open = false;
    for (const auto& r : ranks) open = open || r.err_fd >= 0;
    if (!open) break;
    collect_stderr(ranks, 20);
  }
  for (auto& r : ranks)
    if (r.err_fd >= 0) ::close(r.err_fd), r.err_fd = -1;
}

}  // namespace

int run_local_ranks(const std::vector<std::string>& argv, int n, const std::string& program) {
  std::vector<Rank> ranks(static_cast<std::size_t>(n));
  start_ranks(ranks, argv, program);
  install_stop_signal_handler();
  bool forwarded = false;
  const int first_failed = supervise(ranks, forwarded);
  drain_stderr(ranks);
  if (first_failed < 0) {
    pass_on(ranks, Clock::duration::zero());
    bool interrupted = false;
    for (const auto& r : ranks) interrupted = interrupted || WEXITSTATUS(r.status) == kExitInterrupted;
    return interrupted ? kExitInterrupted : kExitOk;
  }
  const auto [line, code] = failure_line(ranks, first_failed, program);
  std::fprintf(stderr, "%s\n", line.c_str());
  return code;
}

std::vector<std::string> rank_command(const std::vector<std::string>& argv) {
  std::vector<std::string> out{std::filesystem::read_symlink("/proc/self/exe").string()};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--ranks") {
      ++i;
    } else if (argv[i].rfind("--ranks=", 0) != 0) {
      out.push_back(argv[i]);
    }
  }
  return out;
}

std::string rank_program_name(const std::string& base) {
  const char* world = std::getenv("WORLD_SIZE");
  const char* rank = std::getenv("RANK");
  if (world == nullptr) world = std::getenv("SLURM_NTASKS"), rank = std::getenv("SLURM_PROCID");
  if (world != nullptr && rank != nullptr && std::atoi(world) > 1) return base + " rank " + rank;
  return base;
}

}  // namespace xsa
