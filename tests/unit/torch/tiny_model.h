#pragma once
// The model shape the LibTorch unit tests share: small enough for float64 checks and finite differences in
// milliseconds, with two layers and two heads so per-layer and per-head code paths are exercised.
#include "xsa/config/config.h"

namespace xsa::test_fixtures {

inline ModelConfig tiny_model() {
  ModelConfig m;
  m.n_layer = 2;
  m.d_model = 32;
  m.n_head = 2;
  m.d_head = 16;
  return m;
}

}  // namespace xsa::test_fixtures
