// Gradients as views of communication buckets (src/xsa/train/gradient_buckets.h): the layout by hand, and on
// the model: each bucket starts while backward still runs, holding final gradients, and after the sums the
// gradients are exactly the mean of two ranks' gradients computed without buckets.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tiny_model.h"
#include "xsa/config/config.h"
#include "xsa/config/variant.h"
#include "xsa/model/gpt.h"
#include "xsa/train/gradient_buckets.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

// A sum whose other rank is simulated: wait() runs `finish` (adds the other rank's part).
class FakeSum final : public PendingSum {
 public:
  explicit FakeSum(std::function<void()> finish) : finish_(std::move(finish)) {}
  void wait() override { finish_(); }

 private:
  std::function<void()> finish_;
};

torch::Tensor float_parameter(std::int64_t n) {
  return torch::zeros({n}, torch::requires_grad());
}

TEST(AssignBuckets, ReverseOrderFirstCapAndOversizedParameters) {
  // float32: 400, 1200, 200, 4000 bytes in registration order; cap 1600, first bucket 800.
  std::vector<torch::Tensor> p = {float_parameter(100), float_parameter(300), float_parameter(50),
                                  float_parameter(1000)};
  // Backward order: p3 (4000 > 800, alone), p2 (200; the first bucket is full) opens bucket 1, p1 (1400 <=
  // 1600) joins it, p0 (1800 > 1600) opens bucket 2.
  const std::vector<std::vector<std::size_t>> want = {{3}, {2, 1}, {0}};
  EXPECT_EQ(assign_buckets(p, 1600, 800), want);
  // Every parameter in one bucket when the cap holds them all, the first cap included.
  EXPECT_EQ(assign_buckets(p, 1 << 20, 1 << 20), (std::vector<std::vector<std::size_t>>{{3, 2, 1, 0}}));
  // A dtype change closes a bucket.
  std::vector<torch::Tensor> mixed = {float_parameter(10), torch::zeros({10}, torch::dtype(torch::kFloat64)),
                                      float_parameter(10)};
  EXPECT_EQ(assign_buckets(mixed, 1 << 20, 1 << 20), (std::vector<std::vector<std::size_t>>{{2}, {1}, {0}}));
}

struct BucketTestBatch {
  torch::Tensor x, y;  // (B, T) each
};

BucketTestBatch bucket_test_batch(std::uint64_t seed, std::int64_t vocab) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto tokens = torch::randint(vocab, {2, 9}, gen, torch::dtype(torch::kLong));  // (B, T + 1)
  return {tokens.narrow(1, 0, 8), tokens.narrow(1, 1, 8)};
}

class GradientBucketsOnTheModel : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(0);
    VariantSpec learned;  // λ parameters of its own beside the weights
    learned.kind = VariantSpec::Kind::kLearned;
    model_ = Gpt(test_fixtures::tiny_model(), AttentionConfig{}, learned, kVocab, 8);
    model_->init_weights(at::make_generator<at::CPUGeneratorImpl>(3));
    // An extra parameter no loss uses, registered first: it lands in the last bucket (started in finish).
    params_.push_back(torch::zeros({5}, torch::requires_grad()));
    for (const auto& p : model_->parameters()) params_.push_back(p);
  }

  // This rank's gradients of a plain backward (no buckets), cloned; undefined where there is none.
  std::vector<torch::Tensor> plain_gradients(const BucketTestBatch& b) {
    for (auto& p : params_) p.mutable_grad().reset();
    model_->forward_loss(b.x, b.y).backward();
    std::vector<torch::Tensor> g;
    for (const auto& p : params_) g.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
    for (auto& p : params_) p.mutable_grad().reset();
    return g;
  }

  static constexpr std::int64_t kVocab = 64;
  Gpt model_{nullptr};
  std::vector<torch::Tensor> params_;
};

TEST_F(GradientBucketsOnTheModel, SumsStartDuringBackwardAndGiveTheMeanOfTheRanks) {
  const BucketTestBatch mine = bucket_test_batch(11, kVocab), other = bucket_test_batch(12, kVocab);
  const auto g_mine = plain_gradients(mine), g_other = plain_gradients(other);

  struct Launch {
    std::size_t bucket;
    bool first_layer_untouched;           // the token embedding's gradient still zero: backward not done
    std::vector<torch::Tensor> at_start;  // the bucket's gradients when its sum started
  };
  std::vector<Launch> launches;
  std::unique_ptr<GradientBuckets> buckets;
  const std::size_t wte = 1;  // the model's first parameter (params_[0] is the unused one)
  auto start = [&](torch::Tensor flat, std::size_t bucket) -> std::unique_ptr<PendingSum> {
    Launch l{bucket, params_[wte].grad().abs().sum().item<double>() == 0.0, {}};
    for (std::size_t k : buckets->bucket_params(bucket)) l.at_start.push_back(params_[k].grad().clone());
    launches.push_back(std::move(l));
    // The other rank's part: its plain gradients laid out as this bucket's buffer (zeros where it has none).
    std::vector<torch::Tensor> parts;
    for (std::size_t k : buckets->bucket_params(bucket))
      parts.push_back(g_other[k].defined() ? g_other[k].reshape(-1) : torch::zeros({params_[k].numel()}));
    auto theirs = torch::cat(parts);  // (numel,)
    return std::make_unique<FakeSum>([flat, theirs]() mutable { flat.add_(theirs); });
  };
  buckets = std::make_unique<GradientBuckets>(params_, 16 * 1024, 4 * 1024, start);  // several buckets
  ASSERT_GE(buckets->bucket_count(), 3u);

  for (int step = 0; step < 2; ++step) {  // twice: the views come back after a step left a gradient undefined
    launches.clear();
    buckets->begin_step();
    model_->forward_loss(mine.x, mine.y).backward();
    // Every bucket but the last (it holds the unused parameter) started inside backward, in launch order.
    EXPECT_EQ(buckets->started_during_backward(), buckets->bucket_count() - 1);
    ASSERT_EQ(launches.size(), buckets->bucket_count() - 1);
    EXPECT_TRUE(launches.front().first_layer_untouched) << "the first bucket started only after backward";
    buckets->finish(2);
    ASSERT_EQ(launches.size(), buckets->bucket_count());
    for (std::size_t i = 0; i < launches.size(); ++i) {
      EXPECT_EQ(launches[i].bucket, i);
      const auto& ks = buckets->bucket_params(i);
      for (std::size_t j = 0; j < ks.size(); ++j) {  // the gradient was final when its sum started
        if (g_mine[ks[j]].defined()) {
          EXPECT_TRUE(torch::equal(launches[i].at_start[j], g_mine[ks[j]])) << "parameter " << ks[j];
        }
      }
    }
    for (std::size_t k = 0; k < params_.size(); ++k) {
      if (!g_mine[k].defined()) {
        EXPECT_FALSE(params_[k].grad().defined()) << "parameter " << k << " got no gradient: it keeps none";
        continue;
      }
      // Exactly what an all-reduce of two ranks then a division gives: (a + b) / 2, bit for bit.
      EXPECT_TRUE(torch::equal(params_[k].grad(), (g_mine[k] + g_other[k]).div(2))) << "parameter " << k;
    }
  }
  EXPECT_FALSE(g_mine[0].defined());  // the unused parameter really is unused
}

TEST_F(GradientBucketsOnTheModel, AFailedStartInsideBackwardIsThrownByFinish) {
  auto start = [&](torch::Tensor flat, std::size_t bucket) -> std::unique_ptr<PendingSum> {
    if (bucket == 1) throw RuntimeFailure("all-reduce of bucket 1 failed: peer gone");
    return std::make_unique<FakeSum>([flat] {});
  };
  GradientBuckets buckets(params_, 16 * 1024, 4 * 1024, start);
  buckets.begin_step();
  EXPECT_NO_THROW(
      model_->forward_loss(bucket_test_batch(1, kVocab).x, bucket_test_batch(1, kVocab).y).backward());
  try {
    buckets.finish(2);
    FAIL() << "finish did not throw";
  } catch (const RuntimeFailure& e) {
    EXPECT_EQ(std::string(e.what()), "all-reduce of bucket 1 failed: peer gone");
  }
}

TEST_F(GradientBucketsOnTheModel, AFailedWaitPassesAndTheNextStepStartsClean) {
  bool fail = true;
  auto start = [&](torch::Tensor, std::size_t) -> std::unique_ptr<PendingSum> {
    return std::make_unique<FakeSum>([&fail] {
      if (fail) throw RuntimeFailure("timeout");
    });
  };
  GradientBuckets buckets(params_, 16 * 1024, 4 * 1024, start);
  const BucketTestBatch b = bucket_test_batch(5, kVocab);
  buckets.begin_step();
  model_->forward_loss(b.x, b.y).backward();
  EXPECT_THROW(buckets.finish(2), RuntimeFailure);
  fail = false;
  buckets.begin_step();  // no sum of the failed step is left waiting
  model_->forward_loss(b.x, b.y).backward();
  EXPECT_NO_THROW(buckets.finish(1));
}

}  // namespace
}  // namespace xsa
