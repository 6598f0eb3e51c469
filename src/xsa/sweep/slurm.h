#pragma once
// `xsa-sweep --submit slurm --tasks N`: an sbatch job array whose task K runs shard K/N of the sweep into
// the shared sweep folder. Torch-free.
#include <ostream>
#include <string>
#include <vector>

namespace xsa {

struct SlurmSubmission {
  std::string sweep_name;
  std::string sweep_file;  // absolute paths: array tasks may start in another folder on another node
  std::string out_dir;
  std::string sweep_exe;
  std::string trainer;
  std::string workdir;  // where relative data paths in the configs resolve (the submitting folder)
  int tasks = 1;        // array tasks = shards
  int workers = 1;      // points at once per task; each point uses one thread
  std::vector<std::string> sbatch_args;  // extra sbatch options, e.g. --partition=cpu --time=4:00:00
};

// The batch script. --cpus-per-task = workers (points at once × 1 thread per point); --requeue; USR1
// 120 s before the time limit stops the sweep (checkpoints) and requeues the task; scancel or preemption
// send SIGTERM, which the sweep forwards to its trainers.
std::string slurm_array_script(const SlurmSubmission& s);

// Writes the script to <out>/slurm/<name>-<time>.sbatch and runs `sbatch --parsable [args] script`.
// Prints the job id and the commands to follow it. RuntimeFailure if sbatch fails.
int submit_slurm_array(const SlurmSubmission& s, std::ostream& out);

}  // namespace xsa
