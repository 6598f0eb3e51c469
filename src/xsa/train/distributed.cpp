#include "xsa/train/distributed.h"

#include <c10/util/Logging.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <utility>
#include <vector>

#include "xsa/util/error.h"

namespace xsa {

namespace {

// The first line of an exception's text (LibTorch and gloo append backtraces).
std::string first_line(const std::exception& e) {
  std::string what = e.what();
  if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
  return what;
}

std::vector<std::uint8_t> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

// LibTorch 2.4 added TCPStoreOptions::useLibUV (default true; whether libuv is compiled in depends on the
// build): ask for the classic server wherever the option exists, so every LibTorch runs the same store.
// Chosen by the option's presence (SFINAE), not by a version number.
template <typename Options>
auto use_classic_store(Options& o, int) -> decltype(o.useLibUV = false, void()) {
  o.useLibUV = false;
}
template <typename Options>
void use_classic_store(Options&, long) {}

std::string short_hash(const std::string& h) {
  return h.substr(0, 12);
}

// The network interface Gloo's sockets use: GLOO_SOCKET_IFNAME's (PyTorch's variable) where it is set, e.g.
// ranks in network namespaces (docs/guide.md "Data-parallel ranks"); loopback for a master on 127.0.0.0/8;
// else the interface this host's name resolves to (c10d's default).
std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_addr) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0') {
    try {
      return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
    } catch (const std::exception& e) {
      throw RuntimeFailure("GLOO_SOCKET_IFNAME = '" + std::string(ifname) +
                           "': no usable network interface of that name (" + first_line(e) + ")");
    }
  }
  const bool loopback = master_addr == "localhost" || master_addr.rfind("127.", 0) == 0;
  return loopback ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                  : c10d::ProcessGroupGloo::createDefaultDevice();
}

class GlooPendingSum final : public PendingSum {
 public:
  explicit GlooPendingSum(std::function<void()> wait) : wait_(std::move(wait)) {}
  void wait() override { wait_(); }

 private:
  std::function<void()> wait_;
};

class GlooGroup final : public RankGroup {
 public:
  GlooGroup(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg, int world, int timeout_s)
      : pg_(std::move(pg)), world_(world), timeout_s_(timeout_s) {}
  GlooGroup(const GlooGroup&) = delete;
  GlooGroup& operator=(const GlooGroup&) = delete;

  ~GlooGroup() override {
    // After a failed collective the group is left to the process's exit: ProcessGroupGloo's destructor waits
    // for every queued all-reduce, and with a silent peer each of them (a step's later buckets) would wait
    // out the whole timeout in turn.
    if (failed_) (void)pg_.release();
  }

  void average(std::vector<torch::Tensor>& tensors, std::vector<double>& extras,
               const std::string& what) override {
    std::vector<torch::Tensor> parts;
    const auto dtype = tensors.empty() ? torch::kFloat32 : tensors.front().scalar_type();
    for (const auto& t : tensors) parts.push_back(t.reshape(-1));
    parts.push_back(torch::tensor(extras, torch::dtype(torch::kFloat64)).to(dtype));
    std::vector<at::Tensor> io{torch::cat(parts)};
    guarded("all-reduce of " + what, [&] { pg_->allreduce(io)->wait(); });
    const torch::Tensor& flat = io.front();
    std::int64_t offset = 0;
    for (auto& t : tensors) {
      const std::int64_t n = t.numel();
      t.copy_(flat.narrow(0, offset, n).view(t.sizes()));
      t.div_(world_);
      offset += n;
    }
    auto sums = flat.narrow(0, offset, static_cast<std::int64_t>(extras.size())).to(torch::kFloat64);
    for (std::size_t i = 0; i < extras.size(); ++i)
      extras[i] = sums[static_cast<std::int64_t>(i)].item<double>();
  }

  std::unique_ptr<PendingSum> start_sum(torch::Tensor flat, const std::string& what) override {
    std::vector<at::Tensor> io{std::move(flat)};
    decltype(pg_->allreduce(io)) work;
    guarded("all-reduce of " + what, [&] { work = pg_->allreduce(io); });
    return std::make_unique<GlooPendingSum>(
        [this, work, what] { guarded("all-reduce of " + what, [&] { work->wait(); }); });
  }

  void barrier(const std::string& what) override {
    guarded("barrier " + what, [&] { pg_->barrier()->wait(); });
  }

 private:
  void guarded(const std::string& what, const std::function<void()>& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      failed_ = true;
      // The program name already names this rank (xsa-train rank R: ...).
      throw RuntimeFailure(what + " failed: another rank died or " +
                           "did not answer within runtime.dist_timeout_s = " + std::to_string(timeout_s_) +
                           " s (" + first_line(e) + ")");
    }
  }

  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
  int world_, timeout_s_;
  std::atomic<bool> failed_{false};  // a collective failed (set by the waiting thread)
};

class GlooDistributed final : public Distributed {
 public:
  GlooDistributed(const RankInfo& info, int timeout_s) : info_(info), timeout_s_(timeout_s) {
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<std::uint16_t>(info.master_port);
    opts.isServer = info.rank == 0;
    opts.numWorkers = static_cast<std::size_t>(info.world_size);
    opts.waitWorkers = true;  // the server returns once every rank has connected, or throws at the timeout
    opts.timeout = std::chrono::seconds(timeout_s);
    use_classic_store(opts, 0);
    const std::string where = info.master_addr + ":" + std::to_string(info.master_port);
    // On its own thread with a deadline: a client that reached a foreign program listening on the port would
    // wait for its answer forever (the handshake has no timeout in LibTorch 1.13).
    auto promise = std::make_shared<std::promise<c10::intrusive_ptr<c10d::Store>>>();
    auto future = promise->get_future();
    std::thread([promise, addr = info.master_addr, opts] {
      try {
        promise->set_value(c10::make_intrusive<c10d::TCPStore>(addr, opts));
      } catch (...) {
        promise->set_exception(std::current_exception());
      }
    }).detach();
    if (future.wait_for(std::chrono::seconds(timeout_s + 5)) != std::future_status::ready) {
      // LibTorch 2.6's client keeps retrying an unreachable master past its own timeout: it ends here too.
      throw RuntimeFailure((info.rank == 0 ? "cannot serve the rendezvous at " + where
                                           : "cannot reach the master at " + where) +
                           ": no answer within runtime.dist_timeout_s = " + std::to_string(timeout_s) +
                           " s + 5 s (the master not running, unreachable or its name not resolving, or "
                           "another program holding the "
                           "port)");
    }
    try {
      store_ = future.get();
    } catch (const std::exception& e) {
      throw RuntimeFailure((info.rank == 0 ? "cannot serve the rendezvous at " + where
                                           : "cannot reach the master at " + where) +
                           " within runtime.dist_timeout_s = " + std::to_string(timeout_s) + " s (" +
                           first_line(e) + ")");
    }
  }

  int rank() const override { return info_.rank; }
  int world_size() const override { return info_.world_size; }

  void check_same(const std::string& what, const std::string& value) override {
    const std::string base = "check/" + what + "/";
    std::string problem;
    try {
      store_->set(base + std::to_string(info_.rank), bytes(value));
      for (int r = 0; r < info_.world_size && problem.empty(); ++r) {
        if (r == info_.rank || (info_.rank != 0 && r != 0)) continue;  // rank 0 checks all, the others rank 0
        auto got = store_->get(base + std::to_string(r));
        const std::string other(got.begin(), got.end());
        if (other != value) {
          problem = "rank " + std::to_string(r) + " has another " + what + " (" + short_hash(other) +
                    " there, " + short_hash(value) + " here): every rank must run the same " + what;
        }
      }
      // Rank 0 serves the store: it waits until every rank has read what it needs before it may exit.
      store_->set(base + "read/" + std::to_string(info_.rank), bytes("1"));
      if (info_.rank == 0) {
        std::vector<std::string> keys;
        for (int r = 1; r < info_.world_size; ++r) keys.push_back(base + "read/" + std::to_string(r));
        store_->wait(keys);
      }
    } catch (const std::exception& e) {
      throw RuntimeFailure("comparing the " + what + " with the other ranks failed: a rank died or " +
                           "did not answer within runtime.dist_timeout_s = " + std::to_string(timeout_s_) +
                           " s (" + first_line(e) + ")");
    }
    if (!problem.empty()) throw RuntimeFailure(problem);
  }

  std::unique_ptr<RankGroup> group(const std::string& name) override {
    auto device = gloo_device(info_.master_addr);  // its own one-line error
    try {
      auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(timeout_s_));
      options->devices.push_back(device);
      options->threads = 1;
      auto store = c10::make_intrusive<c10d::PrefixStore>("group/" + name, store_);
      auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, info_.rank, info_.world_size, options);
      return std::make_unique<GlooGroup>(std::move(pg), info_.world_size, timeout_s_);
    } catch (const std::exception& e) {
      throw RuntimeFailure("cannot connect the process group of '" + name +
                           "' within runtime.dist_timeout_s = " + std::to_string(timeout_s_) + " s (" +
                           first_line(e) + ")");
    }
  }

 private:
  RankInfo info_;
  int timeout_s_;
  c10::intrusive_ptr<c10d::Store> store_;
};

}  // namespace

std::unique_ptr<Distributed> Distributed::connect(const RankInfo& info, int timeout_s) {
  // c10d and gloo log their errors through glog as well: the one line a failing rank prints is ours.
  FLAGS_caffe2_log_level = 3;  // FATAL only
  c10::UpdateLoggingLevelsFromFlags();
  return std::make_unique<GlooDistributed>(info, timeout_s);
}

}  // namespace xsa
