#pragma once
// What every C++ test that runs a built executable needs, in one place: run a program (no shell) and capture
// its exit code, stdout and stderr; start one in the background and wait for it; read and write whole files;
// temporary folders. Header-only, torch-free.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace xsa::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal number when a signal ended it
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

// Token ids as a token file holds them (what xsa-prepare writes): little-endian uint16.
inline std::string token_file_bytes(const std::vector<std::int64_t>& ids) {
  std::string bytes;
  for (const std::int64_t id : ids) {
    bytes.push_back(static_cast<char>(id & 0xff));
    bytes.push_back(static_cast<char>((id >> 8) & 0xff));
  }
  return bytes;
}

// A fresh, empty folder under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "xsa_test_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  // Names of the entries in the folder (including hidden ones), sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

// Starts `program args...` (no shell) with stdin from `in_path` (or /dev/null), stdout to `out_path` and
// stderr to `err_path` (the same file for both is fine: stderr then appends); `env` entries "NAME=value" are
// set in the child only. Returns its pid.
inline pid_t start_command(const std::string& program, const std::vector<std::string>& args,
                           const std::string& out_path, const std::string& err_path,
                           const std::vector<std::string>& env = {},
                           const std::string& in_path = "/dev/null") {
  pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& kv : env) {
      const auto eq = kv.find('=');
      ::setenv(kv.substr(0, eq).c_str(), eq == std::string::npos ? "" : kv.substr(eq + 1).c_str(), 1);
    }
    int in = ::open(in_path.c_str(), O_RDONLY);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = err_path == out_path ? out : ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// Its exit code, or 128 + the signal that ended it.
inline int wait_command(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs `program args...` to the end with stdin from `stdin_text`, capturing its output.
inline CommandResult run_command(const std::string& program, const std::vector<std::string>& args,
                                 const std::string& stdin_text = "",
                                 const std::vector<std::string>& env = {}) {
  TempDir io;
  spit(io / "stdin", stdin_text);
  CommandResult result;
  result.exit_code =
      wait_command(start_command(program, args, io / "stdout", io / "stderr", env, io / "stdin"));
  result.out = slurp(io / "stdout");
  result.err = slurp(io / "stderr");
  return result;
}

inline int count_lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += (c == '\n');
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

// The lines of a tool's stderr other than its advice ("xsa-train: warning: ...", printed once training
// starts, e.g. on a CPU where OpenBLAS runs its generic kernels: docs/guide.md "Determinism, threads,
// concurrency"): what the one-line contract of a failure that happens during training counts.
inline int count_error_lines(const std::string& text) {
  int lines = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (text.compare(begin, 20, "xsa-train: warning: ") != 0) ++lines;
    begin = end + 1;
  }
  return lines;
}

}  // namespace xsa::testing
