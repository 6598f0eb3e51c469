"""The figures of xsa's results, one module per family; each figure is drawn by exactly one function.

  curves       along training, from the results.json files and log.jsonl themselves (no xsa-inspect section
               has the per-step points): loss_curves, bias_over_training
  improvement  the paired gain with its 95% CI, from xsa-inspect's comparison sections: improvement_vs_budget,
               eval_delta_curve, delta_by_position, improvement_vs_lambda, improvement_vs_seq_len,
               improvement_vs_size, improvement_vs_lr, early_val_loss, dynamics_over_training, best_per_setup
  bias         the per-layer bias metrics, from xsa-inspect's bias sections: bias_init_vs_end, bias_by_depth

A figure function is fn(data, out) -> the PNG path written, or a common.Skip saying why there was nothing to draw;
its name is the file's name without .png. `data` is a list of results.Experiment for curves, xsa-inspect's
sections (results.inspect) for the others. The front-ends: scripts/plots/plot_results.py (loss_curves,
improvement_vs_lambda, improvement_vs_seq_len, bias_over_training) and scripts/plots/plot_findings.py (the improvement
and bias families: the figures of docs/findings.md, through scripts/science/findings_figures.sh). Needs matplotlib
(Debian's python3-matplotlib: /usr/bin/python3); imported as xsapy.figures, with scripts/ on sys.path.
"""
