#pragma once
// runtime.device (docs/ARCHITECTURE.md "Devices"): where the model and its batches live. The weights are
// drawn on the CPU and moved (every device starts from the same weights); the fused attention and XSA kernels
// run on the CPU and a composite path of LibTorch operations anywhere else.
#include <c10/core/Device.h>  // not torch/types.h: xsa-train's command line includes this

#include "xsa/config/config.h"

namespace xsa {

c10::Device torch_device(DeviceKind kind);

// Before any work: InputError (one line) when `cfg` asks for a device this LibTorch build or machine lacks
// (cuda without CUDA), or pairs it with what runs on the CPU only so far (bf16 autocast, data-parallel ranks
// over Gloo). `ranks` is the number of data-parallel processes of the run.
void require_device_usable(const Config& cfg, int ranks);

}  // namespace xsa
