#pragma once
// runtime.precision: fp32 | bf16 | auto (docs/guide.md "Precision").
//
// bf16 is mixed precision the standard way: matmuls in bfloat16 through LibTorch's CPU autocast, with
// float32 master weights, optimizer state and gradients; softmax, LayerNorm, the loss and its
// accumulation stay float32, and so do the XSA projection's norm and dot product
// (exclusive_projection.cpp says why). The fused output layer + cross-entropy is a custom autograd
// function, which autocast does not reach, so it casts explicitly (lm_head_loss.cpp).
// `auto` is bf16 only where the CPU has native bf16 matmuls (avx512_bf16 or amx_bf16); an explicit
// `bf16` on a CPU without them runs, emulated and much slower than fp32, with a one-line warning.
//
// Torch-free header: the autocast calls live in precision.cpp.
#include <string>
#include <vector>

#include "xsa/config/config.h"  // PrecisionRequest
#include "xsa/util/cpuinfo.h"   // read_cpuinfo

namespace xsa {

enum class Precision { kFp32, kBf16 };

const char* precision_name(Precision p);  // "fp32" | "bf16"

// What the CPU offers for bf16 (flags as the kernel reports them in /proc/cpuinfo).
struct CpuBf16Support {
  bool avx512_bf16 = false;
  bool amx_bf16 = false;
  bool native() const { return avx512_bf16 || amx_bf16; }
};

// The CPU's model name and which matmul-relevant flags it has (avx2, fma, avx512f, avx512bw,
// avx512_vnni, avx512_bf16, amx_tile, amx_bf16), for benchmark reports.
struct CpuDescription {
  std::string model;
  std::vector<std::string> flags_present, flags_absent;
};
CpuDescription describe_cpu(const std::string& cpuinfo);

// Parses the "flags" lines of /proc/cpuinfo text.
CpuBf16Support parse_cpu_bf16_flags(const std::string& cpuinfo);
// This machine's (read once; all false if /proc/cpuinfo is unreadable).
const CpuBf16Support& cpu_bf16_support();

struct PrecisionChoice {
  Precision precision = Precision::kFp32;
  PrecisionRequest requested = PrecisionRequest::kFp32;  // the config value
  std::string warning;  // non-empty when bf16 was asked for on a CPU without native bf16
};

// Pure: the CPU is an argument.
PrecisionChoice resolve_precision(PrecisionRequest requested, const CpuBf16Support& cpu);

// RAII: for the scope's lifetime, the calling thread runs matmuls in bf16 (CPU autocast on, dtype
// bfloat16) for Precision::kBf16, or with autocast off for kFp32; the previous state comes back at
// the end. Autocast state is per thread, so concurrent runs (workers) do not see each other's.
// Use it around forward passes only: backward replays the dtypes the forward recorded.
class PrecisionScope {
 public:
  explicit PrecisionScope(Precision precision);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  bool was_enabled_;
  int was_dtype_;  // at::ScalarType, kept as int so this header needs no ATen
  bool entered_;   // this scope turned autocast on (and owns one nesting level)
};

}  // namespace xsa
