# Integration tests of xsa-prepare on whole corpora: the generated story corpus of the small_data fixture
# (integration.prepare_generated_stories, always) and the real TinyStories pieces in ${XSA_SHARED_TINYSTORIES}
# (integration.prepare_shared_tinystories, registered only where they exist: a user's machine has none).
#
# This one file plays two roles: included by tests/CMakeLists.txt it registers the tests; run with
# `cmake -P` (CMAKE_SCRIPT_MODE_FILE set) it is the test on one corpus folder (train/*.txt, val/*.txt,
# MANIFEST.json): prepare twice (byte-identical?), story counts against MANIFEST.json, and decoding val.bin must
# give back the val text exactly.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  # The CLI tests in xsa_tests_prepare run the xsa-prepare executable.
  if(TARGET xsa_tests_prepare)
    add_dependencies(xsa_tests_prepare xsa-prepare)
  endif()
  add_test(NAME integration.prepare_generated_stories
    COMMAND ${CMAKE_COMMAND}
      -DXSA_PREPARE=$<TARGET_FILE:xsa-prepare> -DSHARED=${XSA_TEST_STORIES} -DVOCAB=512
      -DWORK=${CMAKE_BINARY_DIR}/integration/prepare_generated -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(integration.prepare_generated_stories PROPERTIES
    FIXTURES_REQUIRED small_data TIMEOUT 300 LABELS "integration")
  if(EXISTS "${XSA_SHARED_TINYSTORIES}/MANIFEST.json")
    add_test(NAME integration.prepare_shared_tinystories
      COMMAND ${CMAKE_COMMAND}
        -DXSA_PREPARE=$<TARGET_FILE:xsa-prepare> -DSHARED=${XSA_SHARED_TINYSTORIES} -DVOCAB=4096
        -DWORK=${CMAKE_BINARY_DIR}/integration/prepare -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(integration.prepare_shared_tinystories PROPERTIES TIMEOUT 900 LABELS "integration;slow")
  else()
    message(STATUS "integration.prepare_shared_tinystories not registered: no ${XSA_SHARED_TINYSTORIES}/MANIFEST.json")
  endif()
  return()
endif()

# ---- script mode: the test itself ----
if(NOT EXISTS "${SHARED}/MANIFEST.json")
  message(FATAL_ERROR "${SHARED}/MANIFEST.json not found")
endif()

file(GLOB train_files "${SHARED}/train/*.txt")
file(GLOB val_files "${SHARED}/val/*.txt")
list(SORT train_files)
list(SORT val_files)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

foreach(out first second)
  string(TIMESTAMP started "%s")
  execute_process(
    COMMAND "${XSA_PREPARE}" --train ${train_files} --val ${val_files} --vocab-size ${VOCAB} --out "${WORK}/${out}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE progress ERROR_VARIABLE errors)
  string(TIMESTAMP finished "%s")
  math(EXPR took "${finished} - ${started}")
  message("prepare into ${out}: exit ${rc}, ${took} s\n${progress}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xsa-prepare failed (${rc}): ${errors}")
  endif()
endforeach()

# Determinism: every output byte-identical although written to different folders.
foreach(name meta.json pieces.json tokenizer.model train.bin val.bin)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/first/${name}" "${WORK}/second/${name}"
    RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "${name} differs between two prepares of the same inputs")
  endif()
endforeach()

# Story counts against the manifest (independent of our story splitting).
file(READ "${SHARED}/MANIFEST.json" manifest)
string(JSON file_count LENGTH "${manifest}" files)
set(expected_train 0)
set(expected_val 0)
math(EXPR last "${file_count} - 1")
foreach(i RANGE ${last})
  string(JSON path GET "${manifest}" files ${i} path)
  string(JSON stories GET "${manifest}" files ${i} stories)
  if(path MATCHES "^train/")
    math(EXPR expected_train "${expected_train} + ${stories}")
  elseif(path MATCHES "^val/")
    math(EXPR expected_val "${expected_val} + ${stories}")
  endif()
endforeach()
file(READ "${WORK}/first/meta.json" meta)
string(JSON train_stories GET "${meta}" stories train)
string(JSON val_stories GET "${meta}" stories val)
string(JSON train_tokens GET "${meta}" train_tokens)
string(JSON val_tokens GET "${meta}" val_tokens)
string(JSON vocab_size GET "${meta}" vocab_size)
message("stories train ${train_stories} (manifest ${expected_train}), val ${val_stories} (manifest ${expected_val}); "
        "tokens train ${train_tokens}, val ${val_tokens}")
if(NOT train_stories EQUAL expected_train OR NOT val_stories EQUAL expected_val)
  message(FATAL_ERROR "story counts differ from ${SHARED}/MANIFEST.json")
endif()
if(NOT vocab_size EQUAL VOCAB)
  message(FATAL_ERROR "vocab_size ${vocab_size}, expected ${VOCAB}")
endif()
file(SIZE "${WORK}/first/train.bin" train_bytes)
math(EXPR expected_bytes "${train_tokens} * 2")
if(NOT train_bytes EQUAL expected_bytes)
  message(FATAL_ERROR "train.bin has ${train_bytes} bytes, meta.json says ${train_tokens} tokens")
endif()

# Round trip: decoding val.bin reproduces the val text files byte for byte.
execute_process(COMMAND "${XSA_PREPARE}" --decode "${WORK}/first" --split val
  OUTPUT_FILE "${WORK}/val_decoded.txt" RESULT_VARIABLE rc ERROR_VARIABLE errors)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xsa-prepare --decode failed (${rc}): ${errors}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E cat ${val_files} OUTPUT_FILE "${WORK}/val_original.txt")
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/val_decoded.txt" "${WORK}/val_original.txt"
  RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "decoding val.bin does not reproduce the val text (${WORK}/val_decoded.txt)")
endif()
file(REMOVE_RECURSE "${WORK}")
message("prepare on ${SHARED}: ok")
