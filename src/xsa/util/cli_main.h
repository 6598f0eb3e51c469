#pragma once
// Shared main() wrapper: turns exceptions into one stderr line and the documented exit code.
#include <CLI/CLI.hpp>
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
  } catch (const Interrupted& e) {
    std::cerr << program << ": interrupted: " << e.what() << "\n";
    return kExitInterrupted;
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

// Parses the command line with CLI11 and runs `fn` under run_guarded. --help/--version print and exit 0;
// a parse error is one line on stderr and exit code 2 (CLI11's own multi-line hints are cut).
template <typename Fn>
int parse_and_run(CLI::App& app, int argc, char** argv, const char* program, Fn&& fn) {
  return run_guarded(program, [&]() -> int {
    try {
      app.parse(argc, argv);
    } catch (const CLI::Success& e) {
      return app.exit(e);  // --help / --version
    } catch (const CLI::ParseError& e) {
      std::string what = e.what();
      if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
      throw InputError(what + " (see --help)");
    }
    return fn();
  });
}

// The whole main() of a command (CLI11's subcom_in_files shape): one options struct, the setup function that
// declares its options, and the function that runs it.
template <typename Options, typename Setup, typename Run>
int cli_main(int argc, char** argv, const char* program, Setup setup, Run run) {
  CLI::App app{program};
  Options options;
  setup(app, options);
  return parse_and_run(app, argc, argv, program, [&] { return run(options); });
}

}  // namespace xsa
