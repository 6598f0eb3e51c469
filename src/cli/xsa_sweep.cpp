// xsa-sweep: a grid of paired experiments, each an xsa-train child process; parallel, resumable, shardable.
// The work lives in xsa/sweep.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/config/resources.h"
#include "xsa/sweep/runner.h"
#include "xsa/sweep/slurm.h"
#include "xsa/sweep/status.h"
#include "xsa/sweep/sweep.h"
#include "xsa/util/cli_main.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"

namespace {

struct SweepOptions {
  std::string config_path;
  int workers = 0;  // 0: the base config's runtime.workers
  std::string shard = "0/1";
  std::string out_dir;
  std::string trainer;
  std::string status_dir;                // --status DIR
  std::string submit;                    // --submit slurm
  int tasks = 0;                         // --tasks N (array tasks = shards)
  std::vector<std::string> sbatch_args;  // --sbatch-arg=... (repeatable)
};

void setup_sweep_command(CLI::App& app, SweepOptions& opt) {
  app.description(
      "Run a grid of paired experiments (one xsa-train process per point) into <out>/<run-id>/.\n"
      "Sweep file: base (config path, relative to the sweep file), name, grid {dotted.key: [values]},\n"
      "set {dotted.key: value}. Rerunning skips points that have results.json and continues unfinished "
      "ones.\n"
      "Each child gets --set runtime.workers=1 --set runtime.threads=1.\n"
      "Several sweeps may run into one --out (shards, array tasks, a local run): each point is claimed and\n"
      "trained once. SIGTERM: running points checkpoint and are recorded as interrupted; exit code 75.");
  app.add_option("--config,-c", opt.config_path, "sweep file (YAML); required unless --status");
  app.add_option("--workers,-j", opt.workers,
                 "points run concurrently (default: the base config's runtime.workers)");
  app.add_option("--shard", opt.shard, "run only slice K of N (0 <= K < N; point i belongs to shard i mod N)")
      ->capture_default_str();
  app.add_option("--out,-o", opt.out_dir, "sweep folder (default: sweeps/<name>)");
  app.add_option("--trainer", opt.trainer, "xsa-train executable (default: xsa-train next to xsa-sweep)");
  app.add_option("--status", opt.status_dir,
                 "print done/running/interrupted/failed/pending per point of sweep folder DIR, merged over "
                 "shards and processes; exit 0 all done, 1 some failed, 3 still incomplete");
  app.add_option("--submit", opt.submit, "submit the sweep as a job array instead of running it here")
      ->check(CLI::IsMember({"slurm"}));
  app.add_option("--tasks", opt.tasks, "array tasks for --submit (task K runs --shard K/N)");
  app.add_option("--sbatch-arg", opt.sbatch_args,
                 "extra sbatch option for --submit, e.g. --sbatch-arg=--partition=cpu (repeatable)");
  app.set_version_flag("--version", std::string("xsa-sweep ") + XSA_VERSION + " (no LibTorch linked)");
}

// xsa-train from the same build as this executable, whatever the current folder.
std::string default_trainer() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "xsa-train";
  return (self.parent_path() / "xsa-train").string();
}

std::string absolute(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal();
}

int run_sweep_command(const SweepOptions& opt) {
  if (!opt.status_dir.empty()) {
    if (!opt.config_path.empty() || !opt.submit.empty())
      throw xsa::InputError("--status DIR takes no --config or --submit");
    return xsa::print_sweep_status(xsa::collect_sweep_status(opt.status_dir), std::cout);
  }
  if (opt.config_path.empty()) throw xsa::InputError("--config is required (or --status DIR)");
  if (opt.submit.empty() && (opt.tasks != 0 || !opt.sbatch_args.empty()))
    throw xsa::InputError("--tasks and --sbatch-arg need --submit slurm");
  // Everything is validated before the first point starts.
  const xsa::Shard shard = xsa::parse_shard(opt.shard);
  const xsa::SweepSpec spec = xsa::load_sweep(opt.config_path);
  const std::vector<xsa::SweepPoint> all = xsa::expand_grid(spec);
  xsa::validate_points(spec, all);

  xsa::SweepRunOptions run;
  run.shard = shard;
  run.out_dir = opt.out_dir.empty() ? "sweeps/" + spec.name : opt.out_dir;
  run.trainer = opt.trainer.empty() ? default_trainer() : opt.trainer;
  if (::access(run.trainer.c_str(), X_OK) != 0)
    throw xsa::InputError(run.trainer + ": trainer not found or not executable (pass --trainer PATH)");
  if (opt.workers < 0) throw xsa::InputError("--workers " + std::to_string(opt.workers) + ": expected >= 1");
  std::vector<std::string> set_only;
  for (const auto& [key, value] : spec.set) set_only.push_back(key + "=" + value.arg);
  run.workers = opt.workers > 0 ? opt.workers : xsa::load_config(spec.base_path, set_only).runtime.workers;
  // The points' runs write inside --out: a sweep folder that is, holds or lies inside the sweep file or its
  // base config would mix the two.
  xsa::require_output_apart({run.out_dir, "--out"},
                            {{spec.path, "the sweep file"}, {spec.base_path, "the sweep's base config"}});
  run.tty = ::isatty(STDOUT_FILENO) != 0;

  if (!opt.submit.empty()) {
    if (opt.shard != "0/1") throw xsa::InputError("--shard and --submit: the array tasks are the shards");
    if (opt.tasks < 1 || static_cast<std::size_t>(opt.tasks) > all.size())
      throw xsa::InputError("--tasks " + std::to_string(opt.tasks) + ": expected 1.." +
                            std::to_string(all.size()) + " (the sweep has " + std::to_string(all.size()) +
                            " points)");
    xsa::SlurmSubmission sub;
    sub.sweep_name = spec.name;
    sub.sweep_file = absolute(spec.path);
    sub.out_dir = absolute(run.out_dir);
    sub.sweep_exe = absolute(std::filesystem::read_symlink("/proc/self/exe").string());
    sub.trainer = absolute(run.trainer);
    sub.workdir = std::filesystem::current_path().string();
    sub.tasks = opt.tasks;
    sub.workers = run.workers;
    sub.sbatch_args = opt.sbatch_args;
    return xsa::submit_slurm_array(sub, std::cout);
  }

  // Here, not on a Slurm node: one worker per core at most (an explicit --workers is refused beyond it, the
  // config's runtime.workers is capped at it).
  const xsa::MachineLimits machine = xsa::machine_limits();
  if (opt.workers > 0) xsa::check_workers_fit(opt.workers, machine);
  run.workers = std::min(run.workers, machine.cores);
  const std::vector<xsa::SweepPoint> mine = xsa::shard_points(all, shard);
  std::cout << spec.name << ": " << mine.size() << " of " << all.size() << " points (shard " << shard.index
            << "/" << shard.count << "), " << run.workers << " workers, into " << run.out_dir << "\n";
  return xsa::run_sweep(spec, mine, run, std::cout);
}

}  // namespace

int main(int argc, char** argv) {
  return xsa::cli_main<SweepOptions>(argc, argv, "xsa-sweep", setup_sweep_command, run_sweep_command);
}
