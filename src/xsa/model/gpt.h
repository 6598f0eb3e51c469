#pragma once
// A small GPT (nanoGPT + RoPE + LayerNorm after the embedding) whose attention is SA, XSA or λ-XSA.
//
// Exclusive Self Attention (Zhai 2026): per head, standard attention y_i = Σ_j a_ij v_j keeps a large
// component along the token's own value v_i, which the residual stream already carries. XSA removes
// it before W_o:  z_i = y_i − λ (y_i·v̂_i) v̂_i,  v̂_i = v_i/‖v_i‖.  λ=0 is SA, λ=1 is XSA.
//
// Init rules (nanoGPT): every Linear/Embedding weight ~ N(0, 0.02); the residual projections
// (attn.proj, mlp.proj) ~ N(0, 0.02/√(2·n_layer)); LayerNorm weight 1, bias 0; no Linear biases.
// The stabilisers draw nothing: the q/k RMSNorm gains start at 1, and the output gate's W_g and bias at 0,
// so every gate starts at σ(0) = 0.5 whatever the input, and a model with a stabiliser has the same shared
// weights as the same seed's model without it (only the new parameters are added).
// All draws come from a generator owned by the caller, in parameter registration order, so two
// models built from the same seed are identical whatever their attention variant and whatever other
// threads do with LibTorch's global generator.
#include <ATen/core/Generator.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <string>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/model/exclusive_projection.h"  // the XSA step, z = y − λ (y·v̂) v̂
#include "xsa/records/bias_metrics.h"

namespace xsa {

// Per-layer bias metrics of one forward pass (docs/ARCHITECTURE.md "Training"; the fields and their meaning
// in xsa/records/bias_metrics.h), each averaged over batch, heads and positions 1..T-1 (position 0 attends
// only to itself: y_0 = v_0, a_00 = 1). value_cos uses all pairs i != j. Cosines use max(‖·‖, 1e-6) norms.
// Filled only when a probe is passed.
struct BiasProbe {
  std::vector<LayerBias> layers;
  // The rows the per-token metrics of `layers` averaged, in windows of T - 1 rows: the batch's windows
  // without document masking (exactly), fewer with it (every document's first token is left out). The
  // weight of this batch's per-token metrics in a mean over batches (OverBatches::kRowMean).
  double row_windows = 0;
};

// How attention is computed and modified in one layer.
struct LayerAttention {
  VariantSpec::Kind kind = VariantSpec::Kind::kFixed;
  double lambda =
      0.0;  // the initial λ (ResolvedVariant::initial_lambda): fixed λ, or where a trained λ starts
  AttentionImpl impl = AttentionImpl::kExplicit;
  OutputGate output_gate = OutputGate::kNone;  // every layer's, whatever its variant (attention.output_gate)
};

// Rotary position embedding tables, precomputed once for the longest sequence (GPT-NeoX half-split
// convention: the first D/2 channels pair with the last D/2).
struct RopeTables {
  torch::Tensor cos;  // (T_max, D/2)
  torch::Tensor sin;  // (T_max, D/2)
};
RopeTables make_rope_tables(int max_len, int d_head, double base = 10000.0);
// x: (B, H, T, D) -> rotated copy. rope: the model's tables (T_max, D/2), rows 0..T-1 used, or one window's
// rows per token (B, 1, T, D/2) (rope_at).
torch::Tensor apply_rope(const torch::Tensor& x, const RopeTables& rope);
// The tables' rows at per-token positions (B, T) int64: (B, 1, T, D/2) each, broadcast over heads.
RopeTables rope_at(const RopeTables& rope, const torch::Tensor& positions);

// Documents inside the windows of a batch (data.doc_mask; docs/guide.md "Document masking"). A document
// begins at a boundary token (the tokenizer's BOS, which xsa-prepare writes before every document); the
// tokens before a window's first boundary belong to a document that began before the window. Under document
// masking a token attends only to its own document, and positions restart at 0 at each document, so every
// document of a window is computed exactly as if it were run alone.
struct DocumentLayout {
  torch::Tensor start;      // (B, T) int64: the index of the first token of token t's document, <= t
  torch::Tensor positions;  // (B, T) int64: t - start, the position inside the document
};
// idx: (B, T) token ids.
DocumentLayout document_layout(const torch::Tensor& idx, int64_t boundary_token);

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  CausalSelfAttentionImpl(const ModelConfig& cfg, const LayerAttention& variant);
  // x: (B, T, C). mask: the explicit path's, true where masked (attention_mask: (T, T), or (B, 1, T, T)
  // with documents); the fused kernel masks by construction. rope may be null (learned positions). docs:
  // null without document masking.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask, const RopeTables* rope,
                        const DocumentLayout* docs, LayerBias* probe);
  // The λ each head uses now: (H) tensor (a copy, no grad).
  torch::Tensor effective_lambda() const;
  // Parameters that only this variant has (θ of the learned λ, the gates); empty for fixed λ.
  bool has_variant_parameters() const { return variant_.kind != VariantSpec::Kind::kFixed; }
  // Sets the variant parameters to their documented initial values (no RNG involved).
  void reset_variant_parameters();

  torch::nn::Linear qkv{nullptr};   // C -> 3·H·D (fused q, k, v)
  torch::nn::Linear proj{nullptr};  // H·D -> C   (W_o)
  // model.qk_norm: the RMSNorm gains of q and k, (D) each, shared by the heads; undefined without it.
  torch::Tensor q_norm, k_norm;
  // attention.output_gate: C -> H (headwise) or H·D (elementwise), with bias; null without a gate.
  torch::nn::Linear gate{nullptr};

 private:
  int n_head_, d_head_;
  LayerAttention variant_;
  // The kind's per-head λ parameter (H), registered under its name in kVariantKinds ("xsa_theta" of learned,
  // "xsa_gate", "xsa_alpha"; xsa/model/variant_lambda.h); undefined for a fixed λ.
  torch::Tensor variant_parameter_;
};
TORCH_MODULE(CausalSelfAttention);

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(const ModelConfig& cfg);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear fc{nullptr};
  torch::nn::Linear proj{nullptr};
};
TORCH_MODULE(Mlp);

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const ModelConfig& cfg, const LayerAttention& variant);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask, const RopeTables* rope,
                        const DocumentLayout* docs, LayerBias* probe);
  torch::nn::LayerNorm ln_1{nullptr};
  CausalSelfAttention attn{nullptr};
  torch::nn::LayerNorm ln_2{nullptr};
  Mlp mlp{nullptr};
};
TORCH_MODULE(Block);

class GptImpl : public torch::nn::Module {
 public:
  // vocab_size comes from the data; max_len is the training sequence length.
  GptImpl(const ModelConfig& cfg, const AttentionConfig& attention, const VariantSpec& variant,
          int vocab_size, int max_len);
  // idx: (B, T) int64 token ids -> logits (B, T, V).
  torch::Tensor forward(const torch::Tensor& idx, BiasProbe* probe = nullptr);
  // idx -> final hidden states after ln_f (B, T, C): everything but the output layer.
  torch::Tensor hidden(const torch::Tensor& idx, BiasProbe* probe = nullptr);
  // The output layer's weight (V, C): wte's when tied.
  const torch::Tensor& output_weight() const;
  // Mean next-token cross-entropy of idx against targets (B, T), through the chunked fused output
  // layer (never materialises the logits). This is what training uses.
  torch::Tensor forward_loss(const torch::Tensor& idx, const torch::Tensor& targets,
                             BiasProbe* probe = nullptr);
  // Per-token losses (B, T), no gradient: what evaluation uses.
  torch::Tensor token_losses(const torch::Tensor& idx, const torch::Tensor& targets);
  // Mean cross-entropy from full logits (B, T, V) (the unfused path, for tests and sampling tools).
  torch::Tensor loss(const torch::Tensor& logits, const torch::Tensor& targets) const;

  // Draws every shared weight from `gen` (init rules above) and sets variant parameters to their
  // initial values. Same generator state -> same shared weights for every variant.
  void init_weights(at::Generator gen);
  // Parameters shared by every variant (everything but the XSA λ/gate parameters), in order.
  std::vector<std::pair<std::string, torch::Tensor>> shared_parameters() const;
  // Hex FNV-1a 64 checksum of the shared parameters' bytes: equal across a paired experiment.
  std::string weights_checksum() const;
  // Effective λ per layer and head: (n_layer, H).
  torch::Tensor effective_lambdas() const;
  int64_t num_parameters(bool exclude_embeddings) const;

  int vocab_size() const { return vocab_size_; }
  int max_len() const { return max_len_; }
  // Where the weights are (runtime.device, after model->to): where a caller puts the tokens.
  torch::Device device() const;
  // data.doc_mask: from now on every forward pass masks attention at documents that begin with
  // boundary_token (DocumentLayout); a negative token turns it off (the default).
  void mask_documents(int64_t boundary_token) { doc_boundary_ = boundary_token; }
  int64_t document_boundary() const { return doc_boundary_; }
  const ModelConfig& config() const { return cfg_; }

  torch::nn::Embedding wte{nullptr};
  torch::nn::Embedding wpe{nullptr};     // only for pos = learned
  torch::nn::LayerNorm ln_emb{nullptr};  // only for embed_norm
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
  torch::nn::Linear lm_head{nullptr};  // only without tied embeddings

 private:
  const torch::Tensor& causal_mask(int64_t t);
  void follow_device(const torch::Device& device);
  ModelConfig cfg_;
  int vocab_size_, max_len_;
  int64_t doc_boundary_ = -1;  // mask_documents
  RopeTables rope_;
  torch::Tensor
      mask_;  // (max_len, max_len) bool, true where j > i; built once, only for the explicit attention
  std::vector<Block> block_refs_;
};
TORCH_MODULE(Gpt);

// The attention modification each layer gets for `variant`: on its own layers ("xsa@2-3") if it has them,
// else on `attention.layers` (empty = every layer); the other layers are SA.
std::vector<LayerAttention> layer_attention_plan(const ModelConfig& cfg, const AttentionConfig& attention,
                                                 const VariantSpec& variant);

}  // namespace xsa
