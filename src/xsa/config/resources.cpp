#include "xsa/config/resources.h"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "xsa/util/error.h"

namespace xsa {

namespace {
constexpr double kFloat = 4.0;            // fp32 bytes
constexpr double kLmHeadChunkRows = 512;  // rows of the fused output layer's chunks (model/lm_head_loss.h)
// A LibTorch process with tiny models: peak RSS of configs/smoke.yaml (two runs of 0.15M parameters) is
// 196 MiB, nearly all of it libraries, thread stacks and allocator arenas.
constexpr double kProcessBytes = 180.0 * (1 << 20);
}  // namespace

double optimizer_state_floats(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kAdamW:
      return 2;  // exp_avg and exp_avg_sq (max_exp_avg_sq only with amsgrad, which training never sets)
  }
  return 2;  // not reached: every kind is handled above
}

MemoryEstimate estimate_memory(const Config& cfg, std::int64_t vocab_size) {
  const auto& m = cfg.model;
  const double V = static_cast<double>(vocab_size), C = m.d_model,
               HD = static_cast<double>(m.n_head) * m.d_head, R = m.mlp_ratio, L = m.n_layer,
               T = cfg.data.seq_len, H = m.n_head;
  const double B = cfg.train.batch_size, M = B * T;  // tokens per step

  // Parameters: embeddings, per-layer attention + MLP + norms, final norm.
  double n = V * C + 2 * C;
  if (m.pos == PositionEncoding::kLearned) n += T * C;
  if (!m.tie_embeddings) n += V * C;
  if (m.embed_norm) n += 2 * C;
  n += L * (4 * C + 3 * C * HD + HD * C + 2 * R * C * C + H);
  if (m.qk_norm) n += L * 2.0 * m.d_head;
  if (cfg.attention.output_gate != OutputGate::kNone) {
    const double G = cfg.attention.output_gate == OutputGate::kHeadwise ? H : HD;  // gates per token
    n += L * (C * G + G);
  }

  // Saved for backward per layer (counted in floats): norms and residuals (8·M·C), q/k/v, their contiguous
  // and rotated copies, y, z and the projection's intermediates (13·M·HD), the MLP's hidden layer and its
  // activation (2·M·R·C), and for the explicit attention the scores, softmax and their gradient (3·B·H·T·T),
  // for the fused one only the log-sum-exp (B·H·T; its block scratch is a few hundred KB per thread).
  const double attention = cfg.attention.impl == AttentionImpl::kExplicit ? 3 * B * H * T * T : B * H * T;
  const double per_layer = M * (8 * C + 13 * HD + 2 * R * C) + attention;
  // Outside the layers: embedding, norms, the hidden states' gradient; the output layer's chunk logits,
  // softmax and gradient (3 × 512 × V) and its weight gradient.
  const double outside = 4 * M * C + 3 * kLmHeadChunkRows * V + V * C;

  MemoryEstimate e;
  e.parameters = kFloat * n;
  e.gradients = kFloat * n;
  e.optimizer = optimizer_state_floats(cfg.train.optimizer) * kFloat * n;
  e.activations = kFloat * (L * per_layer + outside);
  e.per_run = e.parameters + e.gradients + e.optimizer + e.activations;
  e.concurrent_runs =
      std::max(1, std::min<int>(cfg.runtime.workers, static_cast<int>(cfg.attention.variants.size())));
  e.process = kProcessBytes;
  e.total = e.process + e.concurrent_runs * e.per_run;
  return e;
}

std::int64_t non_embedding_parameters(const ModelConfig& m) {
  const std::int64_t C = m.d_model, HD = static_cast<std::int64_t>(m.n_head) * m.d_head, R = m.mlp_ratio;
  return m.n_layer * (3 * C * HD + HD * C + 2 * R * C * C);
}

double model_flops_per_token(const ModelConfig& m, double vocab_size, int seq_len) {
  const double n = static_cast<double>(non_embedding_parameters(m)) + vocab_size * m.d_model;
  return 6.0 * n + 12.0 * m.n_layer * m.n_head * m.d_head * seq_len;
}

std::optional<double> available_memory_bytes(const std::string& meminfo_path) {
  std::ifstream in(meminfo_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    double kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB") return kib * 1024.0;
    return std::nullopt;
  }
  return std::nullopt;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = bytes / (1 << 20);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

void check_memory_fits(const MemoryEstimate& e, double available, const std::string& source) {
  if (e.total <= available) return;
  throw InputError(source + ": this config needs an estimated " + format_bytes(e.total) + " (" +
                   std::to_string(e.concurrent_runs) + " concurrent run(s) × " + format_bytes(e.per_run) +
                   ": weights, gradients, optimizer state, one step's activations) but the machine has " +
                   format_bytes(available) +
                   " available (MemAvailable); lower model.d_model, train.batch_size, data.seq_len or "
                   "runtime.workers");
}

MachineLimits machine_limits() {
  MachineLimits m;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) m.cores = std::max(1, CPU_COUNT(&set));
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0)
    m.open_files = files.rlim_cur == RLIM_INFINITY ? 1L << 30 : static_cast<long>(files.rlim_cur);
  m.available_memory = available_memory_bytes();
  return m;
}

void check_ranks_fit(int ranks, const MemoryEstimate& per_rank, int process_groups,
                     const MachineLimits& machine) {
  const std::string n = "--ranks " + std::to_string(ranks);
  if (ranks > machine.cores)
    throw InputError(n + ": more ranks than the " + std::to_string(machine.cores) +
                     " cores this process may use (each rank trains on at least one); expected 1.." +
                     std::to_string(machine.cores));
  if (machine.available_memory && ranks * per_rank.total > *machine.available_memory)
    throw InputError(n + ": the ranks need an estimated " + format_bytes(ranks * per_rank.total) + " (" +
                     std::to_string(ranks) + " × " + format_bytes(per_rank.total) + ") but the machine has " +
                     format_bytes(*machine.available_memory) + " available (MemAvailable); use fewer ranks");
  // A rank's descriptors: libraries, logs, checkpoints (64 is generous) and two sockets to each other rank
  // per process group (Gloo's pairs); the launcher's: a pipe per rank.
  constexpr long kBaseFiles = 64;
  const long files = std::max(kBaseFiles + 2L * (ranks - 1) * process_groups, kBaseFiles + 2L * ranks);
  if (files > machine.open_files)
    throw InputError(n + ": needs about " + std::to_string(files) +
                     " open files per process but the limit is " + std::to_string(machine.open_files) +
                     " (ulimit -n); use fewer ranks or raise the limit");
}

void check_workers_fit(int workers, const MachineLimits& machine) {
  if (workers > machine.cores)
    throw InputError("--workers " + std::to_string(workers) + ": more workers than the " +
                     std::to_string(machine.cores) +
                     " cores this process may use (each point trains on at least one thread); expected 1.." +
                     std::to_string(machine.cores));
}

}  // namespace xsa
