#pragma once
// Shared main() wrapper: turns exceptions into one stderr line and the documented exit code.
#include <exception>
#include <iostream>
#include <string>

#include "xsa/util/error.h"

namespace xsa {

template <typename Fn>
int run_guarded(const char* program, Fn&& fn) {
  try {
    return fn();
  } catch (const InputError& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return kExitInput;
  } catch (const RuntimeFailure& e) {
    std::cerr << program << ": failed: " << e.what() << "\n";
    return kExitRuntime;
  } catch (const std::exception& e) {
    std::string what = e.what();
    // LibTorch messages carry a multi-line backtrace: keep the first line only.
    auto nl = what.find('\n');
    if (nl != std::string::npos) what.resize(nl);
    std::cerr << program << ": failed: " << what << "\n";
    return kExitRuntime;
  }
}

}  // namespace xsa
