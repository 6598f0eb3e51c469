#pragma once
// `xsa-train --ranks N` (docs/guide.md "Scale-out"): starts N copies of a command on this machine as the
// ranks of one data-parallel run (RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1 and a free MASTER_PORT, torchrun's
// names) and supervises them. Torch-free.
#include <string>
#include <vector>

namespace xsa {

// Runs `argv` (argv[0] the executable) as ranks 0..n-1 and waits for them. SIGTERM is passed on to every rank
// (they checkpoint and stop at the same step). The ranks' stderr comes through here: while all goes well
// their lines are passed on (2 s late); when a rank fails, the others end (killed after 1 s) and one line is
// printed, the cause: a rank killed by a signal, else the first line a rank wrote after the last one passed
// on (the failing rank writes its own before the others can notice it has gone). Returns 0 when every rank
// succeeded, 75 when they all stopped on SIGTERM, 2 when the cause was an input error (exit 2), 1 otherwise.
int run_local_ranks(const std::vector<std::string>& argv, int n, const std::string& program);

// The command line of a rank `--ranks N` starts: this executable (/proc/self/exe) with `argv` less --ranks N.
std::vector<std::string> rank_command(const std::vector<std::string>& argv);

// `base`, or "base rank R" in a rank of several (RANK: torchrun and --ranks; SLURM_PROCID: srun), so a rank
// names itself in every line it prints.
std::string rank_program_name(const std::string& base);

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0 and released).
int free_local_port();

}  // namespace xsa
