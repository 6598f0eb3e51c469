#include "xsa/train/rank_sync.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <utility>

namespace xsa {

namespace {
std::int64_t mib_bytes(double mib) {
  return static_cast<std::int64_t>(std::llround(mib * 1024.0 * 1024.0));
}
}  // namespace

RankSync::RankSync(RankGroup& group, int world, std::vector<torch::Tensor> params, double bucket_mib,
                   std::string run, std::function<bool()> stop_requested)
    : group_(group),
      world_(world),
      params_(std::move(params)),
      run_(std::move(run)),
      stop_requested_(std::move(stop_requested)) {
  if (bucket_mib > 0) {
    buckets_ = std::make_unique<GradientBuckets>(
        params_, mib_bytes(bucket_mib), mib_bytes(kFirstBucketMib),
        [this](torch::Tensor flat, std::size_t bucket) {
          return group_.start_sum(std::move(flat), what() + " bucket " + std::to_string(bucket));
        });
  }
}

std::string RankSync::what() const {
  return "run '" + run_ + "' step " + std::to_string(step_number_);
}

void RankSync::begin_step(int step_number) {
  step_number_ = step_number;
  if (buckets_) {
    buckets_->begin_step();
  } else {
    for (auto& p : params_) p.mutable_grad().reset();  // undefined: backward's gradients are fresh tensors
  }
}

void RankSync::after_forward(double loss) {
  loss_ = loss;
  stop_ = stop_requested_();
  if (!buckets_) return;
  // Started before backward's bucket sums, so it is first in Gloo's queue on every rank alike.
  extras_ = torch::tensor({loss_, stop_ ? 1.0 : 0.0}, torch::dtype(torch::kFloat64));  // (2,)
  extras_sum_ = group_.start_sum(extras_, what() + " (loss)");
}

double RankSync::after_backward() {
  const auto t0 = std::chrono::steady_clock::now();
  double loss_sum = 0;
  if (buckets_) {
    buckets_->finish(world_);
    extras_sum_->wait();
    extras_sum_.reset();
    loss_sum = extras_[0].item<double>();
    stop_agreed_ = extras_[1].item<double>() > 0;
  } else {
    std::vector<torch::Tensor> grads;
    for (const auto& p : params_)
      if (p.grad().defined()) grads.push_back(p.grad());
    std::vector<double> sums = {loss_, stop_ ? 1.0 : 0.0};
    group_.average(grads, sums, what());
    loss_sum = sums[0];
    stop_agreed_ = sums[1] > 0;
  }
  wait_ms_.push_back(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return loss_sum / world_;
}

}  // namespace xsa
