#pragma once
// The gradient sync of one data-parallel run (docs/guide.md "Data-parallel ranks"): with
// runtime.dist_bucket_mb > 0 the gradients are views of buckets summed over the ranks while backward runs
// (gradient_buckets.h), the step waiting only for the sums still in flight; with 0, one all-reduce of every
// gradient after backward. Either way the loss and the stop request travel with the step's sums, so every
// rank stops at the same step.
#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xsa/train/distributed.h"
#include "xsa/train/gradient_buckets.h"
#include "xsa/train/step.h"

namespace xsa {

// The cap of the first bucket in MiB (DDP's): it fills first, so its sum starts early in the backward pass.
constexpr double kFirstBucketMib = 1.0;

class RankSync final : public GradientSync {
 public:
  // `params`: the model's parameters in registration order; `stop_requested`: this rank's stop request
  // (SIGTERM).
  RankSync(RankGroup& group, int world, std::vector<torch::Tensor> params, double bucket_mib, std::string run,
           std::function<bool()> stop_requested);

  void begin_step(int step_number) override;
  void after_forward(double loss) override;
  double after_backward() override;

  // Some rank asked to stop (carried by the last step's sums).
  bool stop_agreed() const { return stop_agreed_; }
  // Per step: how long this rank waited after backward for the sums to complete (with buckets, only what the
  // backward pass did not hide; without, the whole all-reduce), the wait for slower ranks included.
  const std::vector<double>& wait_ms() const { return wait_ms_; }
  // The bucket layout (empty without buckets).
  const GradientBuckets* buckets() const { return buckets_.get(); }

 private:
  std::string what() const;

  RankGroup& group_;
  int world_;
  std::vector<torch::Tensor> params_;
  std::string run_;
  std::function<bool()> stop_requested_;
  std::unique_ptr<GradientBuckets> buckets_;  // null with dist_bucket_mb 0
  int step_number_ = 0;
  double loss_ = 0;
  bool stop_ = false;
  torch::Tensor extras_;  // (2,) float64: loss, stop request (buckets only)
  std::unique_ptr<PendingSum> extras_sum_;
  bool stop_agreed_ = false;
  std::vector<double> wait_ms_;
};

}  // namespace xsa
