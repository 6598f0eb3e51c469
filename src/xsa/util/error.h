#pragma once
// Error kinds that map to the exit codes every command shares (README.md "Commands").
#include <stdexcept>
#include <string>

namespace xsa {

// Bad usage or bad input (config, data, arguments): exit code 2, one line naming file/key/value.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Failure while running (e.g. the loss became NaN): exit code 1.
struct RuntimeFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Stopped by SIGTERM after writing a checkpoint: not a failure, the work continues with --resume (xsa-train)
// or a rerun (xsa-sweep). Exit code 75 (EX_TEMPFAIL, "try again later").
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitInput = 2;
constexpr int kExitInterrupted = 75;

}  // namespace xsa
