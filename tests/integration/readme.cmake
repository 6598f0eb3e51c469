# Every results table in README.md is a block that names its xsa-inspect command; the blocks must equal what
# that command prints from the committed results/ (no hand-copied numbers). scripts/readme_tables.py --update
# regenerates them.
add_test(NAME readme.tables_match_results
  COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/readme_tables.py --check
    --readme ${CMAKE_SOURCE_DIR}/README.md --inspect $<TARGET_FILE:xsa-inspect>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})

# The headline statistics recomputed without xsa-inspect: straight from each committed results.json (final val
# losses, config), with its own pairing, t quantiles and least-squares slopes, the n, mean improvement, 95% CI
# and mean Δ of every budget, length and λ group and the budget and length trends must equal xsa-inspect's.
add_test(NAME readme.findings_recomputed
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_findings.py $<TARGET_FILE:xsa-inspect>
    ${CMAKE_SOURCE_DIR}/results)

# The check itself catches a hand edit: in fixtures/readme/README.md the xsa-inspect block is what xsa-inspect
# prints and the science_compute block has one number changed, so --check must report exactly one differing block
# (and exit 1, which PASS_REGULAR_EXPRESSION ignores; the count is the assertion).
add_test(NAME readme.tables_check_catches_an_edit
  COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/readme_tables.py --check
    --readme ${CMAKE_SOURCE_DIR}/tests/fixtures/readme/README.md --inspect $<TARGET_FILE:xsa-inspect>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(readme.tables_check_catches_an_edit PROPERTIES
  PASS_REGULAR_EXPRESSION "README block `science_compute tests/fixtures/report` differs[^\n]*\n.*\\+\\| budget \\| 4 \\| 8 \\| 1\\.0M.*readme_tables: 2 blocks checked, 1 differ")
