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

constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitInput = 2;

}  // namespace xsa
