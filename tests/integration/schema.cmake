# One results schema end to end: real xsa-train and xsa-sweep output (tiny model on the small data of
# train.cmake) read by xsa-inspect in every format and by scripts/plots/plot_results.py, with the numbers checked
# against results.json read independently (key by key). A field renamed in the writer fails here.
add_test(NAME schema.real_outputs_feed_inspect_and_plots
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/schema_e2e.sh
    $<TARGET_FILE:xsa-train> $<TARGET_FILE:xsa-sweep> $<TARGET_FILE:xsa-inspect> ${XSA_PLOT_PYTHON}
    ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-data/small ${CMAKE_BINARY_DIR}/test-work/schema_e2e)
set_tests_properties(schema.real_outputs_feed_inspect_and_plots PROPERTIES
  FIXTURES_REQUIRED small_data TIMEOUT 600)
