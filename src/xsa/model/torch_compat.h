#pragma once
// The one place where xsa's code differs between LibTorch versions (docs/guide.md "Platforms": tested on Debian 12's
// LibTorch 1.13.1 and Debian 13's 2.6). Everything else calls these names, never a version check.
//
// CPU autocast: LibTorch 2.4 replaced the per-device calls (is_cpu_enabled, set_cpu_enabled,
// get/set_autocast_cpu_dtype) by device-generic ones taking a DeviceType and deprecated the old ones; 2.6
// warns at run time on every deprecated call. The two spellings do the same thing (the old ones forward to
// the new), so which one is compiled in changes no number.
#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace xsa::torch_compat {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
inline bool cpu_autocast_enabled() {
  return at::autocast::is_autocast_enabled(at::kCPU);
}
inline void set_cpu_autocast_enabled(bool enabled) {
  at::autocast::set_autocast_enabled(at::kCPU, enabled);
}
inline at::ScalarType cpu_autocast_dtype() {
  return at::autocast::get_autocast_dtype(at::kCPU);
}
inline void set_cpu_autocast_dtype(at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(at::kCPU, dtype);
}
#else
inline bool cpu_autocast_enabled() {
  return at::autocast::is_cpu_enabled();
}
inline void set_cpu_autocast_enabled(bool enabled) {
  at::autocast::set_cpu_enabled(enabled);
}
inline at::ScalarType cpu_autocast_dtype() {
  return at::autocast::get_autocast_cpu_dtype();
}
inline void set_cpu_autocast_dtype(at::ScalarType dtype) {
  at::autocast::set_autocast_cpu_dtype(dtype);
}
#endif

}  // namespace xsa::torch_compat
