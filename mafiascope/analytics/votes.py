"""Vote-reply target for the importer and the loader of original logs.

:func:`parse_vote_target` is the engine's parser (``mafiascope.engine.parsing.parse_vote``),
so analytics and a live game read a vote identically: from a ``VOTE:``/``ГОЛОС:`` protocol
line or a first-person statement of the vote, never from other prose (docs/parsing.md).
Compat figures do not depend on it: they use the original's own tally (``vote_tally.votes``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.parsing import parse_vote


@dataclass
class ParsedTarget:
    target: str | None
    valid: bool
    note: str


def parse_vote_target(text: str, alive_names: list[str], language: str | None = None) -> ParsedTarget:
    """Target of a vote reply (``language`` is accepted for callers; both languages are always read)."""
    r = parse_vote(text if isinstance(text, str) else "", alive_names)
    return ParsedTarget(r.target, bool(r.valid), str(r.note))
