// xsa-reference-export OUT_DIR: dumps what the C++ model computes for a handful of small cases, so that
// an independent PyTorch implementation (scripts/reference/check_against_cpp.py) can recompute and
// compare everything (GitHub issue 3, "An independent reference").
//
// Per case, into OUT_DIR/<case>/: every parameter under its C++ name, the input ids and targets, the
// logits, the loss, every gradient, the bias metrics and the effective λ per layer and head. Each tensor
// is a raw little-endian file; OUT_DIR/manifest.json lists, per case, the resolved config, the variant,
// and name -> {dtype, shape, file}.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "xsa/config/config.h"
#include "xsa/model/gpt.h"
#include "xsa/util/fs.h"

namespace {

using json = nlohmann::json;

struct Case {
  std::string name;
  xsa::ModelConfig model;
  xsa::AttentionConfig attention;  // .layers and .learned_init matter here; .variants is set from `variant`
  xsa::VariantSpec variant;
  // Learned θ / gates start equal across heads (the gate even at 0, where it changes nothing). Setting
  // distinct per-head values makes the check see whether each head gets its own λ.
  std::vector<float> variant_values;
  // At init (std 0.02) attention is almost uniform and GELU almost linear, so a wrong softmax scale or
  // GELU flavour would barely show. Scaling every >= 2-D weight after init puts both in their
  // nonlinear range (attention scores of order 1..10).
  double weight_scale = 1.0;
  // The q/k norm gains start at 1 and the output gate at 0 (σ = 0.5 everywhere), where a wrong axis or a
  // missing gain would not show: drawn from the case's generator after init instead (N(1, 0.3) gains, N(0,
  // 0.5) gate weights and biases).
  bool perturb_stabilisers = false;
  // data.doc_mask: the model masks attention at kBos and restarts positions there; the inputs get boundaries
  // at fixed places (kDocumentStarts) so every window holds several documents.
  bool doc_mask = false;
};

xsa::VariantSpec fixed(double lambda, bool keyword) {
  xsa::VariantSpec v;
  v.kind = xsa::VariantSpec::Kind::kFixed;
  v.lambda = lambda;
  v.from_keyword = keyword;
  return v;
}

xsa::VariantSpec kind_only(xsa::VariantSpec::Kind kind) {
  xsa::VariantSpec v;
  v.kind = kind;
  return v;
}

std::vector<Case> make_cases() {
  xsa::ModelConfig small;  // n_layer 2, d_model 32, n_head 2, d_head 16; pos rope, embed_norm, tied
  small.n_layer = 2;
  small.d_model = 32;
  small.n_head = 2;
  small.d_head = 16;
  small.mlp_ratio = 4;

  std::vector<Case> cases;
  auto add = [&](const std::string& name, const xsa::VariantSpec& variant, auto&& tweak) {
    Case c;  // member by member: g++ 12 crashes (ICE in check_noexcept_r) on the aggregate form here
    c.name = name;
    c.model = small;
    c.variant = variant;
    tweak(c);
    c.attention.variants = {variant};
    cases.push_back(c);
  };
  using Kind = xsa::VariantSpec::Kind;
  add("sa_rope_tied", fixed(0.0, true), [](Case&) {});
  add("xsa_rope_tied", fixed(1.0, true), [](Case&) {});
  add("lambda0.5_rope_untied", fixed(0.5, false), [](Case& c) { c.model.tie_embeddings = false; });
  add("xsa_learnedpos_untied", fixed(1.0, true), [](Case& c) {
    c.model.pos = xsa::PositionEncoding::kLearned;
    c.model.tie_embeddings = false;
  });
  add("sa_learnedpos_noembednorm", fixed(0.0, true), [](Case& c) {
    c.model.pos = xsa::PositionEncoding::kLearned;
    c.model.embed_norm = false;
  });
  add("xsa_layer1_only", fixed(1.0, true), [](Case& c) { c.attention.layers = {1}; });
  add("lambda0.25_layer0_only_3layers", fixed(0.25, false), [](Case& c) {
    c.model.n_layer = 3;
    c.attention.layers = {0};
  });
  add("learned_rope_tied", kind_only(Kind::kLearned), [](Case& c) { c.attention.learned_init = 0.3; });
  add("learned_perhead_untied", kind_only(Kind::kLearned), [](Case& c) {
    c.model.tie_embeddings = false;
    c.variant_values = {-1.5f, 2.0f};  // θ per head: λ = sigmoid(θ) ≈ 0.18, 0.88
  });
  add("gate_init_rope_tied", kind_only(Kind::kGate), [](Case&) {});
  add("gate_perhead_learnedpos", kind_only(Kind::kGate), [](Case& c) {
    c.model.pos = xsa::PositionEncoding::kLearned;
    c.variant_values = {0.7f, -0.4f};
  });
  add("gate_perhead_layer0_only", kind_only(Kind::kGate), [](Case& c) {
    c.attention.layers = {0};
    c.variant_values = {0.3f, 1.2f};
  });
  add("tanh_gate_init_rope_tied", kind_only(Kind::kTanhGate), [](Case&) {});
  add("tanh_gate_perhead_layer1_only", kind_only(Kind::kTanhGate), [](Case& c) {
    c.attention.layers = {1};
    c.variant_values = {0.9f, -0.6f};  // α per head: λ = tanh(α) ≈ 0.72, -0.54
  });
  add("sa_rope_tied_w15", fixed(0.0, true), [](Case& c) { c.weight_scale = 15.0; });
  add("xsa_rope_untied_w15", fixed(1.0, true), [](Case& c) {
    c.model.tie_embeddings = false;
    c.weight_scale = 15.0;
  });
  add("gate_perhead_learnedpos_w15", kind_only(Kind::kGate), [](Case& c) {
    c.model.pos = xsa::PositionEncoding::kLearned;
    c.variant_values = {0.7f, -0.4f};
    c.weight_scale = 15.0;
  });
  // The stabilisers (docs/findings.md, question 9): q/k RMSNorm before RoPE, and Qiu et al.'s output gate.
  add("xsa_qknorm_rope_tied", fixed(1.0, true), [](Case& c) {
    c.model.qk_norm = true;
    c.perturb_stabilisers = true;
    c.weight_scale = 15.0;
  });
  add("sa_qknorm_learnedpos_untied", fixed(0.0, true), [](Case& c) {
    c.model.qk_norm = true;
    c.model.pos = xsa::PositionEncoding::kLearned;
    c.model.tie_embeddings = false;
    c.perturb_stabilisers = true;
  });
  add("xsa_headwise_gate_init", fixed(1.0, true),
      [](Case& c) { c.attention.output_gate = xsa::OutputGate::kHeadwise; });
  add("xsa_headwise_gate_qknorm_w15", fixed(1.0, true), [](Case& c) {
    c.model.qk_norm = true;
    c.attention.output_gate = xsa::OutputGate::kHeadwise;
    c.perturb_stabilisers = true;
    c.weight_scale = 15.0;
  });
  add("sa_elementwise_gate", fixed(0.0, true), [](Case& c) {
    c.attention.output_gate = xsa::OutputGate::kElementwise;
    c.perturb_stabilisers = true;
  });
  add("learned_elementwise_gate_layer0_only", kind_only(Kind::kLearned), [](Case& c) {
    c.attention.output_gate = xsa::OutputGate::kElementwise;
    c.attention.layers = {0};
    c.perturb_stabilisers = true;
  });
  add("xsa_qknorm_headwise_gate_explicit", fixed(1.0, true), [](Case& c) {
    c.model.qk_norm = true;
    c.attention.output_gate = xsa::OutputGate::kHeadwise;
    c.attention.impl = xsa::AttentionImpl::kExplicit;
    c.perturb_stabilisers = true;
    c.weight_scale = 15.0;
  });
  // Document masking (issue 56), in both attention implementations and both position encodings.
  add("xsa_docmask_rope_fused_w15", fixed(1.0, true), [](Case& c) {
    c.doc_mask = true;
    c.weight_scale = 15.0;
  });
  add("sa_docmask_rope_explicit_w15", fixed(0.0, true), [](Case& c) {
    c.doc_mask = true;
    c.attention.impl = xsa::AttentionImpl::kExplicit;
    c.weight_scale = 15.0;
  });
  add("xsa_docmask_learnedpos_qknorm", fixed(1.0, true), [](Case& c) {
    c.doc_mask = true;
    c.model.pos = xsa::PositionEncoding::kLearned;
    c.model.qk_norm = true;
    c.perturb_stabilisers = true;
    c.weight_scale = 15.0;
  });
  add("lambda0.5_docmask_learnedpos_explicit", fixed(0.5, false), [](Case& c) {
    c.doc_mask = true;
    c.model.pos = xsa::PositionEncoding::kLearned;
    c.attention.impl = xsa::AttentionImpl::kExplicit;
  });
  return cases;
}

constexpr int kVocab = 64, kSeqLen = 16, kBatch = 3;
constexpr int64_t kBos = 1;  // the document boundary of the doc_mask cases
// Where the doc_mask cases put kBos, per batch row (row 0 also continues a document from before the window;
// row 1's adjacent boundaries make a one-token document; row 2 has none after position 0).
const std::vector<std::vector<int64_t>> kDocumentStarts{{5, 11}, {0, 7, 8, 15}, {0}};
constexpr std::uint64_t kSeed = 1234;

bool host_is_little_endian() {
  const std::uint16_t probe = 1;
  unsigned char first = 0;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

// Writes `t` as raw bytes and returns its manifest entry.
json dump_tensor(const std::string& dir, const std::string& name, const torch::Tensor& t) {
  auto c = t.detach().cpu().contiguous();
  std::string dtype;
  switch (c.scalar_type()) {
    case torch::kFloat32:
      dtype = "float32";
      break;
    case torch::kFloat64:
      dtype = "float64";
      break;
    case torch::kInt64:
      dtype = "int64";
      break;
    default:
      throw std::runtime_error(name + ": unsupported dtype " + std::string(c.dtype().name()));
  }
  std::string file = name + ".bin";  // C++ parameter names ("blocks.0.attn.qkv.weight") are file-safe
  std::ofstream out(dir + "/" + file, std::ios::binary);
  out.write(static_cast<const char*>(c.data_ptr()),
            static_cast<std::streamsize>(c.numel() * c.element_size()));
  if (!out) throw std::runtime_error(dir + "/" + file + ": cannot write");
  return {{"dtype", dtype}, {"shape", c.sizes().vec()}, {"file", file}};
}

json run_case(const Case& c, const std::string& out_dir) {
  const std::string dir = out_dir + "/" + c.name;
  xsa::make_directories(dir);

  xsa::Gpt model(c.model, c.attention, c.variant, kVocab, kSeqLen);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(kSeed);
  model->init_weights(gen);
  if (c.weight_scale != 1.0) {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) {
      if (p.dim() >= 2) p.mul_(c.weight_scale);
    }
  }
  if (!c.variant_values.empty()) {
    torch::NoGradGuard no_grad;
    auto values = torch::tensor(c.variant_values);
    for (auto& item : model->named_parameters(true)) {
      if (xsa::is_variant_parameter(item.key())) item.value().copy_(values);
    }
  }
  if (c.perturb_stabilisers) {
    torch::NoGradGuard no_grad;
    for (auto& item : model->named_parameters(true)) {
      const std::string& name = item.key();
      auto ends_with = [&](const char* suffix) {
        const std::size_t n = std::strlen(suffix);
        return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
      };
      if (ends_with("attn.q_norm") || ends_with("attn.k_norm")) item.value().normal_(1.0, 0.3, gen);
      if (ends_with("attn.gate.weight") || ends_with("attn.gate.bias")) item.value().normal_(0.0, 0.5, gen);
    }
  }
  // Inputs come from the same generator, after the weights: (B, T+1) windows as in training.
  auto window = torch::randint(0, kVocab, {kBatch, kSeqLen + 1}, gen, torch::kLong);
  if (c.doc_mask) {
    window.masked_fill_(window == kBos, 2);  // no boundary but the chosen ones
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t t : kDocumentStarts[b]) window.index_put_({b, t}, kBos);
    model->mask_documents(kBos);
  }
  auto idx = window.narrow(1, 0, kSeqLen).contiguous();      // (B, T)
  auto targets = window.narrow(1, 1, kSeqLen).contiguous();  // (B, T)

  xsa::BiasProbe probe;
  auto logits = model->forward(idx, &probe).detach();  // (B, T, V)
  auto loss = model->forward_loss(idx, targets);       // the fused path training uses
  loss.backward();

  json tensors = json::object();
  tensors["input/idx"] = dump_tensor(dir, "input.idx", idx);
  tensors["input/targets"] = dump_tensor(dir, "input.targets", targets);
  tensors["output/logits"] = dump_tensor(dir, "output.logits", logits);
  tensors["output/loss"] = dump_tensor(dir, "output.loss", loss);
  for (const auto& item : model->named_parameters(true)) {
    tensors["param/" + item.key()] = dump_tensor(dir, "param." + item.key(), item.value());
    TORCH_CHECK(item.value().grad().defined(), item.key(), " has no gradient");
    tensors["grad/" + item.key()] = dump_tensor(dir, "grad." + item.key(), item.value().grad());
  }
  // Bias metrics as (n_layer) float64, λ per head as (n_layer, H) float64.
  const auto L = static_cast<int64_t>(probe.layers.size());
  auto metric = [&](double xsa::LayerBias::*field) {
    auto t = torch::empty({L}, torch::kFloat64);
    for (int64_t l = 0; l < L; ++l) t[l] = probe.layers[l].*field;
    return t;
  };
  tensors["bias/cos_y_v"] = dump_tensor(dir, "bias.cos_y_v", metric(&xsa::LayerBias::cos_y_v));
  tensors["bias/cos_z_v"] = dump_tensor(dir, "bias.cos_z_v", metric(&xsa::LayerBias::cos_z_v));
  tensors["bias/attn_diag"] = dump_tensor(dir, "bias.attn_diag", metric(&xsa::LayerBias::attn_diag));
  tensors["bias/value_cos"] = dump_tensor(dir, "bias.value_cos", metric(&xsa::LayerBias::value_cos));
  for (const auto& metric : xsa::kDynamicsMetrics) {
    auto t = torch::empty({L}, torch::kFloat64);
    for (int64_t l = 0; l < L; ++l) t[l] = probe.layers[l].dynamics.value().*metric.member;
    tensors[std::string("bias/") + metric.key] = dump_tensor(dir, std::string("bias.") + metric.key, t);
  }
  auto lambdas = torch::empty({L, c.model.n_head}, torch::kFloat64);
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t h = 0; h < c.model.n_head; ++h) lambdas[l][h] = probe.layers[l].lambda_per_head.at(h);
  }
  tensors["bias/lambda_per_head"] = dump_tensor(dir, "bias.lambda_per_head", lambdas);

  xsa::Config cfg;
  cfg.name = c.name;
  cfg.seed = kSeed;
  cfg.data.seq_len = kSeqLen;
  cfg.model = c.model;
  cfg.attention = c.attention;
  cfg.data.doc_mask = c.doc_mask;
  cfg.train.batch_size = kBatch;
  const char* kind = xsa::variant_kind_name(c.variant.kind);
  return {{"name", c.name},
          {"dir", c.name},
          {"config", xsa::config_to_json(cfg)},
          {"vocab_size", kVocab},
          {"max_len", kSeqLen},
          {"variant", {{"name", c.variant.name()}, {"kind", kind}, {"lambda", c.variant.lambda}}},
          {"variant_values_overridden", !c.variant_values.empty()},
          {"weight_scale", c.weight_scale},
          {"stabilisers_perturbed", c.perturb_stabilisers},
          {"doc_bos", c.doc_mask ? json(kBos) : json(nullptr)},
          {"tensors", tensors}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: xsa-reference-export OUT_DIR\n");
    return 2;
  }
  if (!host_is_little_endian()) {
    std::fprintf(stderr, "xsa-reference-export: the dump format is little-endian; this host is not\n");
    return 1;
  }
  try {
    at::set_num_threads(1);  // the numbers do not depend on it, but keep the run cheap and repeatable
    const std::string out_dir = argv[1];
    xsa::make_directories(out_dir);
    json cases = json::array();
    for (const auto& c : make_cases()) cases.push_back(run_case(c, out_dir));
    json manifest = {{"format", "xsa.reference-dump/1"},
                     {"byte_order", "little"},
                     {"batch_size", kBatch},
                     {"seq_len", kSeqLen},
                     {"cases", cases}};
    xsa::write_file_atomic(out_dir + "/manifest.json", manifest.dump(2) + "\n");
    std::printf("wrote %zu cases to %s\n", cases.size(), out_dir.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xsa-reference-export: %s\n", e.what());
    return 1;
  }
  return 0;
}
