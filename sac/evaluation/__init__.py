"""Evaluation: metrics, run folders, intervals, one-question comparisons, reviews, agreement, diagnostics.

Reviews are experts' labels of retrieved chunks; agreement is between reviewers, and between them and the benchmark.

Import the modules themselves (``from sac.evaluation import metrics``): this package exports nothing.
"""
