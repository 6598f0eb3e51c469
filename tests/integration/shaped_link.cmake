# Data-parallel ranks on a network that is not loopback (GitHub issue 59): scripts/perf/shaped_link.py puts every
# rank in its own network namespace on a bridge, every link shaped by tc (docs/performance.md "A shaped network").
# tests/integration/shaped_link_test.py says what each check is. Both tests need root and iproute2 (ip netns,
# tc): without them they skip (exit 77, reported as skipped, never passed), except with CI=true, where that is a
# failure. Debian's python3: the xsa-train part's torch.distributed check imports torch, and the harness part
# runs the script as an unprivileged user too (a pyenv interpreter under /root would not start there).
#
# The harness: shaping within 10% of the rate, what a rank sees, teardown after runs, failures, timeouts and
# signals (SIGKILL included), bad input. Serial: its throughput measurements want the CPU (~40 s).
add_test(NAME integration.shaped_link_harness
  COMMAND ${XSA_PLOT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/shaped_link_test.py ${CMAKE_SOURCE_DIR}
    ${CMAKE_BINARY_DIR}/test-work/shaped_link_harness harness)
set_tests_properties(integration.shaped_link_harness PROPERTIES
  SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 600 LABELS "integration;distributed")
# 2 xsa-train ranks in shaped namespaces against `xsa-train --ranks 2` on loopback (bit for bit), through the
# Python API scripts/perf/bench.py can import, and a torch.distributed (Gloo) all-reduce across namespaces.
add_test(NAME integration.shaped_link_xsa_train
  COMMAND ${XSA_PLOT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/shaped_link_test.py ${CMAKE_SOURCE_DIR}
    ${CMAKE_BINARY_DIR}/test-work/shaped_link_xsa_train xsa-train $<TARGET_FILE:xsa-train>
    ${CMAKE_BINARY_DIR}/test-data/small ${XSA_PLOT_PYTHON})
set_tests_properties(integration.shaped_link_xsa_train PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 600 FIXTURES_REQUIRED small_data LABELS "integration;distributed")
