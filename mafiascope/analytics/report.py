"""The corpus report: every metric in one JSON-able dict (shape: docs/report_schema.md)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from .corpus import Corpus
from .executor import run_sections
from .modes import Mode
from .runtime import collector_paused
from .sections import SECTIONS, Scope
from .selection import selection_lines
from .stats import dense_multiplicities

REPORT_VERSION = 1


def audit_section(c: Corpus) -> dict[str, Any]:
    total: Counter = Counter()
    per_game = {}
    for gid, cnt in sorted(c.audit.items()):
        clean = {k: int(v) for k, v in cnt.items() if v}
        if clean:
            per_game[gid] = clean
        total.update(clean)
    return {"totals": dict(sorted(total.items())), "games": per_game, "selection": c.selection}


def build_report(c: Corpus, mode: Mode, *, transcripts: bool = True, sections: tuple[str, ...] | None = None,
                 seats: np.ndarray | None = None, seat_filter: dict[str, Any] | None = None,
                 per_model: bool = True, lean: bool | None = None) -> dict[str, Any]:
    """Every corpus metric: the sections of :data:`.sections.SECTIONS` (or those named in ``sections``),
    then the audit. ``seats``: an (m, seats) mask; every seat-attributable figure then counts only those
    seats' rows (described by ``seat_filter``). ``per_model``: add ``by_model`` and ``by_model_role``
    (seat-level attribution, docs/report_schema.md).

    A corpus without probe logs (transcript-only games) is analysed too: outcomes, votes and
    the F4 transcript baselines, with the probe-based sections marked ``absent``.

    ``lean`` (default: for the full report, ``sections`` None) keeps memory to one group of
    sections' intermediates at a time (:func:`.executor.run_sections`); the corpus then holds none of them
    afterwards (a caller reusing it for other views may pass ``lean=False``). Same values either way.
    """
    want = (lambda s: True) if sections is None else (lambda s: s in sections)
    scope = Scope(c, mode, seats, transcripts, per_model)
    rep: dict[str, Any] = {"report_version": REPORT_VERSION, "mode": mode.name, "boot": mode.boot, "seed": mode.seed,
                           "n_games": c.m, "n_games_probed": None, "game_ids": c.game_ids, "probe_logs": None}
    if seats is not None:
        rep["seat_filter"] = {**(seat_filter or {}), "seats": int(seats.sum())}
    # the report's ~15 pooled products read one float matrix
    with dense_multiplicities(), collector_paused():
        rep.update(run_sections(scope, want, lean=(sections is None) and (lean is None or lean)))
    rep["probe_logs"] = scope.has_probes
    rep["n_games_probed"] = c.probed().m if scope.has_probes else 0
    rep["audit"] = audit_section(c)
    return rep


def format_report(rep: dict[str, Any]) -> str:
    """A readable plain-text rendering of :func:`build_report`'s dict: a header, each section's lines
    (:data:`.sections.SECTIONS`), the absent sections and the audit."""
    L = [f"mafiascope analytics report - mode {rep['mode']}, {rep['n_games']} games, B={rep['boot']}"]
    L += selection_lines(rep["audit"]["selection"], rep["n_games"], rep.get("n_games_probed"))
    if rep.get("seat_filter"):
        sf = rep["seat_filter"]
        L.append("Seat filter: " + ", ".join(f"{k} {v}" for k, v in sf.items() if k != "seats")
                 + f" ({sf['seats']} seats; seat-attributable figures count only their rows)")
    if rep.get("probe_logs") is False:
        L.append("No probe logs: outcomes, votes and transcript baselines only; probe-based sections absent.")
    for sec in SECTIONS:
        L += sec.text(rep)
    absent = [k for k, v in rep.items() if isinstance(v, dict) and "absent" in v]
    if absent:
        L.append("Absent (no probe logs): " + ", ".join(absent))
    a = rep["audit"]
    L.append("\nAudit: " + (", ".join(f"{k}={v}" for k, v in a["totals"].items()) or "clean"))
    return "\n".join(L)
