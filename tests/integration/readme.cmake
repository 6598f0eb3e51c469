# Every results table in README.md is a block that names its xsa-inspect command; the blocks must equal what
# that command prints from the committed results/ (no hand-copied numbers). scripts/readme_tables.py --update
# regenerates them.
add_test(NAME readme.tables_match_results
  COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/readme_tables.py --check
    --readme ${CMAKE_SOURCE_DIR}/README.md --inspect $<TARGET_FILE:xsa-inspect>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
