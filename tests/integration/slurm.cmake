# Scale-out test: a private single-node Slurm cluster runs a sweep as a job array (tests/integration/
# slurm_test.sh). Skips (exit 77) on a machine without Slurm packages; with CI=true it installs them through
# scripts/setup.sh --slurm and never skips. Serial: it starts daemons and uses both cores.
add_test(NAME integration.slurm_array_sweep
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/slurm_test.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
    ${CMAKE_BINARY_DIR}/test-data/small)
set_tests_properties(integration.slurm_array_sweep PROPERTIES
  SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 1500 FIXTURES_REQUIRED small_data LABELS "integration;slow")
