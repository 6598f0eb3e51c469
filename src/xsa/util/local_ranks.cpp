#include "xsa/util/local_ranks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return std::string("was killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

int run_local_ranks(const std::vector<std::string>& argv, int n, const std::string& program) {
  const std::string port = std::to_string(free_local_port());
  std::vector<pid_t> pids(n, -1);
  std::fflush(stdout);
  std::fflush(stderr);
  for (int r = 0; r < n; ++r) {
    pid_t pid = ::fork();
    if (pid < 0) throw RuntimeFailure(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
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
    pids[r] = pid;
  }
  install_stop_signal_handler();
  bool forwarded = false;
  int live = n, result = 0;
  std::vector<int> codes(n, 0);
  while (live > 0) {
    if (stop_requested() && !forwarded) {
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGTERM);
      forwarded = true;
    }
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    int r = 0;
    while (r < n && pids[r] != pid) ++r;
    if (r == n) continue;
    pids[r] = -1;
    --live;
    const bool ok =
        WIFEXITED(status) && (WEXITSTATUS(status) == 0 || (forwarded && WEXITSTATUS(status) == 75));
    if (ok) {
      if (WEXITSTATUS(status) == 75) result = 75;
      continue;
    }
    // The first failure: stop the others (they could only wait for this rank until their timeout).
    std::fprintf(stderr, "%s: rank %d of %d %s; stopping the other ranks\n", program.c_str(), r, n,
                 describe(status).c_str());
    for (pid_t p : pids)
      if (p > 0) ::kill(p, SIGKILL);
    for (pid_t& p : pids)
      if (p > 0) ::waitpid(p, nullptr, 0), p = -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == kExitInput ? kExitInput : kExitRuntime;
  }
  return result;
}

}  // namespace xsa
