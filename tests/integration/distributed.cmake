# Data-parallel ranks on c10d/Gloo (docs/guide.md "Scale-out"), on 127.0.0.1 with the small data of train.cmake.
add_executable(xsa_tests_distributed_e2e ${CMAKE_CURRENT_LIST_DIR}/distributed_e2e_test.cpp)
target_include_directories(xsa_tests_distributed_e2e PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../support)
target_compile_options(xsa_tests_distributed_e2e PRIVATE ${XSA_WARNINGS})
target_link_libraries(xsa_tests_distributed_e2e PRIVATE GTest::gtest GTest::gtest_main nlohmann_json::nlohmann_json)
target_compile_definitions(xsa_tests_distributed_e2e PRIVATE
  XSA_TRAIN_BIN="$<TARGET_FILE:xsa-train>" XSA_BENCH_BIN="$<TARGET_FILE:xsa-bench>" XSA_TEST_DATA="${CMAKE_BINARY_DIR}/test-data/small"
  XSA_BINARY_DIR="${CMAKE_BINARY_DIR}" XSA_FIXTURES_DIR="${CMAKE_CURRENT_LIST_DIR}/../fixtures")
add_dependencies(xsa_tests_distributed_e2e xsa-train xsa-bench)
gtest_discover_tests(xsa_tests_distributed_e2e WORKING_DIRECTORY ${CMAKE_BINARY_DIR} DISCOVERY_TIMEOUT 60
  TEST_PREFIX "distributed." PROPERTIES FIXTURES_REQUIRED small_data LABELS "integration;distributed")
