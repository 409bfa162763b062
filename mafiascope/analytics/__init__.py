"""Analytics: loaders (ours + original MafiaScope format), columnar cache, metrics, report.

Entry points for the CLI and the app:

* :func:`mafiascope.analytics.corpus.load_corpus` -- select and load games (cached tables)
* :func:`mafiascope.analytics.report.build_report` -- every corpus metric in one dict
* :func:`mafiascope.analytics.viewer.build_step_model` / :func:`viewer.step_metrics` -- one game
* :func:`mafiascope.analytics.episodes.find_episodes` -- collective suspicion shifts
* :func:`mafiascope.analytics.original_format.import_corpus` -- original -> our format

Every metric is a pure function of a loaded :class:`~mafiascope.analytics.corpus.Corpus`
and a :class:`~mafiascope.analytics.modes.Mode` (default or ``compat="mafiascope-2026-07"``).
"""
