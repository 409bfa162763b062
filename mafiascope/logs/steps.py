"""Timeline steps: a (round, message number) key, its order and its one label format.

A step is where the probes run: after a public message (``msg_seq`` >= 0) or at the end of a
round (``msg_seq`` = :data:`ROUND_END`). Steps sort by round, then message number, with the
round end after every message of its round. Labels are the ones URLs carry: ``R1.5``,
``R1.end``; :meth:`StepKey.parse` also reads ``R1-end``, ``R1end``, ``R1 end`` (older links).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

ROUND_END = -1  # msg_seq of the round-end step (probes: public_msg_seq)

_LABEL_RE = re.compile(r"(?i)R(\d+)(?:\.(\d+)|[ ._+-]?end)")


@dataclass(frozen=True, order=False)
class StepKey:
    """One timeline step; total order = chronological order (round end last in its round)."""

    round: int
    msg_seq: int  # ROUND_END (-1) = the round's end

    def __post_init__(self) -> None:
        if self.round < 0 or self.msg_seq < ROUND_END:
            raise ValueError(f"step (round {self.round}, msg_seq {self.msg_seq}): round must be >= 0, msg_seq >= -1")

    @property
    def is_round_end(self) -> bool:
        return self.msg_seq == ROUND_END

    @property
    def sort_key(self) -> tuple[int, float]:
        return self.round, math.inf if self.msg_seq == ROUND_END else float(self.msg_seq)

    def __lt__(self, other: StepKey) -> bool:
        return self.sort_key < other.sort_key

    def __le__(self, other: StepKey) -> bool:
        return self.sort_key <= other.sort_key

    def __gt__(self, other: StepKey) -> bool:
        return self.sort_key > other.sort_key

    def __ge__(self, other: StepKey) -> bool:
        return self.sort_key >= other.sort_key

    @property
    def label(self) -> str:
        return step_label(self.round, self.msg_seq)

    def __str__(self) -> str:
        return self.label

    def as_tuple(self) -> tuple[int, int]:
        return self.round, self.msg_seq

    @classmethod
    def of(cls, key: Any) -> StepKey:
        """From a StepKey, a ``(round, msg_seq)`` pair (as logs store ``fork_point``) or a label."""
        if isinstance(key, StepKey):
            return key
        if isinstance(key, str):
            return cls.parse(key)
        if isinstance(key, (list, tuple)) and len(key) == 2:
            return cls(int(key[0]), int(key[1]))
        raise ValueError(f"not a step: {key!r:.80}")

    @classmethod
    def parse(cls, label: str) -> StepKey:
        """``R1.5`` -> (1, 5); ``R1.end`` / ``R1-end`` / ``R1end`` / ``R1 end`` -> (1, ROUND_END)."""
        m = _LABEL_RE.fullmatch(str(label).strip())
        if m is None:
            raise ValueError(f"step {label!r:.40} is not a step label (use e.g. R1.5, or R1.end for a round's end)")
        return cls(int(m.group(1)), int(m.group(2)) if m.group(2) is not None else ROUND_END)


def step_label(rnd: int, msg_seq: int, *, original: bool = False) -> str:
    """The one label of a step: ``R1.5``, ``R1.end``. ``original``: the original viewer's spelling of a
    round end, ``R1 end`` (compat output reproduces it; StepKey.parse reads it back)."""
    if msg_seq == ROUND_END:
        return f"R{rnd} end" if original else f"R{rnd}.end"
    return f"R{rnd}.{msg_seq}"


def step_order(rnd: int, msg_seq: int) -> tuple[int, float]:
    """Sort key of a raw (round, msg_seq) pair: the round end after every message of its round."""
    return rnd, math.inf if msg_seq == ROUND_END else float(msg_seq)
