#pragma once
// Wall-clock helpers shared by the tools (trainer, prepare, bench, sweep runner).
#include <chrono>

namespace xsa {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Seconds since the Unix epoch (wall clock): the timestamps written into status, claim and event files.
inline double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace xsa
