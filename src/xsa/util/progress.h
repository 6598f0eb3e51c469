#pragma once
// Live progress for concurrent runs. On a terminal: one line rewritten in place (all runs side by
// side, throttled). Elsewhere (CI, pipes, files): a plain line per run every `plain_every` steps.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace xsa {

// "45s", "6m43s", "2h05m": durations in progress lines and sweep status.
std::string format_duration(double seconds);

class ProgressBoard {
 public:
  ProgressBoard(std::vector<std::string> run_names, int total_steps, int plain_every, bool quiet);
  // Thread-safe. tokens_per_s is the run's recent throughput.
  void update(size_t run, int step, double loss, double tokens_per_s);
  // Thread-safe. What a run does after its last step (e.g. "final eval 640/1592 windows"), shown in place
  // of its step and the ETA until the run's next update; "" clears it. Plain output prints a new kind of
  // phase at once and updates of the same kind at most once every 2 s per run.
  void phase(size_t run, const std::string& text);
  void message(const std::string& line);  // a line that should not be overwritten
  void finish();                          // ends the live line

 private:
  void render_locked(bool force);
  struct RunState {
    std::string name;
    int step = 0;
    double loss = 0;
    double tokens_per_s = 0;
    std::string phase;
    std::chrono::steady_clock::time_point last_phase_print{};
  };
  std::mutex mu_;
  std::vector<RunState> runs_;
  int total_steps_;
  int plain_every_;
  bool quiet_;
  bool tty_;
  bool live_line_open_ = false;
  std::chrono::steady_clock::time_point start_, last_render_;
};

}  // namespace xsa
