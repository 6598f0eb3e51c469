# The floor plan, checked: docs/ARCHITECTURE.md's "Dependency rules" table is data, and every #include under src/
# must keep it (modules, link worlds, the CMake libraries, each executable's includes, the third-party libraries
# the modules table names); the self-test shows a
# deliberately wrong include (report -> sweep) in a copy of the tree failing the check.
add_test(NAME architecture.includes_follow_the_floor_plan
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_architecture.py ${CMAKE_SOURCE_DIR} --self-test)
set_tests_properties(architecture.includes_follow_the_floor_plan PROPERTIES TIMEOUT 120 LABELS "integration")
