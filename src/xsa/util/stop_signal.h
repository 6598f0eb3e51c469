#pragma once
// A stop request by SIGTERM (what Slurm sends before SIGKILL on scancel, preemption or time limit; also
// `kill PID`). The handler only sets an async-signal-safe flag; long-running loops poll it at a safe point
// (xsa-train: the next step boundary, where it writes a checkpoint; xsa-sweep: its wait loop, where it
// forwards the signal to its trainers). Torch-free.

namespace xsa {

// Installs the SIGTERM handler (idempotent). Call once, early in main-like code.
void install_stop_signal_handler();

// True once SIGTERM has arrived.
bool stop_requested();

// For tests and for a process that wants to stop itself the same way.
void request_stop();

}  // namespace xsa
