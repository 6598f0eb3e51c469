#include "xsa/model/variant_lambda.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace xsa {

torch::Tensor initial_variant_parameter(VariantSpec::Kind kind, double initial_lambda, int64_t n_head) {
  switch (kind) {
    case VariantSpec::Kind::kLearned:
      return torch::full({n_head}, std::log(initial_lambda / (1.0 - initial_lambda)));
    case VariantSpec::Kind::kGate:
    case VariantSpec::Kind::kTanhGate:
      return torch::zeros({n_head});
    case VariantSpec::Kind::kFixed:
      break;
  }
  throw std::logic_error("initial_variant_parameter: a fixed λ has no parameter");
}

torch::Tensor lambda_from_parameter(VariantSpec::Kind kind, const torch::Tensor& parameter) {
  switch (kind) {
    case VariantSpec::Kind::kLearned:
      return torch::sigmoid(parameter);
    case VariantSpec::Kind::kGate:
      return parameter;
    case VariantSpec::Kind::kTanhGate:
      return torch::tanh(parameter);
    case VariantSpec::Kind::kFixed:
      break;
  }
  throw std::logic_error("lambda_from_parameter: a fixed λ has no parameter");
}

}  // namespace xsa
