#include "xsa/train/gradient_buckets.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace xsa {

std::vector<std::vector<std::size_t>> assign_buckets(const std::vector<torch::Tensor>& params,
                                                     std::int64_t cap_bytes, std::int64_t first_cap_bytes) {
  std::vector<std::vector<std::size_t>> buckets;
  std::int64_t bytes = 0;
  for (std::size_t k = params.size(); k-- > 0;) {  // reverse registration order: the order backward ends them
    const auto& p = params[k];
    const std::int64_t size = p.numel() * static_cast<std::int64_t>(p.element_size());
    const std::int64_t cap = buckets.size() == 1 ? std::min(first_cap_bytes, cap_bytes) : cap_bytes;
    const bool fits = !buckets.empty() && bytes + size <= cap &&
                      params[buckets.back().front()].scalar_type() == p.scalar_type();
    if (!fits) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(k);
    bytes += size;
  }
  return buckets;
}

struct GradientBuckets::State {
  std::mutex mu;
  GradientBuckets* owner = nullptr;  // null once the buckets are gone: a late hook does nothing
};

namespace {

// Runs after a parameter's AccumulateGrad node, i.e. once its gradient is final for this backward.
class ReadyHook final : public torch::autograd::FunctionPostHook {
 public:
  ReadyHook(std::function<void()> on_ready) : on_ready_(std::move(on_ready)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    on_ready_();
    return outputs;
  }

 private:
  std::function<void()> on_ready_;
};

}  // namespace

GradientBuckets::GradientBuckets(std::vector<torch::Tensor> params, std::int64_t cap_bytes,
                                 std::int64_t first_cap_bytes, StartSum start_sum)
    : params_(std::move(params)), start_sum_(std::move(start_sum)), state_(std::make_shared<State>()) {
  for (const auto& p : params_) {
    if (!p.is_leaf() || !p.requires_grad() || !p.is_contiguous())
      throw std::logic_error("GradientBuckets: every parameter must be a contiguous leaf that requires grad");
  }
  bucket_of_.resize(params_.size());
  ready_.assign(params_.size(), 0);
  for (auto& indices : assign_buckets(params_, cap_bytes, first_cap_bytes)) {
    Bucket b;
    std::int64_t numel = 0;
    for (std::size_t k : indices) numel += params_[k].numel();
    const auto& first = params_[indices.front()];
    b.flat = torch::zeros({numel}, first.options().requires_grad(false));  // (numel,)
    std::int64_t offset = 0;
    for (std::size_t k : indices) {
      const auto n = params_[k].numel();
      b.views.push_back(b.flat.narrow(0, offset, n).view(params_[k].sizes()));  // the parameter's shape
      bucket_of_[k] = buckets_.size();
      offset += n;
    }
    b.params = std::move(indices);
    buckets_.push_back(std::move(b));
  }
  state_->owner = this;
  for (std::size_t k = 0; k < params_.size(); ++k) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params_[k]);
    std::weak_ptr<State> weak = state_;
    accumulator->add_post_hook(std::make_unique<ReadyHook>([weak, k] {
      auto state = weak.lock();
      if (!state) return;
      std::lock_guard<std::mutex> lock(state->mu);
      if (state->owner != nullptr) state->owner->mark_ready(k);
    }));
    accumulators_.push_back(std::move(accumulator));
  }
}

GradientBuckets::~GradientBuckets() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->owner = nullptr;
  // Sums still in flight (an exception ended the step) are dropped with their PendingSum: c10d's work objects
  // end with their process group, within its timeout.
}

void GradientBuckets::begin_step() {
  std::lock_guard<std::mutex> lock(state_->mu);
  for (auto& b : buckets_) {
    if (b.sum)
      throw std::logic_error("GradientBuckets::begin_step: a sum of the last step was never waited for");
    b.flat.zero_();
    b.pending = b.params.size();
    for (std::size_t i = 0; i < b.params.size(); ++i) params_[b.params[i]].mutable_grad() = b.views[i];
  }
  ready_.assign(params_.size(), 0);
  next_to_start_ = 0;
  started_during_backward_ = 0;
  hook_failure_ = nullptr;
}

void GradientBuckets::mark_ready(std::size_t param) {
  if (ready_[param] || hook_failure_) return;
  ready_[param] = 1;
  --buckets_[bucket_of_[param]].pending;
  try {
    start_ready_buckets();
  } catch (...) {
    hook_failure_ = std::current_exception();  // rethrown by finish(), outside autograd's engine
  }
}

void GradientBuckets::start_ready_buckets() {
  while (next_to_start_ < buckets_.size() && buckets_[next_to_start_].pending == 0) {
    auto& b = buckets_[next_to_start_];
    b.sum = start_sum_(b.flat, next_to_start_);
    ++next_to_start_;
    ++started_during_backward_;
  }
}

void GradientBuckets::finish(int world) {
  std::unique_lock<std::mutex> lock(state_->mu);
  if (hook_failure_) {
    for (auto& b : buckets_) b.sum.reset();
    std::rethrow_exception(hook_failure_);
  }
  for (; next_to_start_ < buckets_.size(); ++next_to_start_) {
    auto& b = buckets_[next_to_start_];
    b.sum = start_sum_(b.flat, next_to_start_);
  }
  lock.unlock();
  try {
    for (auto& b : buckets_) {
      b.sum->wait();
      b.sum.reset();
      b.flat.div_(world);
    }
  } catch (...) {
    for (auto& b : buckets_) b.sum.reset();
    throw;
  }
  for (std::size_t k = 0; k < params_.size(); ++k)
    if (!ready_[k]) params_[k].mutable_grad().reset();  // no gradient this step: none, as in one process
}

}  // namespace xsa
