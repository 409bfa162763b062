"""The two analysis modes.

* ``Mode()`` (default): the original's quirks corrected (docs/metrics.md §13): round-end
  probes are ordered last in their round, one alive filter everywhere, one label
  normalisation everywhere (Russian synonyms included), F4's alive set from deaths,
  dynamics' Mafia n counted once. Bootstrap with numpy's PCG64 (seeded).
* ``Mode(compat="mafiascope-2026-07")``: reproduces the original's figures exactly,
  bootstrap CIs included (Python ``random.Random(seed)`` per CI).
"""

from __future__ import annotations

from dataclasses import dataclass

COMPAT_2026_07 = "mafiascope-2026-07"
COMPAT_CHOICES = (COMPAT_2026_07,)


@dataclass(frozen=True)
class Mode:
    compat: str | None = None
    boot: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.compat not in (None, *COMPAT_CHOICES):
            raise ValueError(f"unknown compat mode {self.compat!r}; choose from {COMPAT_CHOICES}")
        if self.boot < 0:
            raise ValueError("boot must be >= 0")

    @property
    def is_compat(self) -> bool:
        return self.compat is not None

    @property
    def name(self) -> str:
        return self.compat or "default"


DEFAULT = Mode()
COMPAT = Mode(compat=COMPAT_2026_07)
