#include "xsa/util/progress.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>

namespace xsa {

ProgressBoard::ProgressBoard(std::vector<std::string> run_names, int total_steps, int plain_every, bool quiet)
    : total_steps_(total_steps),
      plain_every_(std::max(1, plain_every)),
      quiet_(quiet),
      tty_(isatty(STDOUT_FILENO)) {
  for (auto& n : run_names) {
    RunState state;
    state.name = n;
    runs_.push_back(state);
  }
  start_ = last_render_ = std::chrono::steady_clock::now();
}

std::string format_duration(double seconds) {
  char buf[32];
  if (seconds < 0) seconds = 0;
  int s = static_cast<int>(seconds + 0.5);
  if (s >= 3600)
    std::snprintf(buf, sizeof(buf), "%dh%02dm", s / 3600, (s % 3600) / 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof(buf), "%dm%02ds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof(buf), "%ds", s);
  return buf;
}

void ProgressBoard::update(size_t run, int step, double loss, double tokens_per_s) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = runs_.at(run);
  r.step = step;
  r.loss = loss;
  r.tokens_per_s = tokens_per_s;
  r.phase.clear();
  if (tty_) {
    render_locked(step == total_steps_);
  } else if (step % plain_every_ == 0 || step == total_steps_) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    double eta = step > 0 ? elapsed * (total_steps_ - step) / step : 0;
    std::printf("[%s] step %d/%d  loss %.4f  %.0f tok/s  ETA %s\n", r.name.c_str(), step, total_steps_, loss,
                tokens_per_s, format_duration(eta).c_str());
    std::fflush(stdout);
  }
}

void ProgressBoard::render_locked(bool force) {
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_render_ < std::chrono::milliseconds(250)) return;
  last_render_ = now;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  std::ostringstream line;
  double slowest = 1.0;
  bool any_phase = false;
  for (const auto& r : runs_) {
    if (line.tellp() > 0) line << " | ";
    char buf[160];
    if (!r.phase.empty()) {
      std::snprintf(buf, sizeof(buf), "%s %s", r.name.c_str(), r.phase.c_str());
      any_phase = true;
    } else {
      std::snprintf(buf, sizeof(buf), "%s %d/%d loss %.3f %.1fk tok/s", r.name.c_str(), r.step, total_steps_,
                    r.loss, r.tokens_per_s / 1000.0);
    }
    line << buf;
    slowest = std::min(slowest, static_cast<double>(r.step) / std::max(1, total_steps_));
  }
  // The ETA counts training steps only: while a run evaluates or samples after its last step it would
  // sit at 0s, so it is left out then.
  double eta = slowest > 0 ? elapsed * (1.0 - slowest) / slowest : 0;
  std::string eta_text = any_phase ? "" : " | ETA " + format_duration(eta);
  std::printf("\r%s%s\x1b[K", line.str().c_str(), eta_text.c_str());
  std::fflush(stdout);
  live_line_open_ = true;
}

void ProgressBoard::phase(size_t run, const std::string& text) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = runs_.at(run);
  // A new kind of phase ("final eval", "sampling", "done": the text before its first digit) always prints.
  auto kind = [](const std::string& t) { return t.substr(0, t.find_first_of("0123456789")); };
  const bool first = r.phase.empty() || kind(r.phase) != kind(text);
  r.phase = text;
  if (text.empty()) return;
  if (tty_) {
    render_locked(false);
    return;
  }
  auto now = std::chrono::steady_clock::now();
  if (first || now - r.last_phase_print >= std::chrono::seconds(2)) {
    r.last_phase_print = now;
    std::printf("[%s] %s\n", r.name.c_str(), text.c_str());
    std::fflush(stdout);
  }
}

void ProgressBoard::message(const std::string& text) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (live_line_open_) std::printf("\r\x1b[K");
  std::printf("%s\n", text.c_str());
  if (live_line_open_) render_locked(true);
  std::fflush(stdout);
}

void ProgressBoard::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (live_line_open_) std::printf("\n");
  live_line_open_ = false;
  std::fflush(stdout);
}

}  // namespace xsa
