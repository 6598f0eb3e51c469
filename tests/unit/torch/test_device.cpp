// runtime.device (src/xsa/model/device.h): cpu always, cuda refused with one line where this LibTorch build
// sees no CUDA device. The placement itself (model->to, batches, tables) cannot run off the CPU here:
// Debian's LibTorch has no CUDA, and LibTorch 1.13's Module::to refuses the meta device (set_data between a
// CPU and a meta tensor), so the model cannot be moved to a storage-less device either (docs/ARCHITECTURE.md
// "Devices").
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/types.h>

#include <string>

#include "xsa/model/device.h"
#include "xsa/util/error.h"

namespace xsa {
namespace {

TEST(RuntimeDevice, CpuIsTheDefaultAndAlwaysUsable) {
  Config cfg;
  EXPECT_EQ(cfg.runtime.device, DeviceKind::kCpu);
  EXPECT_EQ(torch_device(cfg.runtime.device), torch::Device(torch::kCPU));
  EXPECT_NO_THROW(require_device_usable(cfg, 4));
}

std::string refusal(const Config& cfg, int ranks) {
  try {
    require_device_usable(cfg, ranks);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RuntimeDevice, CudaIsRefusedWithOneLineExactlyWhereThisBuildHasNone) {
  Config cfg;
  cfg.runtime.device = DeviceKind::kCuda;
  const std::string why = refusal(cfg, 1);
  if (torch::cuda::is_available()) {
    EXPECT_EQ(why, "");
    cfg.runtime.precision = PrecisionRequest::kBf16;  // CPU autocast only
    EXPECT_NE(refusal(cfg, 1).find("runtime.precision: bf16"), std::string::npos);
    cfg.runtime.precision = PrecisionRequest::kFp32;
    EXPECT_NE(refusal(cfg, 2).find("2 data-parallel ranks"), std::string::npos);  // Gloo on CPU tensors
  } else {
    EXPECT_NE(why.find("runtime.device: cuda, but this LibTorch build"), std::string::npos) << why;
    EXPECT_NE(why.find("allowed here: cpu"), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace xsa
