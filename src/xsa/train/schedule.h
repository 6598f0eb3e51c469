#pragma once
// Learning-rate schedule: linear warmup to lr, then cosine decay to min_lr at the last step.
#include <cmath>

namespace xsa {

// step is 0-based; the rate used for the update of that step.
inline double learning_rate(int step, int total_steps, int warmup_steps, double lr, double min_lr) {
  if (step < warmup_steps) return lr * (step + 1) / warmup_steps;
  const int decay_steps = total_steps - warmup_steps;
  if (decay_steps <= 1) return lr;
  double progress = static_cast<double>(step - warmup_steps) / (decay_steps - 1);  // 0 .. 1
  const double kPi = 3.14159265358979323846;
  return min_lr + 0.5 * (lr - min_lr) * (1.0 + std::cos(kPi * progress));
}

}  // namespace xsa
