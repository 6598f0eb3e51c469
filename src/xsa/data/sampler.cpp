#include "xsa/data/sampler.h"

#include <limits>
#include <numeric>
#include <string>

#include "xsa/util/error.h"

namespace xsa {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t SplitMix64::below(std::uint64_t n) {
  // Rejection sampling: discard the top sliver that would bias the modulo.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t r;
  do r = next();
  while (r >= limit);
  return r % n;
}

std::uint64_t count_windows(std::uint64_t n_tokens, int seq_len) {
  if (seq_len <= 0 || n_tokens < static_cast<std::uint64_t>(seq_len) + 1) return 0;
  return (n_tokens - 1) / static_cast<std::uint64_t>(seq_len);
}

std::uint64_t batch_order_seed(std::uint64_t seed) {
  SplitMix64 mix(seed ^ 0x6261746368657321ULL);  // "batches!"
  return mix.next();
}

TrainWindowSampler::TrainWindowSampler(std::uint64_t n_tokens, int seq_len, std::uint64_t seed)
    : n_windows_(count_windows(n_tokens, seq_len)), seq_len_(seq_len), seed_(seed) {
  // The permutation holds 32-bit window indices (half the memory of 64-bit ones for a large file); more
  // windows than that would wrap silently, so they are refused.
  constexpr std::uint64_t kMaxWindows = std::numeric_limits<std::uint32_t>::max();
  if (n_windows_ > kMaxWindows)
    throw InputError("training file of " + std::to_string(n_tokens) + " tokens at seq_len " +
                     std::to_string(seq_len) + " holds " + std::to_string(n_windows_) +
                     " windows, over the sampler's " + std::to_string(kMaxWindows) +
                     "; use a longer data.seq_len or a smaller file");
}

const std::vector<std::uint32_t>& TrainWindowSampler::permutation(std::uint64_t epoch) {
  if (epoch != cached_epoch_) {
    perm_.resize(n_windows_);
    std::iota(perm_.begin(), perm_.end(), 0u);
    SplitMix64 rng(seed_ + 0x9E3779B97F4A7C15ULL * (epoch + 1));
    for (std::uint64_t i = n_windows_; i > 1; --i) {  // Fisher-Yates
      std::uint64_t j = rng.below(i);
      std::swap(perm_[i - 1], perm_[j]);
    }
    cached_epoch_ = epoch;
  }
  return perm_;
}

std::vector<std::uint64_t> TrainWindowSampler::batch_starts(std::int64_t step, int batch_size) {
  std::vector<std::uint64_t> starts(batch_size);
  for (int b = 0; b < batch_size; ++b) {
    std::uint64_t draw = static_cast<std::uint64_t>(step) * batch_size + b;  // global draw index
    const auto& perm = permutation(draw / n_windows_);
    starts[b] = static_cast<std::uint64_t>(perm[draw % n_windows_]) * seq_len_;
  }
  return starts;
}

std::vector<std::uint64_t> evenly_spaced_windows(std::uint64_t n_tokens, int seq_len, std::uint64_t count) {
  std::uint64_t n = count_windows(n_tokens, seq_len);
  if (count > n) count = n;
  std::vector<std::uint64_t> starts(count);
  if (count == 0) return starts;
  // k·n / count without the 64-bit product k·n (which overflows past 2^32 windows): k·(n/count) plus the
  // remainder's share, exact in integers.
  const std::uint64_t quotient = n / count, remainder = n % count;
  for (std::uint64_t k = 0; k < count; ++k)
    starts[k] = (k * quotient + k * remainder / count) * static_cast<std::uint64_t>(seq_len);
  return starts;
}

}  // namespace xsa
