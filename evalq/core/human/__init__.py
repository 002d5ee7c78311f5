"""Agreement with human raters: a dataset's labels read at the level the metric judges, the
judge's agreement with them in a job's summary, and judge setups ranked by it (evalq calibrate).

- labels: reading a rater's labels (a --human column, questions' own, sentence labels);
  sentences: a rater's sentence labels laid over evalq's split of the response;
- agreement: one job's agreement, level by level; calibration: several setups ranked;
- the statistics, each an Estimate with its interval (estimate): rank_correlation,
  pairwise_accuracy, label_stats (accuracy, Cohen's kappa), paired_bootstrap.
"""
