#include "xsa/util/cpuinfo.h"

#include <fstream>
#include <sstream>

namespace xsa {

std::string read_cpuinfo() {
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::set<std::string>> cpu_flag_lines(const std::string& cpuinfo) {
  std::vector<std::set<std::string>> out;
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream words(line.substr(colon + 1));
    std::set<std::string>& flags = out.emplace_back();
    for (std::string w; words >> w;) flags.insert(w);
  }
  return out;
}

}  // namespace xsa
