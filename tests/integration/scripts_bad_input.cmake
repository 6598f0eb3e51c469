# Every script that reads a file a user names (scripts/perf/bench.py --show, readme_tables.py, plot_results.py,
# plot_findings.py, science_compute.py, profile_summary.py, check_notebook_html.py) on every kind of malformed
# input (wrong-shape JSON, NaN / Infinity / 1e999 / a 401-digit integer for a number, JSON nested 100,000 deep,
# truncated, not UTF-8, not JSON, empty, a folder, a FIFO, a missing path), given as an argument, in a folder it
# walks or in a README block: exit 2, one line on stderr naming the file, no traceback, nothing on stdout or in
# --out, within 60 s (a FIFO read would block). GitHub issue 40. Then every output: one that is, holds or lies
# inside an input refused (exit 2), one that cannot be written (a full disk, /proc/self, a folder in the file's
# place, stdout on /dev/full) one line naming it, exit 1. And the command lines: argparse's errors one line with
# exit 2 in every Python script (xsapy.user_input.ArgumentParser; scripts/reference/options.py's Parser), and the
# values each script checks itself (counts, NaN or infinite numbers, a manifest's shape, a folder that cannot be
# created) refused before any work. Debian's python3 (the plot scripts need python3-matplotlib), as plots.cmake.
add_test(NAME integration.scripts_bad_input_one_line
  COMMAND ${XSA_PLOT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/scripts_bad_input_test.py $<TARGET_FILE:xsa-inspect>
    --python ${XSA_PLOT_PYTHON})
set_tests_properties(integration.scripts_bad_input_one_line PROPERTIES TIMEOUT 600 LABELS "integration")

# Every shell script's command line (scripts/lib/cli.sh): a bad argument -- unknown, a value-taking flag given last,
# a value out of range, a sweep or fuzz target that does not exist -- is one line and exit 2 before any work
# starts, run from a copy of scripts/ (so nothing can reach this checkout), within 20 s each; --help prints the
# usage and exits 0.
add_test(NAME scripts.shell_arguments_one_line
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/shell_args_test.py ${CMAKE_SOURCE_DIR})
set_tests_properties(scripts.shell_arguments_one_line PROPERTIES TIMEOUT 900 LABELS "integration")
