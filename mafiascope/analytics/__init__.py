"""Analytics: loaders (ours + original MafiaScope format), columnar cache, metrics, report.

Entry points for the CLI and the app:

* :func:`mafiascope.analytics.corpus.load_corpus` -- select and load games (cached tables)
* :func:`mafiascope.analytics.report.build_report` -- every corpus metric in one dict
* :func:`mafiascope.analytics.viewer.build_step_model` / :func:`viewer.step_metrics` -- one game
* :func:`mafiascope.analytics.episodes.find_episodes` -- collective suspicion shifts
* :func:`mafiascope.analytics.original_format.import_corpus` -- original -> our format
* :mod:`mafiascope.analytics.seats` -- every metric per model / model x role (seat-level), model comparisons
* :mod:`mafiascope.analytics.report_dir` -- ``mafiascope report``: report.md, CSV/LaTeX tables, SVG/PNG figures
* :mod:`mafiascope.analytics.figures` -- the Altair chart builders shared by the dashboard and the report
* :mod:`mafiascope.analytics.custom` -- analytics of custom probes (declared answer schemas)

Every metric is a pure function of a loaded :class:`~mafiascope.analytics.corpus.Corpus`
and a :class:`~mafiascope.analytics.modes.Mode` (default or ``compat="mafiascope-2026-07"``).
"""
