# Every results table of the documentation (docs/findings.md's science tables, docs/performance.md's bench tables,
# and any block README.md or another docs/*.md holds later) is a block that names its command (xsa-inspect,
# scripts/science/science_compute.py for the compute table, scripts/perf/bench.py --show for a committed bench.json); the
# blocks must equal what that command prints from the committed results/ (no hand-copied numbers).
# scripts/dev/readme_tables.py --update regenerates them. --docs takes every *.md of docs/ when the test runs.
add_test(NAME readme.tables_match_results
  COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/dev/readme_tables.py --check
    --readme ${CMAKE_SOURCE_DIR}/README.md --docs ${CMAKE_SOURCE_DIR}/docs --inspect $<TARGET_FILE:xsa-inspect>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})

# Every relative link of README.md, data/README.md and docs/*.md leads to a file of the repository, and every
# anchor to a heading of its target (GitHub's slugs) or an <a id>; one line per dead link, "N passed, M failed".
add_test(NAME readme.links_resolve
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_links.py ${CMAKE_SOURCE_DIR})
# The check itself catches a dead file, anchor and image in a made-up tree (and passes its good links).
add_test(NAME readme.links_check_catches_a_dead_link
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_links.py --self-test)

# The headline statistics recomputed without xsa-inspect: straight from each committed results.json (final val
# losses, bias metrics, config), with its own pairing, t quantiles and least-squares slopes, the n, mean
# improvement, 95% CI and mean Δ of every budget, length, λ and lr group, the budget, length and size trends, the
# change of the budget trend, the lr selection, the final bias metrics and the paired bias changes between budgets
# must equal xsa-inspect's.
add_test(NAME readme.findings_recomputed
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_findings.py $<TARGET_FILE:xsa-inspect>
    ${CMAKE_SOURCE_DIR}/results)
# Its variant labels (the grouping key it pairs by) against hand-written ones, "@<layers>" included.
add_test(NAME readme.findings_labels
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_findings_labels.py)

# readme_tables.py --check on a fixture README: its output and exit code (PASS_REGULAR_EXPRESSION ignores the exit
# code, so the shell prints it for the pattern to match) must match `expected`.
function(add_readme_check_test name fixture expected)
  add_test(NAME ${name}
    COMMAND sh -c "/usr/bin/python3 \"$0\" --check --readme \"$1\" --inspect \"$2\" 2>&1; echo \"exit code $?\""
      ${CMAKE_SOURCE_DIR}/scripts/dev/readme_tables.py ${CMAKE_SOURCE_DIR}/tests/fixtures/readme/${fixture}
      $<TARGET_FILE:xsa-inspect>
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${expected}")
endfunction()

# The check itself catches a hand edit: in fixtures/readme/README.md the xsa-inspect block is what xsa-inspect
# prints and the science_compute block has one number changed, so --check must report exactly that block and exit 1.
add_readme_check_test(readme.tables_check_catches_an_edit README.md
  "README block `science_compute tests/fixtures/report` differs[^\n]*\n.*\\+\\| budget \\| 4 \\| 8 \\| 1\\.0M.*readme_tables: 2 blocks checked, 1 differ\nexit code 1\n")

# A closing marker of the wrong tool is a typo that would leave the table unchecked: a one-line error naming the
# file, line and marker, and exit 1.
add_readme_check_test(readme.tables_rejects_a_stray_marker stray_marker.md
  "stray_marker.md:6: `<!-- xsa-inspect tests/fixtures/report/budget --section by_budget -->` opens or closes no block[^\n]*\nexit code 1\n")

# A bench block (scripts/perf/bench.py --show of a committed bench.json) with one number changed is caught too.
add_readme_check_test(readme.tables_check_catches_an_edited_bench_block bench_edited.md
  "README block `bench tests/fixtures/readme/bench.json` differs[^\n]*\n.*-\\| 2 layers, d 128 \\(default\\) \\| 128 x 32 \\| 13,096 .*readme_tables: 1 blocks checked, 1 differ\nexit code 1\n")

# bench.py --show renders a bench.json's machine line, matmul peaks, step, fused kernel and length and size tables,
# and its data-parallel table with and without DDP's columns: every cell and ratio of a hand-made file against
# hand-worked values, and a bad file refused with one line naming it.
add_test(NAME readme.bench_show_table
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_bench_show.py ${CMAKE_SOURCE_DIR}/scripts/perf/bench.py)

# A wildcard argument stands for the paths it matches, as the shell would expand it: the fixture's block holds the
# budget fixture's by_budget row at 100 steps only (the 400-step points left out), so it matches; a wildcard that
# matches nothing is one line naming the file, line and pattern, and exit 2.
add_readme_check_test(readme.tables_expand_wildcards wildcard.md
  "readme_tables: 1 blocks checked, 0 differ\nexit code 0\n")
add_readme_check_test(readme.tables_wildcard_matching_nothing_exits_2 wildcard_no_match.md
  "^[^\n]*wildcard_no_match.md:3: [^\n]*'tests/fixtures/report/budget/steps999-\\*' matches no path in [^\n]*\nexit code 2\n")
