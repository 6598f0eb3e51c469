#include "xsa/records/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "xsa/records/comparison.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/json_input.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace xsa {

std::string variant_group_label(const ExperimentResult& experiment, const RunResult& run) {
  if (!run.label.empty()) return run.label;
  return variant_label(run.spec, run.layers.value_or(std::vector<int>{}),
                       experiment.config.attention.lambda_lr_scale);
}

std::vector<PositionBucket> position_buckets(std::int64_t seq_len) {
  std::vector<PositionBucket> buckets;
  for (std::int64_t first = 1, last = 16; first <= seq_len; first = last + 1, last *= 4)
    buckets.push_back({first, std::min(last, seq_len)});
  return buckets;
}

std::vector<PositionLoss> loss_by_position(const std::vector<double>& position_sums, std::int64_t windows) {
  std::vector<PositionLoss> out;
  if (windows <= 0) return out;
  for (const PositionBucket& b : position_buckets(static_cast<std::int64_t>(position_sums.size()))) {
    double sum = 0;
    for (std::int64_t t = b.first; t <= b.last; ++t) sum += position_sums[t - 1];
    const std::int64_t tokens = windows * (b.last - b.first + 1);
    out.push_back({b, tokens, sum / static_cast<double>(tokens)});
  }
  return out;
}

const RunResult* ExperimentResult::find_run(const std::string& variant) const {
  for (const auto& run : runs)
    if (run.variant == variant) return &run;
  return nullptr;
}

namespace {

// Walks a JSON document and reports the dotted path of whatever is missing or mistyped, so every error is
// one line naming the file and the key.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const { throw InputError(source_ + ": " + what); }

  const json& need(const json& obj, const std::string& key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail("missing key " + join(where, key));
    return *it;
  }
  const json* maybe(const json& obj, const std::string& key) const {
    auto it = obj.find(key);
    return (it == obj.end() || it->is_null()) ? nullptr : &*it;
  }

  double number(const json& v, const std::string& path) const {
    if (!v.is_number()) fail("key " + path + ": expected a number, got " + v.type_name());
    return v.get<double>();
  }
  std::int64_t integer(const json& v, const std::string& path) const {
    if (!v.is_number_integer()) fail("key " + path + ": expected an integer, got " + v.type_name());
    return v.get<std::int64_t>();
  }
  std::uint64_t unsigned_integer(const json& v, const std::string& path) const {
    if (!v.is_number_integer()) fail("key " + path + ": expected an integer, got " + v.type_name());
    if (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)
      fail("key " + path + ": expected a non-negative integer, got " + v.dump());
    return v.get<std::uint64_t>();
  }
  std::optional<std::uint64_t> opt_unsigned(const json& obj, const std::string& key,
                                            const std::string& where) const {
    const json* v = maybe(obj, key);
    return v ? std::optional<std::uint64_t>(unsigned_integer(*v, join(where, key))) : std::nullopt;
  }
  std::string string(const json& v, const std::string& path) const {
    if (!v.is_string()) fail("key " + path + ": expected a string, got " + v.type_name());
    return v.get<std::string>();
  }
  const json& object(const json& v, const std::string& path) const {
    if (!v.is_object()) fail("key " + path + ": expected an object, got " + v.type_name());
    return v;
  }
  const json& array(const json& v, const std::string& path) const {
    if (!v.is_array()) fail("key " + path + ": expected an array, got " + v.type_name());
    return v;
  }

  double need_number(const json& obj, const std::string& key, const std::string& where) const {
    return number(need(obj, key, where), join(where, key));
  }
  std::optional<double> opt_number(const json& obj, const std::string& key, const std::string& where) const {
    const json* v = maybe(obj, key);
    return v ? std::optional<double>(number(*v, join(where, key))) : std::nullopt;
  }
  std::optional<std::int64_t> opt_integer(const json& obj, const std::string& key,
                                          const std::string& where) const {
    const json* v = maybe(obj, key);
    return v ? std::optional<std::int64_t>(integer(*v, join(where, key))) : std::nullopt;
  }

  static std::string join(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }
  static std::string index(const std::string& where, std::size_t i) {
    return where + "[" + std::to_string(i) + "]";
  }

 private:
  std::string source_;
};

std::vector<double> number_list(const Reader& r, const json& v, const std::string& at) {
  r.array(v, at);
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(r.number(v[i], Reader::index(at, i)));
  return out;
}

LayerBias parse_layer_bias(const Reader& r, const json& lj, const std::string& li) {
  r.object(lj, li);
  LayerBias layer;
  layer.layer = static_cast<int>(r.integer(r.need(lj, "layer", li), Reader::join(li, "layer")));
  for (const auto& metric : kBiasMetrics) layer.*metric.member = r.need_number(lj, metric.key, li);
  bool any_dynamics = false;
  for (const auto& metric : kDynamicsMetrics) any_dynamics = any_dynamics || lj.contains(metric.key);
  if (any_dynamics) {  // written since the dynamics were measured: all or none
    layer.dynamics = AttentionDynamics{};
    for (const auto& metric : kDynamicsMetrics)
      layer.dynamics.value().*metric.member = r.need_number(lj, metric.key, li);
  }
  if (const json* heads = r.maybe(lj, "lambda_per_head"))
    layer.lambda_per_head = number_list(r, *heads, Reader::join(li, "lambda_per_head"));
  return layer;
}

// An array of objects, each converted by `item(object, "where[i]")`; absent or null = empty.
template <typename T, typename F>
std::vector<T> optional_list(const Reader& r, const json& doc, const std::string& key,
                             const std::string& where, F item) {
  std::vector<T> out;
  if (const json* list = r.maybe(doc, key)) {
    const std::string at = Reader::join(where, key);
    r.array(*list, at);
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string it = Reader::index(at, i);
      out.push_back(item(r.object((*list)[i], it), it));
    }
  }
  return out;
}

// eval, train_loss and bias: the lists a run grows step by step (and a checkpoint keeps).
RunCurves parse_curves(const Reader& r, const json& doc, const std::string& where) {
  RunCurves c;
  c.eval = optional_list<EvalPoint>(r, doc, "eval", where, [&](const json& e, const std::string& it) {
    return EvalPoint{r.integer(r.need(e, "step", it), Reader::join(it, "step")),
                     r.need_number(e, "val_loss", it)};
  });
  c.train_loss =
      optional_list<TrainLossPoint>(r, doc, "train_loss", where, [&](const json& e, const std::string& it) {
        return TrainLossPoint{r.integer(r.need(e, "step", it), Reader::join(it, "step")),
                              r.need_number(e, "loss", it)};
      });

  c.bias = optional_list<BiasPoint>(r, doc, "bias", where, [&](const json& b, const std::string& it) {
    BiasPoint point;
    point.step = r.integer(r.need(b, "step", it), Reader::join(it, "step"));
    const std::string lat = Reader::join(it, "layers");
    const json& layers = r.array(r.need(b, "layers", it), lat);
    for (std::size_t l = 0; l < layers.size(); ++l)
      point.layers.push_back(parse_layer_bias(r, layers[l], Reader::index(lat, l)));
    return point;
  });
  return c;
}

RunResult parse_run(const Reader& r, const json& doc, const std::string& where) {
  r.object(doc, where);
  RunResult run;
  run.variant = r.string(r.need(doc, "variant", where), Reader::join(where, "variant"));

  // Spec precedence: the explicit variant_spec, then the top-level "lambda", then the name.
  run.spec = variant_record_from_name(run.variant);
  if (const json* spec = r.maybe(doc, "variant_spec")) {
    const std::string at = Reader::join(where, "variant_spec");
    r.object(*spec, at);
    run.spec.kind = r.string(r.need(*spec, "kind", at), Reader::join(at, "kind"));
    run.spec.lambda = r.opt_number(*spec, "lambda", at);
    run.spec.initial_lambda = r.opt_number(*spec, "initial_lambda", at);
  } else if (auto lambda = r.opt_number(doc, "lambda", where)) {
    run.spec.kind = "fixed";
    run.spec.lambda = lambda;
  }
  if (const json* layers = r.maybe(doc, "layers")) {
    const std::string at = Reader::join(where, "layers");
    if (layers->is_string() && layers->get<std::string>() == "all") {
      run.layers = std::vector<int>{};
    } else {
      if (!layers->is_array()) r.fail("key " + at + ": expected \"all\" or an array of layers");
      run.layers = std::vector<int>{};
      for (std::size_t i = 0; i < layers->size(); ++i)
        run.layers->push_back(static_cast<int>(r.integer((*layers)[i], Reader::index(at, i))));
    }
  }
  if (const json* label = r.maybe(doc, "label")) run.label = r.string(*label, Reader::join(where, "label"));
  run.seed = r.opt_unsigned(doc, "seed", where);
  if (const json* checksum = r.maybe(doc, "init_checksum"))
    run.init_checksum = r.string(*checksum, Reader::join(where, "init_checksum"));

  const std::string fat = Reader::join(where, "final");
  const json& final = r.object(r.need(doc, "final", where), fat);
  run.final.val_loss = r.need_number(final, "val_loss", fat);
  run.final.val_loss_sem = r.opt_number(final, "val_loss_sem", fat);
  run.final.eval_tokens = r.opt_integer(final, "eval_tokens", fat);
  run.final.eval_windows = r.opt_integer(final, "eval_windows", fat);
  run.final.train_loss = r.opt_number(final, "train_loss", fat);
  run.final.loss_by_position = optional_list<PositionLoss>(
      r, final, "loss_by_position", fat, [&](const json& b, const std::string& it) {
        PositionLoss p;
        p.positions.first = r.integer(r.need(b, "first", it), Reader::join(it, "first"));
        p.positions.last = r.integer(r.need(b, "last", it), Reader::join(it, "last"));
        p.tokens = r.integer(r.need(b, "tokens", it), Reader::join(it, "tokens"));
        p.loss = r.need_number(b, "loss", it);
        if (p.positions.first < 1 || p.positions.last < p.positions.first || p.tokens < 0)
          r.fail("key " + it + ": expected 1 <= first <= last and tokens >= 0");
        return p;
      });

  RunCurves curves = parse_curves(r, doc, where);
  run.eval = std::move(curves.eval);
  run.train_loss = std::move(curves.train_loss);
  run.bias = std::move(curves.bias);

  if (const json* samples = r.maybe(doc, "samples")) {
    const std::string at = Reader::join(where, "samples");
    r.array(*samples, at);
    for (std::size_t i = 0; i < samples->size(); ++i)
      run.samples.push_back(r.string((*samples)[i], Reader::index(at, i)));
  }
  if (const json* timing = r.maybe(doc, "timing")) {
    const std::string at = Reader::join(where, "timing");
    r.object(*timing, at);
    RunTiming t;
    t.wall_s = r.opt_number(*timing, "wall_s", at).value_or(0.0);
    t.train_s = r.opt_number(*timing, "train_s", at).value_or(0.0);
    t.tokens_per_s = r.opt_number(*timing, "tokens_per_s", at).value_or(0.0);
    t.step_ms_median = r.opt_number(*timing, "step_ms_median", at).value_or(0.0);
    t.allreduce_ms_median = r.opt_number(*timing, "allreduce_ms_median", at);
    run.timing = t;
  }
  return run;
}

std::string opt_string(const Reader& r, const json& obj, const std::string& key, const std::string& where) {
  const json* v = r.maybe(obj, key);
  return v ? r.string(*v, Reader::join(where, key)) : std::string();
}

void parse_metadata(const Reader& r, const json& doc, ExperimentResult& result) {
  if (const json* v = r.maybe(doc, "version")) {
    r.object(*v, "version");
    result.version = VersionInfo{opt_string(r, *v, "xsa", "version"), opt_string(r, *v, "torch", "version")};
  }
  if (const json* e = r.maybe(doc, "environment")) {
    const std::string at = "environment";
    r.object(*e, at);
    Environment env;
    env.threads = static_cast<int>(r.opt_integer(*e, "threads", at).value_or(0));
    env.blas = opt_string(r, *e, "blas", at);
    env.blas_threads = static_cast<int>(r.opt_integer(*e, "blas_threads", at).value_or(0));
    env.workers = static_cast<int>(r.opt_integer(*e, "workers", at).value_or(0));
    env.host_cores = r.opt_integer(*e, "host_cores", at).value_or(0);
    env.peak_rss_mib = r.opt_number(*e, "peak_rss_mib", at).value_or(0.0);
    env.wall_s = r.opt_number(*e, "wall_s", at).value_or(0.0);
    env.precision = opt_string(r, *e, "precision", at);
    env.precision_requested = opt_string(r, *e, "precision_requested", at);
    if (const json* c = r.maybe(*e, "cpu_bf16")) {
      const std::string cat = at + ".cpu_bf16";
      r.object(*c, cat);
      auto flag = [&](const char* key) {
        const json* f = r.maybe(*c, key);
        if (f && !f->is_boolean()) r.fail("key " + cat + "." + key + ": expected true or false");
        return f && f->get<bool>();
      };
      env.cpu_bf16 = Environment::CpuBf16{flag("avx512_bf16"), flag("amx_bf16"), flag("native")};
    }
    if (auto w = r.opt_integer(*e, "world_size", at)) env.world_size = static_cast<int>(*w);
    env.backend = opt_string(r, *e, "backend", at);
    result.environment = env;
  }
  if (const json* d = r.maybe(doc, "data")) {
    const std::string at = "data";
    r.object(*d, at);
    DataInfo data;
    data.dir = opt_string(r, *d, "dir", at);
    data.vocab_size = r.opt_integer(*d, "vocab_size", at).value_or(0);
    data.train_tokens = r.opt_integer(*d, "train_tokens", at).value_or(0);
    data.val_tokens = r.opt_integer(*d, "val_tokens", at).value_or(0);
    data.tokenizer_sha256 = opt_string(r, *d, "tokenizer_sha256", at);
    result.data = data;
  }
}

}  // namespace

ExperimentResult parse_results(const json& doc, const std::string& source) {
  Reader r(source);
  if (!doc.is_object()) r.fail(std::string("expected a JSON object (results.json), got ") + doc.type_name());
  const std::string schema = r.string(r.need(doc, "schema", ""), "schema");
  if (schema != kResultsSchema)
    r.fail("key schema: expected \"" + std::string(kResultsSchema) + "\", got \"" + schema + "\"");

  ExperimentResult result;
  result.source = source;
  fs::path parent = fs::path(source).parent_path();
  result.name = r.string(r.need(doc, "name", ""), "name");
  result.label = parent.filename().empty() ? result.name : parent.filename().string();

  result.config = config_from_record(r.object(r.need(doc, "config", ""), "config"), source + ": config");
  parse_metadata(r, doc, result);

  const json& runs = r.array(r.need(doc, "runs", ""), "runs");
  if (runs.empty()) r.fail("key runs: expected at least one run, got an empty array");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    result.runs.push_back(parse_run(r, runs[i], Reader::index("runs", i)));
    if (!result.runs.back().seed) result.runs.back().seed = result.config.seed;
  }

  if (const json* comparisons = r.maybe(doc, "comparisons")) {
    r.array(*comparisons, "comparisons");
    for (std::size_t i = 0; i < comparisons->size(); ++i) {
      const std::string at = Reader::index("comparisons", i);
      const json& c = r.object((*comparisons)[i], at);
      Comparison cmp;
      cmp.baseline = r.string(r.need(c, "baseline", at), at + ".baseline");
      cmp.variant = r.string(r.need(c, "variant", at), at + ".variant");
      cmp.delta_val_loss = r.need_number(c, "delta_val_loss", at);
      cmp.delta_val_loss_sem = r.opt_number(c, "delta_val_loss_sem", at);
      cmp.improvement_pct = r.need_number(c, "improvement_pct", at);
      if (!result.find_run(cmp.baseline) || !result.find_run(cmp.variant))
        r.fail("key " + at + ": names a variant that is not in runs (" + cmp.baseline + " vs " + cmp.variant +
               ")");
      result.comparisons.push_back(std::move(cmp));
    }
  } else {
    // Older or hand-made files: derive the comparisons the trainer would have written (each vs the first).
    for (std::size_t i = 1; i < result.runs.size(); ++i)
      result.comparisons.push_back(compare_runs(result.runs.front(), result.runs[i]));
  }
  return result;
}

ExperimentResult parse_results(const std::string& text, const std::string& source) {
  json doc = parse_json_input(text, source);
  if (doc.is_discarded()) throw InputError(source + ": not valid JSON (expected a results.json)");
  return parse_results(doc, source);
}

ExperimentResult read_results(const std::string& path) {
  return parse_results(read_file(path), path);
}

namespace {

json optional_number(const std::optional<double>& v) {
  return v ? json(*v) : json();
}

}  // namespace

json to_json(const RunResult& run) {
  json j;
  j["variant"] = run.variant;
  j["variant_spec"] = {{"kind", run.spec.kind}, {"lambda", optional_number(run.spec.lambda)}};
  if (run.spec.initial_lambda) j["variant_spec"]["initial_lambda"] = *run.spec.initial_lambda;
  j["lambda"] = optional_number(run.spec.lambda);
  if (run.layers) j["layers"] = run.layers->empty() ? json("all") : json(*run.layers);
  if (!run.label.empty()) j["label"] = run.label;
  if (run.seed) j["seed"] = *run.seed;
  j["init_checksum"] = run.init_checksum;
  j["eval"] = json::array();
  for (const auto& e : run.eval) j["eval"].push_back({{"step", e.step}, {"val_loss", e.val_loss}});
  j["train_loss"] = json::array();
  for (const auto& t : run.train_loss) j["train_loss"].push_back({{"step", t.step}, {"loss", t.loss}});
  json final = {{"val_loss", run.final.val_loss}};
  if (run.final.val_loss_sem) final["val_loss_sem"] = *run.final.val_loss_sem;
  if (run.final.eval_tokens) final["eval_tokens"] = *run.final.eval_tokens;
  if (run.final.eval_windows) final["eval_windows"] = *run.final.eval_windows;
  if (run.final.train_loss) final["train_loss"] = *run.final.train_loss;
  if (!run.final.loss_by_position.empty()) {
    json buckets = json::array();
    for (const auto& b : run.final.loss_by_position)
      buckets.push_back(
          {{"first", b.positions.first}, {"last", b.positions.last}, {"tokens", b.tokens}, {"loss", b.loss}});
    final["loss_by_position"] = buckets;
  }
  j["final"] = final;
  j["bias"] = json::array();
  for (const auto& point : run.bias) {
    json layers = json::array();
    for (const auto& l : point.layers) {
      json lj = {{"layer", l.layer}};
      for (const auto& metric : kBiasMetrics) lj[metric.key] = l.*metric.member;
      if (l.dynamics)
        for (const auto& metric : kDynamicsMetrics) lj[metric.key] = l.dynamics.value().*metric.member;
      if (!l.lambda_per_head.empty()) lj["lambda_per_head"] = l.lambda_per_head;
      layers.push_back(lj);
    }
    j["bias"].push_back({{"step", point.step}, {"layers", layers}});
  }
  j["samples"] = run.samples;
  if (run.timing) {
    j["timing"] = {{"wall_s", run.timing->wall_s},
                   {"train_s", run.timing->train_s},
                   {"tokens_per_s", run.timing->tokens_per_s},
                   {"step_ms_median", run.timing->step_ms_median}};
    if (run.timing->allreduce_ms_median)
      j["timing"]["allreduce_ms_median"] = *run.timing->allreduce_ms_median;
  }
  return j;
}

RunResult parse_run_result(const json& run, const std::string& source) {
  return parse_run(Reader(source), run, "run");
}

RunCurves parse_run_curves(const json& doc, const std::string& source) {
  const Reader r(source);
  r.object(doc, "run");
  return parse_curves(r, doc, "run");
}

json to_json(const ExperimentResult& result) {
  json doc;
  doc["schema"] = kResultsSchema;
  doc["name"] = result.name;
  doc["config"] = config_to_json(result.config);
  if (result.version) doc["version"] = {{"xsa", result.version->xsa}, {"torch", result.version->torch}};
  if (const auto& e = result.environment) {
    doc["environment"] = {{"threads", e->threads},
                          {"blas", e->blas},
                          {"blas_threads", e->blas_threads},
                          {"workers", e->workers},
                          {"host_cores", e->host_cores},
                          {"peak_rss_mib", e->peak_rss_mib},
                          {"wall_s", e->wall_s}};
    if (!e->precision.empty()) doc["environment"]["precision"] = e->precision;
    if (!e->precision_requested.empty()) doc["environment"]["precision_requested"] = e->precision_requested;
    if (e->cpu_bf16)
      doc["environment"]["cpu_bf16"] = {{"avx512_bf16", e->cpu_bf16->avx512_bf16},
                                        {"amx_bf16", e->cpu_bf16->amx_bf16},
                                        {"native", e->cpu_bf16->native}};
    if (e->world_size) doc["environment"]["world_size"] = *e->world_size;
    if (!e->backend.empty()) doc["environment"]["backend"] = e->backend;
  }
  if (const auto& d = result.data) {
    doc["data"] = {{"dir", d->dir},
                   {"vocab_size", d->vocab_size},
                   {"train_tokens", d->train_tokens},
                   {"val_tokens", d->val_tokens},
                   {"tokenizer_sha256", d->tokenizer_sha256}};
  }
  doc["runs"] = json::array();
  for (const auto& run : result.runs) doc["runs"].push_back(to_json(run));
  doc["comparisons"] = json::array();
  for (const auto& c : result.comparisons) {
    json cj = {{"baseline", c.baseline},
               {"variant", c.variant},
               {"delta_val_loss", c.delta_val_loss},
               {"improvement_pct", c.improvement_pct}};
    if (c.delta_val_loss_sem) cj["delta_val_loss_sem"] = *c.delta_val_loss_sem;
    doc["comparisons"].push_back(cj);
  }
  return doc;
}

}  // namespace xsa
