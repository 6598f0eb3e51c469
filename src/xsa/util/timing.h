#pragma once
// Wall-clock helpers shared by the tools (trainer, prepare, bench, sweep runner).
#include <chrono>

namespace xsa {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace xsa
