#include "xsa/model/variant_lambda.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace xsa {

torch::Tensor initial_variant_parameter(VariantSpec::Kind kind, double initial_lambda, int64_t n_head) {
  switch (kind) {
    case VariantSpec::Kind::kLearned:  // θ = logit(λ₀), so sigmoid(θ) = λ₀ (attention.learned_init)
      return torch::full({n_head}, std::log(initial_lambda / (1.0 - initial_lambda)));
    case VariantSpec::Kind::kGate:      // g = 0: λ = g, training starts as SA
    case VariantSpec::Kind::kTanhGate:  // α = 0: λ = tanh(α), starts as SA
      return torch::zeros({n_head});
    case VariantSpec::Kind::kFixed:
      break;
  }
  throw std::logic_error("initial_variant_parameter: a fixed λ has no parameter");
}

torch::Tensor lambda_from_parameter(VariantSpec::Kind kind, const torch::Tensor& parameter) {
  switch (kind) {
    case VariantSpec::Kind::kLearned:  // λ = sigmoid(θ)
      return torch::sigmoid(parameter);
    case VariantSpec::Kind::kGate:  // λ = g
      return parameter;
    case VariantSpec::Kind::kTanhGate:  // λ = tanh(α) in (-1, 1), modded-nanogpt's zero-initialised gate
      return torch::tanh(parameter);
    case VariantSpec::Kind::kFixed:
      break;
  }
  throw std::logic_error("lambda_from_parameter: a fixed λ has no parameter");
}

}  // namespace xsa
