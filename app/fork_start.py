"""Where a branch starts, said the same way everywhere (the branch tree, its links, a branch's header, the fork form).

A branch is restarted from a snapshot of its parent (``fork_point``): everything through that step is copied. A
resample replays what follows it; a replaced message or a night action forced at its own step is the branch's first
new move, so such a branch shares the parent only through the step before. The user picks one step in both cases
(``R1.6``); what the branch shares and where it differs are named explicitly instead of by one ambiguous label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mafiascope.logs import step_label


def key_label(key: Any) -> str | None:
    """``[1, 5]`` -> ``R1.5``, ``[1, -1]`` -> ``R1.end``; a label string stays; None when unreadable."""
    if isinstance(key, str):
        return key
    if isinstance(key, (list, tuple)) and len(key) == 2:
        try:
            return step_label(int(key[0]), int(key[1]))
        except (TypeError, ValueError):
            return None
    return None


@dataclass(frozen=True)
class ForkStart:
    shared: str  # the last step the branch shares with its parent (its fork point)
    new: str  # where it differs, in words: "R1.6 replaced", "new after R1.6", "R2.1 forced (...)"
    step: str  # the step the user picked (the fork form's "Branch from"): the replaced or forced step, else the fork point

    @property
    def text(self) -> str:
        return f"shared with the parent through {self.shared}; {self.new}"


def fork_start(fork_point: Any, intervention: dict[str, Any] | None) -> ForkStart:
    """How a branch (or a batch: they all start alike) with this ``fork_point`` and ``intervention`` starts."""
    shared = key_label(fork_point) or "?"
    iv = intervention if isinstance(intervention, dict) else {}
    at = key_label(iv.get("step"))
    if iv.get("type") == "replace_utterance" and at and at != shared:
        return ForkStart(shared, f"{at} replaced", at)
    if iv.get("type") == "override_night":
        forced = f"{iv.get('seat')} {iv.get('action') or 'acts on'} → {iv.get('target')}"
        if at and at != shared:
            return ForkStart(shared, f"{at} forced ({forced})", at)
        return ForkStart(shared, f"new after {shared} (next night: {forced})", shared)
    return ForkStart(shared, f"new after {shared}", shared)


def of_setup(setup: dict[str, Any]) -> ForkStart:
    """A branch's start from its setup record (``fork_point``, ``intervention``)."""
    return fork_start(setup.get("fork_point"), setup.get("intervention"))
