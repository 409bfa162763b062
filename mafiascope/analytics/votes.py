"""Vote-reply target for the importer and the loader of original logs.

:func:`parse_vote_target` uses the engine's parser (``mafiascope.engine.parsing.parse_vote``)
so analytics and the engine read votes identically; the small tolerant parser below is
only a fallback for installations where the engine module cannot be imported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_VOTE_LINE = re.compile(r"(?im)^[\s>*_`#-]*(?:vote|голос)\s*[*_`]*\s*[:：]\s*(.*)$")
_STRIP = re.compile(r"[*_`\"'«»“”„\[\]()]+")


@dataclass
class ParsedTarget:
    target: str | None
    valid: bool
    note: str


def _match_name(text: str, names: list[str]) -> str | None:
    t = _STRIP.sub(" ", text).strip().rstrip(".!,;:").strip()
    low = t.lower()
    for n in names:
        if low == n.lower():
            return n
    hits = []
    for n in names:
        m = re.search(r"(?<!\w)" + re.escape(n.lower()) + r"(?!\w)", low)
        if m:
            hits.append((m.start(), n))
    return min(hits)[1] if hits else None


def _own_parse_vote(text: str, alive_names: list[str], language: str | None = None) -> ParsedTarget:
    if not isinstance(text, str) or not text.strip():
        return ParsedTarget(None, False, "empty reply")
    lines = _VOTE_LINE.findall(text)
    if lines:
        for cand in reversed(lines):
            name = _match_name(cand, alive_names)
            if name:
                return ParsedTarget(name, True, "vote line")
        return ParsedTarget(None, False, f"vote line names no alive player: {lines[-1][:60]!r}")
    # inline "VOTE: X" not at line start (e.g. "I'm voting Gray. VOTE: Gray")
    m = list(re.finditer(r"(?i)(?:vote|голос)\s*[*_`]*\s*[:：]\s*([^\n]+)", text))
    if m:
        name = _match_name(m[-1].group(1), alive_names)
        if name:
            return ParsedTarget(name, True, "inline vote marker")
    return ParsedTarget(None, False, "no vote line")


def parse_vote_target(text: str, alive_names: list[str], language: str | None = None) -> ParsedTarget:
    """Target of a vote reply, via the engine's parser when available."""
    try:
        from mafiascope.engine.parsing import parse_vote
    except ImportError:  # pragma: no cover
        return _own_parse_vote(text, alive_names, language)
    r: Any = parse_vote(text or "", alive_names)
    return ParsedTarget(r.target, bool(r.valid), str(r.note))
