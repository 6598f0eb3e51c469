#pragma once
// Gradients as views of communication buckets, each bucket summed over the data-parallel ranks as soon as its
// gradients are final during the backward pass (docs/guide.md "Data-parallel ranks", docs/ARCHITECTURE.md
// "Training"), as PyTorch's DDP reducer does with gradient_as_bucket_view. Knows autograd, not c10d: the sum
// is the StartSum it is given (RankGroup::start_sum in training, a stand-in in the tests).
#include <torch/types.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xsa/train/distributed.h"

namespace xsa {

// Parameters in buckets of at most cap_bytes (a parameter larger than the cap gets a bucket of its own), the
// first bucket capped at min(first_cap_bytes, cap_bytes) so the first sum starts early (DDP's 1 MiB rule).
// `order` is the order parameters are expected to become ready in: the reverse of the module's registration
// order, since backward visits the last layers first. A bucket never mixes dtypes. Returns the parameter
// indices of each bucket, in launch order.
std::vector<std::vector<std::size_t>> assign_buckets(const std::vector<torch::Tensor>& params,
                                                     std::int64_t cap_bytes, std::int64_t first_cap_bytes);

class GradientBuckets {
 public:
  // Starts summing one bucket's flat buffer over the ranks, in place; returns at once.
  using StartSum = std::function<std::unique_ptr<PendingSum>(torch::Tensor flat, std::size_t bucket)>;

  // `params`: leaf tensors that require grad, in registration order (model->parameters()). Registers a post
  // hook on each parameter's gradient accumulator (it runs once per backward, after the gradient of every use
  // has been added in).
  GradientBuckets(std::vector<torch::Tensor> params, std::int64_t cap_bytes, std::int64_t first_cap_bytes,
                  StartSum start_sum);
  ~GradientBuckets();
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  // Before the forward pass: every gradient is again a zeroed view of its bucket (zero_grad may have reset
  // them), no bucket is ready. Autograd then adds each parameter's gradient into its view in place (0 + g = g
  // exactly: the values are those of fresh gradients).
  void begin_step();

  // After backward: starts the buckets not started yet (those holding a parameter that got no gradient),
  // waits for every sum and divides by `world`, so the gradients are the mean over the ranks. A parameter
  // that got no gradient this step is left without one (undefined), as one process leaves it, so the
  // optimizer skips it on every rank alike. Rethrows a failure of a start inside the backward pass; a wait's
  // RuntimeFailure passes.
  void finish(int world);

  std::size_t bucket_count() const { return buckets_.size(); }
  // The parameter indices of bucket b, in its buffer's order.
  const std::vector<std::size_t>& bucket_params(std::size_t b) const { return buckets_[b].params; }
  // Buckets started before finish() in the last step (the ones whose sum overlapped the backward pass).
  std::size_t started_during_backward() const { return started_during_backward_; }

 private:
  struct Bucket {
    std::vector<std::size_t> params;
    torch::Tensor flat;                // (numel,) the bucket's buffer
    std::vector<torch::Tensor> views;  // views[i] is params[i]'s gradient, a view of flat
    std::size_t pending = 0;           // parameters whose gradient is not final yet this step
    std::unique_ptr<PendingSum> sum;   // the sum in flight
  };
  struct State;  // what the hooks see; outlives this object if a hook does

  void mark_ready(std::size_t param);
  void start_ready_buckets();  // in launch order: every rank starts the same sums in the same order

  std::vector<torch::Tensor> params_;
  std::vector<Bucket> buckets_;
  std::vector<std::size_t> bucket_of_;  // parameter index -> bucket
  std::vector<char> ready_;             // parameter index -> its gradient arrived this step
  std::size_t next_to_start_ = 0;
  std::size_t started_during_backward_ = 0;
  std::exception_ptr hook_failure_;
  StartSum start_sum_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // kept alive: they hold the hooks
  std::shared_ptr<State> state_;
};

}  // namespace xsa
