# An independent reference (GitHub issue 3): the C++ model's logits, loss, gradients and bias metrics,
# recomputed by a separate PyTorch implementation (scripts/reference/model.py).
#   reference.export           xsa-reference-export writes small cases to a dump folder (fixture setup)
#   reference.compare_pytorch  /usr/bin/python3 scripts/reference/check_against_cpp.py compares them
# /usr/bin/python3 with torch is required (scripts/setup.sh installs python3-torch); without it the
# compare test fails with a message saying so.
add_executable(xsa-reference-export ${CMAKE_CURRENT_SOURCE_DIR}/reference_export.cpp)
target_compile_options(xsa-reference-export PRIVATE ${XSA_WARNINGS})
target_link_libraries(xsa-reference-export PRIVATE xsa_torch)

set(XSA_REFERENCE_DUMP ${CMAKE_BINARY_DIR}/tests/reference-dump)
set(XSA_REFERENCE_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with torch for the PyTorch reference check")

add_test(NAME reference.export COMMAND xsa-reference-export ${XSA_REFERENCE_DUMP})
set_tests_properties(reference.export PROPERTIES FIXTURES_SETUP xsa_reference_dump TIMEOUT 120)

add_test(NAME reference.compare_pytorch
  COMMAND ${XSA_REFERENCE_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/reference/check_against_cpp.py ${XSA_REFERENCE_DUMP})
set_tests_properties(reference.compare_pytorch PROPERTIES FIXTURES_REQUIRED xsa_reference_dump TIMEOUT 300)
