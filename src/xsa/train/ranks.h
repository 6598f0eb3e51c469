#pragma once
// Which rank of a data-parallel run this process is (docs/guide.md "Scale-out"); torch-free, so the CLI and
// the launcher of local ranks read it without c10d. The collectives are train/distributed.h.
#include <string>

namespace xsa {

// Which rank this process is. From torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; else from srun's
// SLURM_PROCID and SLURM_NTASKS (master: MASTER_ADDR or the job's first node, port MASTER_PORT or one derived
// from SLURM_JOB_ID); a single process (rank 0 of 1) when neither is set. InputError on an incomplete or
// invalid set.
struct RankInfo {
  int rank = 0;
  int world_size = 1;
  std::string master_addr;
  int master_port = 0;
  bool distributed() const { return world_size > 1; }
};
RankInfo rank_info_from_environment();

// "node[03-05,9],gpu1" -> "node03": the first host of a Slurm node list (no scontrol needed).
std::string first_slurm_host(const std::string& nodelist);

}  // namespace xsa
