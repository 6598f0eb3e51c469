# TensorBoard event files of a real xsa-train run, decoded independently (protoc-generated Python and
# python3-crcmod), including a kill + --resume (tensorboard_test.py says what each check is). Needs Debian's
# python3 with python3-protobuf and python3-crcmod and protoc (scripts/setup.sh installs them).
add_test(NAME integration.tensorboard_events_decode_independently
  COMMAND ${XSA_PLOT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/tensorboard_test.py $<TARGET_FILE:xsa-train>
    ${XSA_TEST_DATA} ${CMAKE_BINARY_DIR}/test-work/tensorboard)
set_tests_properties(integration.tensorboard_events_decode_independently PROPERTIES
  FIXTURES_REQUIRED small_data TIMEOUT 600 LABELS "integration")
