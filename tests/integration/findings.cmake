# scripts/plot_findings.py draws the README's Findings figures from xsa-inspect's JSON: on the report fixtures
# (several seeds and sequence lengths, bias at init and end) it must write the figures whose sections have
# rows, as PNG files; a budget figure needs two budgets, which the fixtures do not have.
add_test(NAME plots.findings_from_inspect_json
  COMMAND bash -c [=[
    set -e
    out="$1"; shift
    rm -rf "$out"
    "$@" --out "$out"
    for f in eval_delta_curve improvement_vs_seq_len bias_init_vs_end; do
      [ "$(head -c 4 "$out/$f.png" | tail -c 3)" = PNG ] || { echo "missing or not a PNG: $out/$f.png"; exit 1; }
    done
    [ ! -e "$out/improvement_vs_budget.png" ] || { echo "budget figure drawn from a single budget"; exit 1; }
  ]=] _ ${CMAKE_BINARY_DIR}/tests/findings_out /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plot_findings.py
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report/single ${CMAKE_SOURCE_DIR}/tests/fixtures/report/sweep
    --inspect $<TARGET_FILE:xsa-inspect>)
