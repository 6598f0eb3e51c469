# End-to-end tests of xsa-train on a small dataset made here: tests/support/make_stories.py writes a
# deterministic story corpus (1,000 train, 60 val stories from a small grammar; no TinyStories text, so the
# tests need nothing beside the clone) and xsa-prepare turns it into tokens (vocab 512), in the build folder.
add_test(NAME train.prepare_small_data
  COMMAND bash -c "set -e; rm -rf '${XSA_TEST_DATA}' '${XSA_TEST_STORIES}'; \
    '${XSA_TEST_PYTHON}' '${CMAKE_SOURCE_DIR}/tests/support/make_stories.py' --out '${XSA_TEST_STORIES}'; \
    '$<TARGET_FILE:xsa-prepare>' --train '${XSA_TEST_STORIES}/train/stories.txt' \
      --val '${XSA_TEST_STORIES}/val/stories.txt' --vocab-size 512 --out '${XSA_TEST_DATA}'")
set_tests_properties(train.prepare_small_data PROPERTIES FIXTURES_SETUP small_data)

add_executable(xsa_tests_train_e2e ${CMAKE_CURRENT_LIST_DIR}/train_e2e_test.cpp)
target_include_directories(xsa_tests_train_e2e PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../support)
target_compile_options(xsa_tests_train_e2e PRIVATE ${XSA_WARNINGS})
target_link_libraries(xsa_tests_train_e2e PRIVATE xsa_core GTest::gtest GTest::gtest_main)
target_compile_definitions(xsa_tests_train_e2e PRIVATE
  XSA_TRAIN_BIN="$<TARGET_FILE:xsa-train>" XSA_TEST_DATA="${XSA_TEST_DATA}"
  XSA_SOURCE_DIR="${CMAKE_SOURCE_DIR}" XSA_BINARY_DIR="${CMAKE_BINARY_DIR}" XSA_FIXTURES_DIR="${CMAKE_CURRENT_LIST_DIR}/../fixtures")
add_dependencies(xsa_tests_train_e2e xsa-train xsa-prepare)
gtest_discover_tests(xsa_tests_train_e2e WORKING_DIRECTORY ${CMAKE_BINARY_DIR} DISCOVERY_TIMEOUT 60
  PROPERTIES FIXTURES_REQUIRED small_data)
