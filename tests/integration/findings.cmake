# scripts/plots/plot_findings.py draws the figures of docs/findings.md from xsa-inspect's JSON: on the report fixtures
# (several seeds and sequence lengths, bias at init and end) it must write the figures whose sections have
# rows, as PNG files; a budget figure needs two budgets, which only the budget fixture has.
add_test(NAME plots.findings_from_inspect_json
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh ${CMAKE_BINARY_DIR}/tests/findings_out
    "eval_delta_curve improvement_vs_lambda improvement_vs_seq_len bias_init_vs_end"
    "improvement_vs_budget improvement_vs_lr delta_by_position"
    /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report/single ${CMAKE_SOURCE_DIR}/tests/fixtures/report/sweep
    --inspect $<TARGET_FILE:xsa-inspect>)

# The loss by position (fixtures/report/lengths: every run has final.loss_by_position, at T 64, 128 and 256): the
# paired Δ per position bucket, one line per length and batch; the fixtures without it (above) draw none.
add_test(NAME plots.findings_loss_by_position
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh ${CMAKE_BINARY_DIR}/tests/findings_position_out
    "delta_by_position improvement_vs_seq_len" "improvement_vs_budget improvement_vs_lr improvement_vs_lambda"
    /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py ${CMAKE_SOURCE_DIR}/tests/fixtures/report/lengths
    --inspect $<TARGET_FILE:xsa-inspect>)

# --lambda reaches xsa-inspect: the fixtures' λ=0.5 seeds all have T=64, so without the other variants there is
# no second sequence length and no second λ, so neither the length nor the λ figure.
add_test(NAME plots.findings_lambda_filter
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh ${CMAKE_BINARY_DIR}/tests/findings_lambda_out
    "eval_delta_curve bias_init_vs_end"
    "improvement_vs_lambda improvement_vs_seq_len improvement_vs_budget improvement_vs_lr"
    /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report/single ${CMAKE_SOURCE_DIR}/tests/fixtures/report/sweep
    --lambda 0.5 --inspect $<TARGET_FILE:xsa-inspect>)

# --baseline reaches xsa-inspect: against xsa, the single fixture's sa and learned are two variants, so the λ
# figure is drawn (the sweep's λ=0.5 seeds have no xsa run and drop out); one budget and one lr, so neither of
# those figures. A run name no experiment has is bad input: exit 2, one line.
add_test(NAME plots.findings_baseline
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh ${CMAKE_BINARY_DIR}/tests/findings_baseline_out
    "improvement_vs_lambda eval_delta_curve" "improvement_vs_budget improvement_vs_lr"
    /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report/single ${CMAKE_SOURCE_DIR}/tests/fixtures/report/sweep
    --baseline xsa --only improvement_vs_lambda,eval_delta_curve,improvement_vs_budget,improvement_vs_lr
    --inspect $<TARGET_FILE:xsa-inspect>)
add_test(NAME plots.findings_bad_baseline_exits_2
  COMMAND bash -c [=[
    err=$("$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [[ "$err" == *"--baseline 'nope'"* ]] ||
      { echo "rc=$rc stderr=$err"; exit 1; }
  ]=] _ /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py ${CMAKE_SOURCE_DIR}/tests/fixtures/report/single
    --baseline nope --out ${CMAKE_BINARY_DIR}/tests/findings_bad_baseline_out --inspect $<TARGET_FILE:xsa-inspect>)

# --only draws just the named figures, although the fixtures have the data for three more.
add_test(NAME plots.findings_only
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh ${CMAKE_BINARY_DIR}/tests/findings_only_out
    "improvement_vs_lambda" "eval_delta_curve improvement_vs_seq_len bias_init_vs_end improvement_vs_budget"
    /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report/single ${CMAKE_SOURCE_DIR}/tests/fixtures/report/sweep
    --only improvement_vs_lambda --inspect $<TARGET_FILE:xsa-inspect>)

# Two training budgets (fixtures/report/budget): the budget figure, and the bias figure with one bar per budget.
add_test(NAME plots.findings_two_budgets
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh ${CMAKE_BINARY_DIR}/tests/findings_budget_out
    "improvement_vs_budget eval_delta_curve bias_init_vs_end"
    "improvement_vs_lambda improvement_vs_seq_len improvement_vs_lr delta_by_position"
    /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py ${CMAKE_SOURCE_DIR}/tests/fixtures/report/budget
    --inspect $<TARGET_FILE:xsa-inspect>)

# Several learning rates (the committed results/lr_control, one λ at 3-4 lrs, one budget): the lr figure, and
# neither the λ figure (one λ) nor the budget one (one budget).
add_test(NAME plots.findings_learning_rates
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh ${CMAKE_BINARY_DIR}/tests/findings_lr_out
    "improvement_vs_lr eval_delta_curve bias_init_vs_end"
    "improvement_vs_lambda improvement_vs_budget improvement_vs_seq_len early_val_loss dynamics_over_training best_per_setup delta_by_position"
    /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py ${CMAKE_SOURCE_DIR}/results/lr_control
    --inspect $<TARGET_FILE:xsa-inspect>)

# Several baseline setups at shared lrs (question 9: lr_control's paper setup and baseline_choices' positions and
# embedding norms, committed): the lr figure with one colour per setup, the early val-loss figure and the
# attention dynamics figure (baseline_choices measured them), one panel per shared lr, and each setup at its arms'
# best lrs.
add_test(NAME plots.findings_baseline_setups
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh ${CMAKE_BINARY_DIR}/tests/findings_setups_out
    "improvement_vs_lr early_val_loss dynamics_over_training best_per_setup"
    "improvement_vs_lambda improvement_vs_budget"
    /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py ${CMAKE_SOURCE_DIR}/results/lr_control
    ${CMAKE_SOURCE_DIR}/results/baseline_choices
    --only improvement_vs_lr,early_val_loss,dynamics_over_training,improvement_vs_lambda,improvement_vs_budget,best_per_setup
    --inspect $<TARGET_FILE:xsa-inspect>)

# Two model sizes: the size figure (gain vs non-embedding parameters, the size trend in its legend) and the depth
# figure (bias metrics against relative depth, one line per model and arm); one lr, so no lr figure. The second
# size is the first's results relabelled (resize_results.py), as the size sweeps have no points yet.
add_test(NAME plots.findings_model_sizes
  COMMAND sh -c "rm -rf \"$2\" && /usr/bin/python3 \"$0\" \"$1\" \"$2\" 6 256 8 && bash \"$3\" \"$4\" \"improvement_vs_size bias_by_depth\" improvement_vs_lr /usr/bin/python3 \"$5\" \"$1\" \"$2\" --only improvement_vs_size,bias_by_depth,improvement_vs_lr --inspect \"$6\""
    ${CMAKE_CURRENT_LIST_DIR}/resize_results.py ${CMAKE_SOURCE_DIR}/tests/fixtures/report/budget
    ${CMAKE_BINARY_DIR}/tests/findings_sizes_in ${CMAKE_CURRENT_LIST_DIR}/check_pngs.sh
    ${CMAKE_BINARY_DIR}/tests/findings_sizes_out ${CMAKE_SOURCE_DIR}/scripts/plots/plot_findings.py
    $<TARGET_FILE:xsa-inspect>)

# The trend notes of the length and budget figures' legends (scripts/xsapy/figures/improvement.py groups length lines
# itself and looks the trend up by the design string xsa-inspect prints) against trends computed by hand from
# fixtures/report/lengths and fixtures/report/budget.
add_test(NAME plots.findings_legends
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_legends.py $<TARGET_FILE:xsa-inspect>
    ${CMAKE_SOURCE_DIR}/tests/fixtures/report)

# scripts/science/science_compute.py (the compute the science sweeps used): one row per folder of finished points; the
# budget fixture has 4 points of 2 runs: 2 seeds × 2 runs × (100 + 400 steps) × 8 × 64 tokens = 1.0M.
# PASS_REGULAR_EXPRESSION ignores the exit code, so the shell prints it for the pattern to match.
add_test(NAME scripts.science_compute
  COMMAND sh -c "/usr/bin/python3 \"$0\" \"$1\" 2>&1; echo \"exit code $?\""
    ${CMAKE_SOURCE_DIR}/scripts/science/science_compute.py ${CMAKE_SOURCE_DIR}/tests/fixtures/report)
set_tests_properties(scripts.science_compute PROPERTIES
  PASS_REGULAR_EXPRESSION "\\| budget \\| 4 \\| 8 \\| 1\\.0M \\| 0\\.00 \\| 1,000 \\|.*\nexit code 0\n$")
# Commands moved out of scripts/'s top level say where they are now (docs/development.md "Scripts").
add_test(NAME scripts.moved_commands_say_where
  COMMAND ${XSA_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_moved_scripts.py)
# scripts/science/commit_science.sh on a made-up science checkout: a grown sweep's partial new lr waits, a sweep run
# seed by seed shows its first seeds, checkpoints never go in.
add_test(NAME scripts.commit_science_holds_partial_cells
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/commit_science_test.py ${CMAKE_SOURCE_DIR}
    $<TARGET_FILE:xsa-sweep>)
