#pragma once
// Seeded window sampling over a token file. Torch-free.
//
// A window is seq_len+1 consecutive tokens (inputs and shifted targets); window w starts at token
// w·seq_len, so windows tile the file without overlapping predictions. Training draws windows
// without replacement within an epoch (a fresh permutation per epoch). The batch of a step is a pure
// function of (seed, step): every variant of a paired run sees the same batches, and a resumed run
// needs no sampler state.
#include <cstdint>
#include <mutex>
#include <vector>

namespace xsa {

// SplitMix64: tiny, portable, and the same on every platform and standard library.
struct SplitMix64 {
  std::uint64_t state;
  explicit SplitMix64(std::uint64_t seed) : state(seed) {}
  std::uint64_t next();
  // Uniform in [0, n), without modulo bias.
  std::uint64_t below(std::uint64_t n);
};

// Number of non-overlapping windows of seq_len+1 tokens (sharing one boundary token) in n_tokens.
std::uint64_t count_windows(std::uint64_t n_tokens, int seq_len);

class TrainWindowSampler {
 public:
  TrainWindowSampler(std::uint64_t n_tokens, int seq_len, std::uint64_t seed);
  // Start offsets (in tokens) of the batch_size windows of `step` (0-based).
  std::vector<std::uint64_t> batch_starts(std::int64_t step, int batch_size);
  std::uint64_t num_windows() const { return n_windows_; }

 private:
  const std::vector<std::uint32_t>& permutation(std::uint64_t epoch);
  std::uint64_t n_windows_;
  int seq_len_;
  std::uint64_t seed_;
  std::uint64_t cached_epoch_ = UINT64_MAX;
  std::vector<std::uint32_t> perm_;
};

// `count` window starts spread evenly over the file (all windows if count >= available): the fixed
// validation set used for periodic evaluation and bias metrics.
std::vector<std::uint64_t> evenly_spaced_windows(std::uint64_t n_tokens, int seq_len, std::uint64_t count);

// The seed of the batch order, derived from the experiment seed (never from the variant).
std::uint64_t batch_order_seed(std::uint64_t seed);

}  // namespace xsa
