#pragma once
// The model's side of a variant kind (xsa/config/variant.h's kVariantKinds is the config's): the per-head
// parameter a kind trains and λ as a function of it. A new kind with a parameter adds one case to each switch
// here (they have no default, so the compiler names a kind that is missing) and one row to kVariantKinds;
// docs/extending.md walks through it.
#include <torch/types.h>

#include "xsa/config/variant.h"

namespace xsa {

// The initial value of a kind's parameter (H) for a λ that starts at `initial_lambda` (each kind's rule is
// written beside its case in the .cpp). Not for kFixed, which has no parameter.
torch::Tensor initial_variant_parameter(VariantSpec::Kind kind, double initial_lambda, int64_t n_head);

// λ per head (H) from the kind's parameter (H), differentiable. Not for kFixed.
torch::Tensor lambda_from_parameter(VariantSpec::Kind kind, const torch::Tensor& parameter);

}  // namespace xsa
