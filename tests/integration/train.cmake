# End-to-end tests of xsa-train on a small dataset prepared from the shared TinyStories pieces.
set(XSA_TEST_DATA ${CMAKE_BINARY_DIR}/test-data/small)
# Small on purpose: 942 train stories, the first 60 val stories (cut into the build folder, never the repo).
add_test(NAME train.prepare_small_data
  COMMAND bash -c "set -e; rm -rf '${XSA_TEST_DATA}'; mkdir -p '${CMAKE_BINARY_DIR}/test-data'; \
    if [ ! -d '${XSA_SHARED_TINYSTORIES}' ]; then \
      echo 'no ${XSA_SHARED_TINYSTORIES}: the xsa-train end-to-end tests will be skipped'; exit 0; fi; \
    awk '{print} /^<[|]endoftext[|]>$/ {n++; if (n == 60) exit}' \
      '${XSA_SHARED_TINYSTORIES}/val/v1_valid_head_1000.txt' > '${CMAKE_BINARY_DIR}/test-data/val60.txt'; \
    '$<TARGET_FILE:xsa-prepare>' --train '${XSA_SHARED_TINYSTORIES}/train/v1_train_9k_10k.txt' \
      --val '${CMAKE_BINARY_DIR}/test-data/val60.txt' --vocab-size 512 --out '${XSA_TEST_DATA}'")
set_tests_properties(train.prepare_small_data PROPERTIES FIXTURES_SETUP small_data)

add_executable(xsa_tests_train_e2e ${CMAKE_CURRENT_LIST_DIR}/train_e2e_test.cpp)
target_compile_options(xsa_tests_train_e2e PRIVATE ${XSA_WARNINGS})
target_link_libraries(xsa_tests_train_e2e PRIVATE xsa_core GTest::gtest GTest::gtest_main)
target_compile_definitions(xsa_tests_train_e2e PRIVATE
  XSA_TRAIN_BIN="$<TARGET_FILE:xsa-train>" XSA_TEST_DATA="${XSA_TEST_DATA}"
  XSA_SOURCE_DIR="${CMAKE_SOURCE_DIR}" XSA_BINARY_DIR="${CMAKE_BINARY_DIR}")
add_dependencies(xsa_tests_train_e2e xsa-train xsa-prepare)
gtest_discover_tests(xsa_tests_train_e2e WORKING_DIRECTORY ${CMAKE_BINARY_DIR} DISCOVERY_TIMEOUT 60
  PROPERTIES FIXTURES_REQUIRED small_data)
