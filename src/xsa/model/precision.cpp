#include "xsa/model/precision.h"

#include <set>
#include <sstream>

#include "xsa/model/torch_compat.h"

namespace xsa {

const char* precision_name(Precision p) {
  return p == Precision::kBf16 ? "bf16" : "fp32";
}

CpuBf16Support parse_cpu_bf16_flags(const std::string& cpuinfo) {
  CpuBf16Support support;
  for (const auto& flags : cpu_flag_lines(cpuinfo)) {
    support.avx512_bf16 = support.avx512_bf16 || flags.count("avx512_bf16");
    support.amx_bf16 = support.amx_bf16 || flags.count("amx_bf16");
  }
  return support;
}

const CpuBf16Support& cpu_bf16_support() {
  static const CpuBf16Support support = parse_cpu_bf16_flags(read_cpuinfo());
  return support;
}

CpuDescription describe_cpu(const std::string& cpuinfo) {
  CpuDescription out;
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    out.model = line.substr(colon + 1);
    out.model.erase(0, out.model.find_first_not_of(" \t"));
    break;
  }
  std::set<std::string> flags;  // the first non-empty flags line's
  for (auto& line_flags : cpu_flag_lines(cpuinfo))
    if (!line_flags.empty()) {
      flags = std::move(line_flags);
      break;
    }
  for (const char* flag :
       {"avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16"})
    (flags.count(flag) ? out.flags_present : out.flags_absent).push_back(flag);
  return out;
}

PrecisionChoice resolve_precision(PrecisionRequest requested, const CpuBf16Support& cpu) {
  PrecisionChoice choice;
  choice.requested = requested;
  if (requested == PrecisionRequest::kBf16) {
    choice.precision = Precision::kBf16;
    if (!cpu.native()) {
      choice.warning =
          "runtime.precision: bf16 on a CPU without native bf16 (no avx512_bf16 or amx_bf16 in "
          "/proc/cpuinfo): "
          "bf16 matmuls are emulated and much slower than fp32 (use fp32 or auto)";
    }
  } else if (requested == PrecisionRequest::kAuto) {
    choice.precision = cpu.native() ? Precision::kBf16 : Precision::kFp32;
  } else {
    choice.precision = Precision::kFp32;
  }
  return choice;
}

PrecisionScope::PrecisionScope(Precision precision)
    : was_enabled_(torch_compat::cpu_autocast_enabled()),
      was_dtype_(static_cast<int>(torch_compat::cpu_autocast_dtype())),
      entered_(precision == Precision::kBf16 && !was_enabled_) {
  if (precision == Precision::kBf16) {
    torch_compat::set_cpu_autocast_dtype(at::kBFloat16);
    torch_compat::set_cpu_autocast_enabled(true);
    if (entered_) at::autocast::increment_nesting();
  } else {
    torch_compat::set_cpu_autocast_enabled(false);
  }
}

PrecisionScope::~PrecisionScope() {
  // Leaving the outermost autocast region: drop the cached bf16 copies of the weights, which the
  // optimizer is about to change (the next forward casts them afresh).
  if (entered_ && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  torch_compat::set_cpu_autocast_enabled(was_enabled_);
  torch_compat::set_cpu_autocast_dtype(static_cast<at::ScalarType>(was_dtype_));
}

}  // namespace xsa
