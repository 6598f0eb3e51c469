#pragma once
// Data-parallel ranks (docs/guide.md "Scale-out", docs/ARCHITECTURE.md "Training"): one run's global batch
// split over W processes, on PyTorch's c10d engine: rendezvous through a TCPStore served by rank 0,
// collectives through ProcessGroupGloo. This header keeps c10d (and gloo) out of its includers: only
// distributed.cpp names them.
#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "xsa/train/ranks.h"

namespace xsa {

// A sum over the ranks in flight (RankGroup::start_sum).
class PendingSum {
 public:
  virtual ~PendingSum() = default;
  // Returns once the sum is complete on this rank; RuntimeFailure (as average's) when a rank died or did not
  // answer within the timeout.
  virtual void wait() = 0;
};

// One run's collectives over its own process group (a PrefixStore of the shared store), so the concurrently
// trained variants never interleave. Every failure (a dead peer, the timeout) is a RuntimeFailure naming this
// rank, the operation and the cause.
class RankGroup {
 public:
  virtual ~RankGroup() = default;
  // Sums the tensors and `extras` over the ranks in one all-reduce, then divides the tensors by W (in place):
  // gradients become the mean over the global batch; extras stay sums.
  virtual void average(std::vector<torch::Tensor>& tensors, std::vector<double>& extras,
                       const std::string& what) = 0;
  // Starts summing `flat` over the ranks in place and returns at once (Gloo sums on its own thread); `flat`
  // must stay unchanged until the PendingSum's wait() returns. Every rank starts the same sums in the same
  // order.
  virtual std::unique_ptr<PendingSum> start_sum(torch::Tensor flat, const std::string& what) = 0;
  virtual void barrier(const std::string& what) = 0;
};

class Distributed {
 public:
  // Rendezvous: rank 0 serves the store at master_addr:master_port, the others connect; each waits at most
  // timeout_s for the others. RuntimeFailure (one line: this rank, the address, the cause) otherwise.
  static std::unique_ptr<Distributed> connect(const RankInfo& info, int timeout_s);
  virtual ~Distributed() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Every rank publishes `value` (a hash) under `what`; RuntimeFailure on every rank, naming the rank whose
  // value differs from rank 0's, if they are not all equal.
  virtual void check_same(const std::string& what, const std::string& value) = 0;
  // A process group of its own for `name` (every rank creates the same names in the same order).
  virtual std::unique_ptr<RankGroup> group(const std::string& name) = 0;
};

}  // namespace xsa
