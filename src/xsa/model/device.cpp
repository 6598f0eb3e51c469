#include "xsa/model/device.h"

#include <torch/cuda.h>
#include <torch/version.h>

#include <stdexcept>
#include <string>

#include "xsa/util/choice.h"
#include "xsa/util/error.h"

namespace xsa {

c10::Device torch_device(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return c10::kCPU;
    case DeviceKind::kCuda:
      return c10::kCUDA;
  }
  throw std::logic_error("torch_device: unknown DeviceKind");
}

void require_device_usable(const Config& cfg, int ranks) {
  const DeviceKind device = cfg.runtime.device;
  switch (device) {
    case DeviceKind::kCpu:
      return;
    case DeviceKind::kCuda:
      if (!torch::cuda::is_available())
        throw InputError("runtime.device: cuda, but this LibTorch build (" TORCH_VERSION
                         ") sees no CUDA device; allowed here: cpu");
      if (cfg.runtime.precision != PrecisionRequest::kFp32)
        throw InputError(std::string("runtime.device: cuda with runtime.precision: ") +
                         choice_name(cfg.runtime.precision) +
                         ": mixed precision is CPU autocast only so far; use runtime.precision: fp32");
      if (ranks > 1)
        throw InputError("runtime.device: cuda with " + std::to_string(ranks) +
                         " data-parallel ranks: the ranks all-reduce CPU tensors over Gloo; use one rank");
      return;
  }
}

}  // namespace xsa
