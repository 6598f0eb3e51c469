# xsa-export and model.init_from end to end (docs/guide.md "Export"): small runs on the generated data,
# every variant exported, read back by Hugging Face's safetensors where Debian packages it (13 and later; the
# test requires it there) or the reference reader, the reference model rebuilt from the export checked
# against the C++ model's logits (xsa-export-logits) and the recorded val loss; bad input refused.
add_executable(xsa-export-logits ${CMAKE_CURRENT_LIST_DIR}/export_logits.cpp)
target_compile_options(xsa-export-logits PRIVATE ${XSA_WARNINGS})
target_link_libraries(xsa-export-logits PRIVATE xsa_torch)

add_test(NAME integration.export_roundtrip
  COMMAND ${XSA_PLOT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/export_test.py $<TARGET_FILE:xsa-train>
    $<TARGET_FILE:xsa-export> $<TARGET_FILE:xsa-export-logits> ${XSA_TEST_DATA} ${CMAKE_BINARY_DIR}/test-work/export)
set_tests_properties(integration.export_roundtrip PROPERTIES
  FIXTURES_REQUIRED small_data TIMEOUT 600 LABELS "integration")
