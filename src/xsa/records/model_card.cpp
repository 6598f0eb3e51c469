#include "xsa/records/model_card.h"

#include <cstdio>
#include <sstream>

#include "xsa/util/number_text.h"

namespace xsa {

namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// "the paired Δ against the run's baseline": from results.json's comparisons (the first run is the baseline).
std::string comparison_line(const ExperimentResult& experiment, const RunResult& run) {
  if (experiment.runs.empty() || &experiment.runs.front() == &run ||
      experiment.runs.front().variant == run.variant)
    return "This is the run's baseline; the other variants of the same run were compared against it.";
  for (const auto& c : experiment.comparisons) {
    if (c.variant != run.variant) continue;
    std::string line = "Paired against the run's baseline `" + c.baseline +
                       "` (same initial weights, same batches, " +
                       "same validation windows): Δ val loss = " + fmt("%+.4f", c.delta_val_loss);
    if (c.delta_val_loss_sem) line += " ± " + fmt("%.4f", *c.delta_val_loss_sem) + " (SE over windows)";
    return line + ", " + fmt("%+.2f", c.improvement_pct) + "% (positive: this model is better).";
  }
  return "results.json holds no comparison of this variant with the baseline.";
}

}  // namespace

std::string model_card(const ExperimentResult& experiment, const RunResult& run, const ExportedModel& model) {
  const Config& cfg = experiment.config;
  const auto& a = model.architecture;
  const std::int64_t tokens =
      static_cast<std::int64_t>(cfg.train.steps) * cfg.train.batch_size * cfg.data.seq_len;
  std::ostringstream o;
  o << "---\n"
    << "library_name: xsa\n"
    << "tags:\n  - exclusive-self-attention\n  - xsa\n  - tinystories\n  - causal-lm\n"
    << "datasets:\n  - roneneldan/TinyStories\n"
    << "pipeline_tag: text-generation\n"
    << "---\n\n";
  o << "# " << cfg.name << ": " << run.variant << "\n\n";
  o << "A " << a.at("n_layer").get<int>() << "-layer GPT (d_model " << a.at("d_model").get<int>() << ", "
    << a.at("n_head").get<int>() << " heads × " << a.at("d_head").get<int>() << ", vocabulary "
    << with_commas(a.at("vocab_size").get<std::int64_t>()) << ", " << a.at("pos").get<std::string>()
    << " positions) trained with the xsa tool's `xsa-train`, attention variant `" << run.variant
    << "`. Exclusive Self Attention ([Zhai 2026](https://arxiv.org/abs/2603.09078)) removes from each head's "
       "output y_i its component along the "
       "token's own value v_i before the output projection: z_i = y_i − λ (y_i·v̂_i) v̂_i (λ = 0 is standard "
       "attention, λ = 1 XSA). The attention variant of each layer and the learned λ per head, where "
       "trained, are "
       "in `config.json` (`variant`).\n\n";
  o << "## Training\n\n";
  o << "| | |\n|---|---|\n";
  o << "| steps | " << with_commas(cfg.train.steps) << " |\n";
  o << "| tokens | " << with_commas(tokens) << " (batch " << cfg.train.batch_size << " × " << cfg.data.seq_len
    << ") |\n";
  o << "| learning rate | " << fmt("%g", cfg.train.lr) << " (" << choice_name(cfg.train.optimizer)
    << ", cosine to " << fmt("%g", cfg.train.min_lr) << ", warmup " << cfg.train.warmup_steps << ") |\n";
  o << "| seed | " << cfg.seed << " |\n";
  if (experiment.data)
    o << "| data | `" << experiment.data->dir << "` (" << with_commas(experiment.data->train_tokens)
      << " training tokens; tokenizer sha256 " << experiment.data->tokenizer_sha256.substr(0, 12) << "…) |\n";
  if (experiment.environment && !experiment.environment->precision.empty())
    o << "| precision | " << experiment.environment->precision << " |\n";
  o << "| initial weights checksum | " << run.init_checksum << " |\n";
  o << "| config sha256 | " << model.provenance.config_sha256 << " |\n\n";
  o << "## Results\n\n";
  o << "Final validation loss " << fmt("%.4f", run.final.val_loss);
  if (run.final.val_loss_sem) o << " ± " << fmt("%.4f", *run.final.val_loss_sem) << " (SE over windows)";
  if (run.final.eval_tokens) o << " on " << with_commas(*run.final.eval_tokens) << " validation tokens";
  o << ".\n\n" << comparison_line(experiment, run) << "\n\n";
  o << "## Loading\n\n";
  o << "With xsa's PyTorch reference model (`scripts/reference/model.py`), from the xsa repository's "
       "root:\n\n"
    << "```python\n"
    << "from scripts.reference.model import load_exported\n"
    << "model = load_exported(\"path/to/this/folder\")  # logits = model(idx), idx: (B, T) int64 token ids\n"
    << "```\n\n"
    << "`model.safetensors` holds every parameter in fp32 under the names of `config.json`'s architecture "
       "(`blocks.0.attn.qkv.weight`, ...); `safetensors.torch.load_file` reads it. `tokenizer.model` is the "
       "SentencePiece model of the training data, `pieces.json` its pieces. In xsa, `model.init_from: <this "
       "folder>` starts training from these weights.\n";
  return o.str();
}

}  // namespace xsa
