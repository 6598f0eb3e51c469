#include "xsa/util/stop_signal.h"

#include <atomic>
#include <csignal>

namespace xsa {
namespace {

// Lock-free atomics are async-signal-safe; checked below at compile time.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag must be lock-free");

extern "C" void on_stop_signal(int) {
  g_stop.store(true, std::memory_order_relaxed);
}

}  // namespace

void install_stop_signal_handler() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // Interrupted system calls restart (file I/O must not see EINTR); sleeps still return early.
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() {
  return g_stop.load(std::memory_order_relaxed);
}

void request_stop() {
  g_stop.store(true, std::memory_order_relaxed);
}

}  // namespace xsa
