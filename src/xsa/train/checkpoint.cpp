#include "xsa/train/checkpoint.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <exception>

#include "xsa/util/error.h"
#include "xsa/util/fs.h"

namespace xsa {

using json = nlohmann::json;

json checkpoint_identity(const Config& cfg, const TokenDataset& data, const std::string& precision) {
  json inputs = data.meta.raw.value("inputs", json::array());
  // Bit-identical continuation also needs the same thread count (reductions may split differently) and the
  // same precision actually used (the identity has no runtime section: workers do not matter).
  json identity = {{"config", config_identity_json(cfg)},
                   {"threads", cfg.runtime.threads},
                   {"precision", precision},
                   {"vocab_size", data.meta.vocab_size},
                   {"train_tokens", data.meta.train_tokens},
                   {"val_tokens", data.meta.val_tokens},
                   {"tokenizer_sha256", data.meta.tokenizer_sha256},
                   {"inputs", inputs}};
  // ... and the same device; named only off the CPU, so checkpoints written before runtime.device resume.
  if (cfg.runtime.device != DeviceKind::kCpu) identity["device"] = choice_name(cfg.runtime.device);
  return identity;
}

void save_checkpoint(const std::string& path, Gpt& model, torch::optim::Optimizer& optimizer,
                     const json& identity, const json& progress) {
  json state = progress;
  state["identity"] = identity;
  torch::serialize::OutputArchive archive, model_archive, optim_archive;
  model->save(model_archive);
  optimizer.save(optim_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optim_archive);
  archive.write("state", c10::IValue(state.dump()));
  std::string bytes;
  archive.save_to([&bytes](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  write_file_atomic(path, bytes);
}

namespace {

// " config.train threads" for the keys of `want` that `had` lacks or holds differently.
std::string identity_differences(const json& had, const json& want) {
  std::string differs;
  for (const auto& [key, value] : want.items()) {
    if (had.contains(key) && had.at(key) == value) continue;
    if (key == "config" && had.contains(key)) {
      for (const auto& [section, v] : value.items()) {
        if (!had.at(key).contains(section) || had.at(key).at(section) != v) differs += " config." + section;
      }
    } else {
      differs += " " + key;
    }
  }
  return differs;
}

json load_checked(const std::string& path, Gpt& model, torch::optim::Optimizer& optimizer,
                  const json& identity) {
  torch::serialize::InputArchive archive;
  archive.load_from(path, model->device());  // tensors straight onto the weights' device
  c10::IValue state_value;
  archive.read("state", state_value);
  json state = json::parse(state_value.toStringRef());
  json had = state.at("identity");
  // A checkpoint written before a config key existed lacks it; the key's default is what that run did.
  if (had.contains("config")) had["config"] = config_json_with_defaults(had["config"]);
  if (had.value("variant", json()) != identity.value("variant", json())) {
    throw InputError(path + ": holds variant " + had.value("variant", json("(none recorded)")).dump() +
                     ", not " + identity.value("variant", json()).dump() +
                     " (a checkpoint of another variant or an older xsa); use --force to start over");
  }
  if (had != identity) {
    throw InputError(path + ": checkpoint was made with a different config or data (differs in:" +
                     identity_differences(had, identity) + "); use --force to start over");
  }
  torch::serialize::InputArchive model_archive, optim_archive;
  archive.read("model", model_archive);
  archive.read("optimizer", optim_archive);
  model->load(model_archive);
  optimizer.load(optim_archive);
  state.erase("identity");
  return state;
}

}  // namespace

// Runs `load`, turning anything LibTorch or the JSON parser throws into one line naming the checkpoint.
template <typename Load>
json damaged_is_input_error(const std::string& path, const char* advice, Load&& load) {
  try {
    return load();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    throw InputError(path + ": damaged or incompatible checkpoint (" + what + ")" + advice);
  }
}

json load_checkpoint(const std::string& path, Gpt& model, torch::optim::Optimizer& optimizer,
                     const json& identity) {
  return damaged_is_input_error(path, "; use --force to start over",
                                [&] { return load_checked(path, model, optimizer, identity); });
}

json load_checkpoint_weights(const std::string& path, Gpt& model) {
  return damaged_is_input_error(path, "", [&] {
    torch::serialize::InputArchive archive, model_archive;
    archive.load_from(path, model->device());  // tensors straight onto the weights' device
    c10::IValue state_value;
    archive.read("state", state_value);
    json state = json::parse(state_value.toStringRef());
    archive.read("model", model_archive);
    model->load(model_archive);
    return state;
  });
}

}  // namespace xsa
