#pragma once
// The time bounds of the tests that tell bounded work from work that grows with a number in the input (a
// layer range, a grid, YAML aliases): loose, in seconds, on any machine. Sanitizer builds (ASan + UBSan,
// scripts/dev/sanitize.sh) run such code several times slower (the alias budget test: 6.4 s there, well under 1 s
// in Release), so their bound is ten times as loose; the explosions these tests guard against take minutes or
// exhaust memory.
#include <chrono>

namespace xsa::test_support {

#if defined(__SANITIZE_ADDRESS__)
#define XSA_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define XSA_TEST_SANITIZED 1
#endif
#endif
#ifdef XSA_TEST_SANITIZED
inline constexpr double kLooseSeconds = 20.0;
#else
inline constexpr double kLooseSeconds = 2.0;
#endif

// Seconds `f` takes.
template <class F>
double seconds_of(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace xsa::test_support
