#include "xsa/util/blas_core.h"

#include <set>
#include <sstream>

#include "xsa/util/cpuinfo.h"

namespace xsa {

namespace {

// OpenBLAS's x86 core types whose kernels predate AVX2 (its dynamic.c corename table); on a CPU with AVX2
// and FMA, DYNAMIC_ARCH picks Haswell or a newer type unless it failed to recognise the model.
const std::set<std::string>& cores_without_avx2_kernels() {
  static const std::set<std::string> cores{
      "Unknown",   "Katmai", "Coppermine",  "Northwood", "Prescott",  "Banias",     "Atom",
      "Core2",     "Penryn", "Dunnington",  "Nehalem",   "Athlon",    "Opteron",    "Opteron_SSE3",
      "Barcelona", "Nano",   "Sandybridge", "Bobcat",    "Bulldozer", "Piledriver", "Steamroller"};
  return cores;
}

std::set<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> out;
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

}  // namespace

std::string generic_blas_core_warning(const std::string& blas_config, const std::string& cpuinfo) {
  const std::set<std::string> config = words(blas_config);
  if (!config.count("OpenBLAS")) return "";
  std::string core;
  for (const auto& w : config)
    if (cores_without_avx2_kernels().count(w)) core = w;
  if (core.empty()) return "";
  const auto flag_lines = cpu_flag_lines(cpuinfo);
  if (flag_lines.empty()) return "";
  const std::set<std::string>& flags = flag_lines.front();
  if (!flags.count("avx2") || !flags.count("fma")) return "";
  return "OpenBLAS runs its generic " + core +
         " kernels on this CPU, which has avx2 and fma (its DYNAMIC_ARCH did not recognise the model): "
         "measured 2x slower per step; OPENBLAS_CORETYPE=Haswell selects its AVX2 kernels (fp32 numbers "
         "then match Haswell-kernel runs, not this machine's earlier ones)";
}

}  // namespace xsa
