// The window sampler: windows tile the file, an epoch draws each window once, a step's batch depends on
// (seed, step) only, the fixed validation windows are spread as k·n/count says, and more windows than the
// 32-bit permutation holds are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "xsa/data/sampler.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

TEST(CountWindows, WindowsShareOneBoundaryToken) {
  EXPECT_EQ(count_windows(129, 128), 1u);  // 128 inputs + 1 target
  EXPECT_EQ(count_windows(128, 128), 0u);
  EXPECT_EQ(count_windows(257, 128), 2u);
  EXPECT_EQ(count_windows(1001, 10), 100u);
}

TEST(TrainWindowSampler, AnEpochDrawsEveryWindowOnceThenReshuffles) {
  TrainWindowSampler sampler(/*n_tokens=*/1001, /*seq_len=*/10, /*seed=*/7);  // 100 windows
  ASSERT_EQ(sampler.num_windows(), 100u);
  std::vector<std::uint64_t> first, second;
  for (int step = 0; step < 25; ++step) {  // 25 steps of 4 = one epoch
    for (auto start : sampler.batch_starts(step, 4)) first.push_back(start);
  }
  for (int step = 25; step < 50; ++step) {
    for (auto start : sampler.batch_starts(step, 4)) second.push_back(start);
  }
  std::vector<std::uint64_t> all(100);
  for (std::uint64_t w = 0; w < 100; ++w) all[w] = w * 10;  // window w starts at w·seq_len
  auto sorted = [](std::vector<std::uint64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(first), all);   // without replacement
  EXPECT_EQ(sorted(second), all);  // the next epoch too
  EXPECT_NE(first, second);        // in another order
  EXPECT_NE(first, all);           // shuffled at all
}

TEST(TrainWindowSampler, ABatchDependsOnSeedAndStepOnly) {
  TrainWindowSampler a(5001, 16, 3), b(5001, 16, 3), other_seed(5001, 16, 4);
  const auto late = a.batch_starts(400, 8);  // a far step first: no state carried from earlier steps
  for (int step = 0; step < 10; ++step) b.batch_starts(step, 8);
  EXPECT_EQ(b.batch_starts(400, 8), late);
  EXPECT_EQ(a.batch_starts(3, 8), b.batch_starts(3, 8));
  EXPECT_NE(other_seed.batch_starts(3, 8), a.batch_starts(3, 8));
}

TEST(TrainWindowSampler, MoreWindowsThanThePermutationHoldsAreRefused) {
  const std::uint64_t limit = 4294967295ull;                 // windows a 32-bit index reaches
  EXPECT_NO_THROW(TrainWindowSampler(limit * 8 + 1, 8, 1));  // exactly the limit: no memory until a draw
  try {
    TrainWindowSampler(limit * 8 + 9, 8, 1);
    FAIL() << "one window over the limit was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("4294967296 windows, over the sampler's 4294967295"),
              std::string::npos)
        << e.what();
  }
}

TEST(EvenlySpacedWindows, StartsAtFloorOfKTimesNOverCount) {
  // 10 windows of 4 tokens, 3 wanted: k·10/3 = 0, 3, 6 -> token offsets 0, 12, 24.
  EXPECT_EQ(evenly_spaced_windows(41, 4, 3), (std::vector<std::uint64_t>{0, 12, 24}));
  // 7 windows, 4 wanted: 0, 1 (7/4), 3 (14/4), 5 (21/4).
  EXPECT_EQ(evenly_spaced_windows(29, 4, 4), (std::vector<std::uint64_t>{0, 4, 12, 20}));
  // More wanted than there are: every window once.
  EXPECT_EQ(evenly_spaced_windows(13, 4, 100), (std::vector<std::uint64_t>{0, 4, 8}));
  EXPECT_TRUE(evenly_spaced_windows(13, 4, 0).empty());
  EXPECT_TRUE(evenly_spaced_windows(3, 4, 5).empty());  // no window at all
  // 2^45 + 5 windows, 2^20 wanted: k·n reaches 2^65 and overflowed 64 bits; each start is still
  // floor(k·n/count)·seq_len, computed here in 128 bits.
  const std::uint64_t n = (1ull << 45) + 5, count = 1ull << 20;
  const auto starts = evenly_spaced_windows(n * 2 + 1, 2, count);
  ASSERT_EQ(starts.size(), count);
  for (std::uint64_t k : {std::uint64_t{1}, std::uint64_t{12345}, count / 2 + 1, count - 1}) {
    const auto expected = static_cast<std::uint64_t>(static_cast<unsigned __int128>(k) * n / count) * 2;
    EXPECT_EQ(starts[k], expected) << "k=" << k;
  }
  EXPECT_EQ(starts[count - 1], (((count - 1) << 25) + 4) * 2);  // by hand: k·2^25 + floor(5k/2^20)
}

}  // namespace
}  // namespace xsa
