"""Counterfactual replay: forks, interventions, experiments, instrument validation, crash resume.

See docs/replay.md. Entry points: :func:`forks.plan_fork` / :func:`forks.run_fork_batch`,
:mod:`experiments` (attribution, bifurcation), :mod:`validate` (A/B, repeatability),
:mod:`resume`.
"""

from .source import ParentGame, ReplayError, fmt_key, parse_key

__all__ = ["ParentGame", "ReplayError", "fmt_key", "parse_key"]
