# scripts/plots/plot_results.py on the report fixtures (a single paired run + a two-shard sweep): every plot has
# data there, so all four PNGs must be written and be PNG files. Debian's python3 (python3-matplotlib), not
# whatever python3 is first on PATH.
set(_plots_out ${CMAKE_BINARY_DIR}/tests/plots_out)
add_test(NAME plots.fixtures_write_all_pngs
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh ${_plots_out}
    "loss_curves improvement_vs_lambda improvement_vs_seq_len bias_over_training" ""
    ${XSA_PLOT_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/plots/plot_results.py --inspect $<TARGET_FILE:xsa-inspect>
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report/single ${CMAKE_SOURCE_DIR}/tests/fixtures/report/sweep)

# A wrong-schema file is bad input: exit code 2 and one line on stderr, like xsa-inspect.
add_test(NAME plots.bad_input_exits_2
  COMMAND bash -c [=[
    err=$("$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { echo "rc=$rc stderr=$err"; exit 1; }
  ]=] _ ${XSA_PLOT_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/plots/plot_results.py
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report/bad/wrong_schema.json --out ${CMAKE_BINARY_DIR}/tests/plots_bad_out)

# Under a python without matplotlib (a pyenv python3 first on PATH, say): one line naming the interpreter and
# the fix, no traceback. Simulated with a matplotlib package on PYTHONPATH whose import fails.
set(_no_mpl ${CMAKE_BINARY_DIR}/tests/no_matplotlib)
add_test(NAME plots.without_matplotlib_one_line_names_interpreter_and_fix
  COMMAND bash -c [=[
    fake="$1"; shift
    mkdir -p "$fake/matplotlib"
    echo 'raise ImportError("No module named matplotlib (simulated)")' > "$fake/matplotlib/__init__.py"
    err=$(PYTHONPATH="$fake" "$@" 2>&1 >/dev/null); rc=$?
    lines=$(printf '%s\n' "$err" | wc -l)
    [ $rc -ne 0 ] && [ "$lines" -eq 1 ] && [[ "$err" == *"$1 has no matplotlib"* ]] &&
      [[ "$err" == *"/usr/bin/python3"* ]] && [[ "$err" == *"apt-get install python3-matplotlib"* ]] ||
      { echo "rc=$rc lines=$lines stderr=$err"; exit 1; }
  ]=] _ ${_no_mpl} ${XSA_PLOT_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/plots/plot_results.py
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report/single --out ${CMAKE_BINARY_DIR}/tests/plots_no_mpl_out)

# --help lists every figure the script can draw, each with its description from the docstring of the module that
# draws it (scripts/xsapy/figures/common.py figure_help): a figure added to FIGURES without one fails here, not in a
# user's --help. The names are the scripts' own FIGURES, read by importing them, not a copied list.
foreach(_script plot_results plot_findings)
  add_test(NAME plots.${_script}_help_lists_every_figure
    COMMAND bash -c [=[
      py=$1 script=$2
      help=$("$py" "$script" --help) || { echo "--help failed"; exit 1; }
      names=$(cd "$(dirname "$script")" && "$py" -c "import $(basename "$script" .py) as m
print(' '.join((f[0] if isinstance(f, tuple) else f).__name__ for f in m.FIGURES))") || exit 1
      [ -n "$names" ] || { echo "no figures read"; exit 1; }
      for n in $names; do
        printf '%s\n' "$help" | grep -Eq "^  $n\.png +[a-z]" || { echo "--help lacks $n.png"; exit 1; }
      done
    ]=] _ ${XSA_PLOT_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/plots/${_script}.py)
endforeach()
