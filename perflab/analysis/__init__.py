"""The controller's side: runs read into pandas, statistics, verdicts, tables, plots, reports.
Never imported on a benchmark host."""
