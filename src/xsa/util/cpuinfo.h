#pragma once
// /proc/cpuinfo, read and split into its "flags" lines. Torch-free: the precision choice, the benchmark's CPU
// description and the BLAS kernel check (blas_core.h) all read the flags from here.
#include <set>
#include <string>
#include <vector>

namespace xsa {

std::string read_cpuinfo();  // /proc/cpuinfo's text ("" if unreadable)

// The words of every "flags" line ("flags\t\t: fpu vme ..."), one set per line (per logical CPU), in order.
std::vector<std::set<std::string>> cpu_flag_lines(const std::string& cpuinfo);

}  // namespace xsa
