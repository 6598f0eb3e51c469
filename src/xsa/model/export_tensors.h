#pragma once
// A model's parameters as a safetensors file and back (docs/guide.md "Export"): every parameter in fp32 under
// its module name ("wte.weight", "blocks.0.attn.qkv.weight", "blocks.1.attn.xsa_theta", ...; the names
// scripts/reference/model.py's modules have too). The format itself is records/safetensors.h.
#include <map>
#include <string>

#include "xsa/model/gpt.h"

namespace xsa {

// The bytes of model.safetensors for `model`, with `metadata` in its __metadata__.
std::string model_safetensors(const Gpt& model, const std::map<std::string, std::string>& metadata);

// Copies the tensors of a safetensors file (`bytes`, read from `source`) into `model`. Every parameter the
// variants share must be there, in F32 with the model's shape, and the file may hold nothing else but variant
// parameters (the learned λ's θ, the gates); those are loaded when `with_variant_parameters` (the export is
// of the same variant) and otherwise keep their initial values. Anything else is an InputError naming
// `source` and the tensor; `model` is untouched then.
void load_model_safetensors(Gpt& model, const std::string& bytes, const std::string& source,
                            bool with_variant_parameters);

}  // namespace xsa
