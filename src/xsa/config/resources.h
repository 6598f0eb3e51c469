#pragma once
// Memory a config needs, estimated before anything is built, so a typo such as d_model=1048576 is refused
// in a second instead of swapping for minutes (docs/ARCHITECTURE.md "Resources"). Torch-free.
#include <cstdint>
#include <optional>
#include <string>

#include "xsa/config/config.h"

namespace xsa {

struct MemoryEstimate {
  double parameters = 0;  // bytes: fp32 weights, per run
  double gradients = 0;   // bytes: one fp32 gradient per weight, per run
  double optimizer =
      0;  // bytes: the optimizer's state (optimizer_state_floats fp32 values per weight), per run
  double activations = 0;   // bytes: what one step keeps for backward (attention scores B·H·T·T per layer
                            // included) plus the output layer's chunk buffers, per run
  double per_run = 0;       // the four above
  int concurrent_runs = 0;  // runtime.workers, at most the number of variants
  double process = 0;       // fixed cost of a LibTorch process (libraries, allocator, evaluation buffers)
  double total = 0;         // process + concurrent_runs × per_run
};

// The fp32 values an optimizer keeps per weight (AdamW: its two moments), for the memory estimate.
double optimizer_state_floats(OptimizerKind kind);

// For `cfg` on data with `vocab_size` tokens. Doubles throughout: absurd configs must not overflow.
MemoryEstimate estimate_memory(const Config& cfg, std::int64_t vocab_size);

// Parameters of the matrices inside the layers (q, k, v, output, MLP), the size axis of scaling laws (Kaplan
// et al. 2020): no embeddings, norms or per-head λ. 393,216 for the default model.
std::int64_t non_embedding_parameters(const ModelConfig& m);

// Model FLOPs per trained token, nanoGPT's estimate: 6 per parameter (forward + backward; the tied embedding
// counted once, as the output layer's matmul) plus attention's q·kᵀ and a·v over the full T × T square,
// 12·L·H·Q·T, whichever attention.impl runs (so skipping the masked half shows up as speed).
double model_flops_per_token(const ModelConfig& m, double vocab_size, int seq_len);

// MemAvailable from /proc/meminfo in bytes; nullopt where the kernel does not say.
std::optional<double> available_memory_bytes(const std::string& meminfo_path = "/proc/meminfo");

// What a launch of processes or workers is bounded by, read once before anything forks.
struct MachineLimits {
  int cores = 1;                           // CPUs this process may run on (sched_getaffinity)
  long open_files = 1024;                  // the soft RLIMIT_NOFILE
  std::optional<double> available_memory;  // MemAvailable, where the kernel says
};
MachineLimits machine_limits();

// `xsa-train --ranks N` on this machine: refuses (InputError, one line naming the count and the limit) more
// ranks than cores, N × `per_rank` (the memory estimate of one rank's share of the batch) beyond the
// available memory, or more open files than the limit allows (each rank holds a connection to every other
// rank per process group, `process_groups` of them, and the launcher a pipe per rank). Called before anything
// forks.
void check_ranks_fit(int ranks, const MemoryEstimate& per_rank, int process_groups,
                     const MachineLimits& machine);

// `xsa-sweep --workers N` running here: at most one worker per core (each point trains with at least one
// thread); InputError otherwise. Called before any point starts.
void check_workers_fit(int workers, const MachineLimits& machine);

// "612 MiB", "3.4 GiB", "1.2 TiB".
std::string format_bytes(double bytes);

// Throws InputError("<source>: needs an estimated ... but ... available") when `estimate.total` exceeds
// `available`.
void check_memory_fits(const MemoryEstimate& estimate, double available, const std::string& source);

}  // namespace xsa
