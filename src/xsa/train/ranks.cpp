#include "xsa/train/ranks.h"

#include <cstdlib>
#include <string>

#include "xsa/util/error.h"

namespace xsa {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

int env_int(const char* name, long lo, long hi) {
  const char* v = env(name);
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || n < lo || n > hi) {
    throw InputError(std::string(name) + "=" + v + ": expected an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  }
  return static_cast<int>(n);
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  std::string first;
  int depth = 0;
  for (char c : nodelist) {  // up to the first comma outside brackets
    if (c == ',' && depth == 0) break;
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    first += c;
  }
  // Each bracket group gives its first element: "rack[1-2]-n[3-4]" -> "rack1-n3".
  for (auto open = first.find('['); open != std::string::npos; open = first.find('[')) {
    const auto close = first.find(']', open);
    if (close == std::string::npos) break;
    const std::string range = first.substr(open + 1, close - open - 1);
    first = first.substr(0, open) + range.substr(0, range.find_first_of(",-")) + first.substr(close + 1);
  }
  return first;
}

RankInfo rank_info_from_environment() {
  RankInfo info;
  if (env("WORLD_SIZE") || env("RANK")) {
    for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) {
      if (!env(name)) {
        throw InputError(std::string("RANK and WORLD_SIZE are set but ") + name +
                         " is not: a rank needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT");
      }
    }
    info.world_size = env_int("WORLD_SIZE", 1, 65536);
    info.rank = env_int("RANK", 0, info.world_size - 1);
    info.master_addr = env("MASTER_ADDR");
    info.master_port = env_int("MASTER_PORT", 1, 65535);
    return info;
  }
  if (env("SLURM_PROCID") && env("SLURM_NTASKS") && env_int("SLURM_NTASKS", 1, 65536) > 1) {
    info.world_size = env_int("SLURM_NTASKS", 1, 65536);
    info.rank = env_int("SLURM_PROCID", 0, info.world_size - 1);
    if (env("MASTER_ADDR")) {
      info.master_addr = env("MASTER_ADDR");
    } else if (env("SLURM_JOB_NODELIST")) {
      info.master_addr = first_slurm_host(env("SLURM_JOB_NODELIST"));
    } else {
      throw InputError("SLURM_NTASKS > 1 but neither MASTER_ADDR nor SLURM_JOB_NODELIST is set");
    }
    if (env("MASTER_PORT")) {
      info.master_port = env_int("MASTER_PORT", 1, 65535);
    } else {
      const int job = env("SLURM_JOB_ID") ? env_int("SLURM_JOB_ID", 0, 2147483647) : 0;
      info.master_port = 20000 + job % 20000;  // the same on every task of the job
    }
  }
  return info;
}

}  // namespace xsa
