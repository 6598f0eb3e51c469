#include "xsa/records/exported_model.h"

#include "xsa/util/error.h"
#include "xsa/util/sha256.h"

namespace xsa {

using json = nlohmann::json;

namespace {

// Typed reads of config.json: a missing key or a wrong type is one line naming the key. The key is a literal
// and the source an lvalue at every call: a reference returned from a call that took a temporary is what
// g++ 14's -Wdangling-reference warns about.
const json& at(const json& doc, const char* key, const std::string& source) {
  if (!doc.is_object() || !doc.contains(key)) throw InputError(source + ": missing key " + key);
  return doc.at(key);
}
template <typename T>
T get(const json& doc, const char* key, const std::string& source) {
  const json& v = at(doc, key, source);
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    throw InputError(source + ": key " + key + " has the wrong type (" + v.dump() + ")");
  }
}

}  // namespace

json model_architecture(const ModelConfig& model, OutputGate output_gate, std::int64_t vocab_size) {
  // The constants are those of src/xsa/model/gpt.h and exclusive_projection.h (a torch test checks them).
  return {{"n_layer", model.n_layer},
          {"d_model", model.d_model},
          {"n_head", model.n_head},
          {"d_head", model.d_head},
          {"mlp_ratio", model.mlp_ratio},
          {"pos", choice_name(model.pos)},
          {"embed_norm", model.embed_norm},
          {"qk_norm", model.qk_norm},
          {"tie_embeddings", model.tie_embeddings},
          {"output_gate", choice_name(output_gate)},
          {"vocab_size", vocab_size},
          {"rope_base", 10000.0},
          {"layer_norm_eps", 1e-5},
          {"qk_norm_eps", 1e-6},
          {"xsa_eps", 1e-6}};
}

std::vector<ExportedLayer> exported_layers(const Config& config, const VariantSpec& variant) {
  const ResolvedVariant resolved = resolve_variant(config.attention, variant);
  std::vector<ExportedLayer> out;
  for (int l = 0; l < config.model.n_layer; ++l) {
    ExportedLayer layer{l, VariantSpec::Kind::kFixed, 0.0};
    if (resolved.modifies(l)) layer = {l, resolved.kind, resolved.initial_lambda};
    out.push_back(layer);
  }
  return out;
}

json to_json(const ExportedModel& m) {
  json layers = json::array();
  for (const auto& l : m.layers) {
    json entry = {{"layer", l.layer}, {"kind", variant_kind_name(l.kind)}};
    const InitialLambda initial = variant_kind(l.kind).initial;
    if (initial == InitialLambda::kSpecLambda) entry["lambda"] = l.lambda;
    if (initial == InitialLambda::kLearnedInit) entry["initial_lambda"] = l.lambda;
    layers.push_back(entry);
  }
  const auto& p = m.provenance;
  return {{"format", kExportFormat},
          {"architecture", m.architecture},
          {"max_len", m.max_len},
          {"variant", {{"name", m.variant}, {"layers", layers}, {"lambda", m.lambda}}},
          {"tokenizer", {{"sha256", m.tokenizer_sha256}, {"bos_id", m.bos_id}, {"eos_id", m.eos_id}}},
          {"provenance",
           {{"run", p.run},
            {"name", p.name},
            {"seed", p.seed},
            {"steps", p.steps},
            {"init_checksum", p.init_checksum},
            {"weights_checksum", p.weights_checksum},
            {"config_sha256", p.config_sha256},
            {"xsa_version", p.xsa_version}}}};
}

ExportedModel parse_exported_model(const json& doc, const std::string& source) {
  if (!doc.is_object()) throw InputError(source + ": not a JSON object");
  const std::string format = get<std::string>(doc, "format", source);
  if (format != kExportFormat)
    throw InputError(source + ": format '" + format + "', expected '" + kExportFormat + "'");
  ExportedModel m;
  m.architecture = at(doc, "architecture", source);
  if (!m.architecture.is_object()) throw InputError(source + ": key architecture is not an object");
  m.max_len = get<std::int64_t>(doc, "max_len", source);
  const json& variant = at(doc, "variant", source);
  const std::string variant_source = source + ": variant";
  m.variant = get<std::string>(variant, "name", variant_source);
  for (const json& l : at(variant, "layers", variant_source)) {
    ExportedLayer layer;
    layer.layer = get<int>(l, "layer", source + ": variant.layers");
    const std::string kind = get<std::string>(l, "kind", source + ": variant.layers");
    const auto known = parse_choice<VariantSpec::Kind>(kind);
    if (!known) throw InputError(source + ": variant.layers: unknown kind '" + kind + "'");
    layer.kind = *known;
    if (l.contains("lambda")) layer.lambda = get<double>(l, "lambda", source + ": variant.layers");
    if (l.contains("initial_lambda"))
      layer.lambda = get<double>(l, "initial_lambda", source + ": variant.layers");
    m.layers.push_back(layer);
  }
  m.lambda = get<std::vector<std::vector<double>>>(variant, "lambda", variant_source);
  const json& tokenizer = at(doc, "tokenizer", source);
  m.tokenizer_sha256 = get<std::string>(tokenizer, "sha256", source + ": tokenizer");
  m.bos_id = get<std::int64_t>(tokenizer, "bos_id", source + ": tokenizer");
  m.eos_id = get<std::int64_t>(tokenizer, "eos_id", source + ": tokenizer");
  const json& p = at(doc, "provenance", source);
  const std::string where = source + ": provenance";
  m.provenance = {get<std::string>(p, "run", where),           get<std::string>(p, "name", where),
                  get<std::uint64_t>(p, "seed", where),        get<std::int64_t>(p, "steps", where),
                  get<std::string>(p, "init_checksum", where), get<std::string>(p, "weights_checksum", where),
                  get<std::string>(p, "config_sha256", where), get<std::string>(p, "xsa_version", where)};
  return m;
}

std::string config_sha256(const Config& config) {
  return sha256_hex(config_identity_json(config).dump());
}

void check_same_architecture(const json& exported, const json& expected, const std::string& source) {
  std::string differs;
  for (const auto& [key, want] : expected.items()) {
    if (exported.contains(key) && exported.at(key) == want) continue;
    differs += std::string(differs.empty() ? "" : ", ") + key + " " +
               (exported.contains(key) ? exported.at(key).dump() : "missing") + " (config " + want.dump() +
               ")";
  }
  for (const auto& [key, value] : exported.items()) {
    (void)value;
    if (!expected.contains(key))
      differs += std::string(differs.empty() ? "" : ", ") + key + " (unknown here)";
  }
  if (!differs.empty())
    throw InputError(source + ": the exported model's architecture differs from the config: " + differs);
}

}  // namespace xsa
