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

// `xsa-train --submit slurm --nodes N --tasks-per-node M`: one data-parallel run of N×M ranks (docs/guide.md
// "Scale-out"), srun starting the ranks, the master the job's first node. Paths absolute, as above.
struct SlurmTrainSubmission {
  std::string name;  // the config's name
  std::string config;
  std::vector<std::string> overrides;  // --set key=value, passed on
  std::string out_dir;
  std::string trainer;
  std::string workdir;
  int nodes = 1;
  int tasks_per_node = 1;
  int cpus_per_task = 1;  // runtime.threads × runtime.workers
  std::vector<std::string> sbatch_args;
};

// The batch script: srun runs xsa-train --resume (a requeued job continues from its checkpoints) on every
// task; MASTER_ADDR is the job's first node, MASTER_PORT derived from the job id; USR1 120 s before the time
// limit stops the ranks at a step boundary (checkpoint, exit 75) and requeues the job.
std::string slurm_train_script(const SlurmTrainSubmission& s);

// Writes the script to <out>/slurm/<name>-<time>-<pid>.sbatch and runs `sbatch --parsable [args] script`.
int submit_slurm_train(const SlurmTrainSubmission& s, std::ostream& out);

}  // namespace xsa
