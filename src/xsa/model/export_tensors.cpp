#include "xsa/model/export_tensors.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <cstring>
#include <vector>

#include "xsa/records/safetensors.h"
#include "xsa/util/error.h"

namespace xsa {

std::string model_safetensors(const Gpt& model, const std::map<std::string, std::string>& metadata) {
  std::vector<torch::Tensor> keep;  // contiguous fp32 copies, alive until serialised
  std::vector<safetensors::F32Tensor> tensors;
  for (const auto& item : model->named_parameters(true)) {
    keep.push_back(item.value().detach().to(torch::kCPU, torch::kFloat32).contiguous());
    const auto sizes = keep.back().sizes();
    tensors.push_back(
        {item.key(), std::vector<std::int64_t>(sizes.begin(), sizes.end()), keep.back().data_ptr<float>()});
  }
  return safetensors::serialize(tensors, metadata);
}

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace

void load_model_safetensors(Gpt& model, const std::string& bytes, const std::string& source,
                            bool with_variant_parameters) {
  const safetensors::File file = safetensors::parse(bytes, source);
  auto params = model->named_parameters(true);
  // Check everything before the first copy, so a refused file leaves the model as it was.
  std::vector<std::pair<torch::Tensor, const safetensors::TensorEntry*>> copies;
  for (const auto& item : params) {
    const std::string& name = item.key();
    const bool variant_parameter = is_variant_parameter(name);
    const safetensors::TensorEntry* entry = file.find(name);
    if (entry == nullptr) {
      if (variant_parameter) continue;  // an export of another variant: this one's parameters start fresh
      throw InputError(source + ": no tensor '" + name + "', which the model has");
    }
    if (entry->dtype != safetensors::Dtype::kF32)
      throw InputError(source + ": tensor '" + name + "' is " + safetensors::dtype_name(entry->dtype) +
                       ", expected F32");
    const auto sizes = item.value().sizes();
    const std::vector<std::int64_t> want(sizes.begin(), sizes.end());
    if (entry->shape != want)
      throw InputError(source + ": tensor '" + name + "' has shape " + shape_text(entry->shape) +
                       ", the model's is " + shape_text(want));
    if (!variant_parameter || with_variant_parameters) copies.emplace_back(item.value(), entry);
  }
  for (const auto& entry : file.tensors) {
    if (params.find(entry.name) == nullptr && !is_variant_parameter(entry.name))
      throw InputError(source + ": tensor '" + entry.name + "' is not a parameter of this model");
  }
  torch::NoGradGuard no_grad;
  for (auto& [param, entry] : copies) {
    auto dst = param.detach();
    TORCH_CHECK(dst.is_contiguous() && dst.scalar_type() == torch::kFloat32,
                "parameter is not contiguous fp32");
    std::memcpy(dst.data_ptr<float>(), bytes.data() + file.data_offset + entry->begin,
                entry->end - entry->begin);
  }
}

}  // namespace xsa
