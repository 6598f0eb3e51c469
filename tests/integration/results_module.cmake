# scripts/xsapy/results.py, the one way Python reads xsa's outputs (xsa-inspect's JSON, results.json, log.jsonl), on
# the report fixtures: the files found (xsa-inspect's discovery rule), values and bias metric keys against the
# fixtures read by hand, inspect() against xsa-inspect run directly, one-line errors; standard library only.
add_test(NAME scripts.results_module
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_results_module.py $<TARGET_FILE:xsa-inspect>
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report)
set_tests_properties(scripts.results_module PROPERTIES TIMEOUT 120 LABELS "integration")
