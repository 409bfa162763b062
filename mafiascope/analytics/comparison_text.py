"""Sentences every front end prints beside a model comparison (the CLI, report.md, the Dashboard): how its
games were resampled, and why outcome rows are missing when a model played only against itself."""

from __future__ import annotations

from typing import Any

_DESIGN = {
    "paired": "paired: both models sat in every game, resampled together",
    "partly paired": "partly paired: games both models sat in are resampled together, each model's other games apart",
    "independent samples": "independent samples: no game seats both models (two corpora); each model's games are "
                           "resampled on their own",
}


def design_text(cmp: dict[str, Any]) -> str:
    """How the comparison's games were resampled (its ``design``)."""
    if cmp.get("layers"):
        return "paired: both layers read the same games' seats, resampled together"
    return _DESIGN.get(str(cmp.get("design")), str(cmp.get("design") or ""))


def self_play_text(cmp: dict[str, Any]) -> str | None:
    """Why the outcome rows of a comparison hold less than every game, or None when no game was self-play."""
    a, b = int(cmp.get("self_play_a") or 0), int(cmp.get("self_play_b") or 0)
    if not a and not b:
        return None
    parts = [f"{n} of {cmp[f'games_{k}']} games of {cmp[k]}" for n, k in ((a, "a"), (b, "b")) if n]
    return ("outcome figures leave out self-play games (one model holds every seat: they say nothing about a "
            f"model's skill): {' and '.join(parts)}")
