// xsa-sweep: a grid of paired experiments, each an xsa-train child process; parallel, resumable, shardable.
// The work lives in xsa/sweep.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/sweep/runner.h"
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
};

void setup_sweep_command(CLI::App& app, SweepOptions& opt) {
  app.description(
      "Run a grid of paired experiments (one xsa-train process per point) into <out>/<run-id>/.\n"
      "Sweep file: base (config path, relative to the sweep file), name, grid {dotted.key: [values]},\n"
      "set {dotted.key: value}. Rerunning skips points that have results.json and continues unfinished "
      "ones.\n"
      "Each child gets --set runtime.workers=1 --set runtime.threads=1.");
  app.add_option("--config,-c", opt.config_path, "sweep file (YAML)")->required();
  app.add_option("--workers,-j", opt.workers,
                 "points run concurrently (default: the base config's runtime.workers)");
  app.add_option("--shard", opt.shard, "run only slice K of N (0 <= K < N; point i belongs to shard i mod N)")
      ->capture_default_str();
  app.add_option("--out,-o", opt.out_dir, "sweep folder (default: sweeps/<name>)");
  app.add_option("--trainer", opt.trainer, "xsa-train executable (default: xsa-train next to xsa-sweep)");
  app.set_version_flag("--version", std::string("xsa-sweep ") + XSA_VERSION + " (no LibTorch linked)");
}

// xsa-train from the same build as this executable, whatever the current folder.
std::string default_trainer() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "xsa-train";
  return (self.parent_path() / "xsa-train").string();
}

int run_sweep_command(const SweepOptions& opt) {
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
  run.tty = ::isatty(STDOUT_FILENO) != 0;

  const std::vector<xsa::SweepPoint> mine = xsa::shard_points(all, shard);
  std::cout << spec.name << ": " << mine.size() << " of " << all.size() << " points (shard " << shard.index
            << "/" << shard.count << "), " << run.workers << " workers, into " << run.out_dir << "\n";
  return xsa::run_sweep(spec, mine, run, std::cout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xsa-sweep"};
  SweepOptions opt;
  setup_sweep_command(app, opt);
  return xsa::parse_and_run(app, argc, argv, "xsa-sweep", [&] { return run_sweep_command(opt); });
}
