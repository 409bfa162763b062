"""The game state: plain data, serialisable at every step, clonable for forks.

Everything a continuation needs lives here: seats, the event list (public and private,
each with ``visible_to``), the pending stage and who still has to act, partial night
choices and votes, checks, and the seed/counters from which every random draw derives
(no live RNG objects, so a snapshot is just ``state.model_dump()``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..logs.schema import MAFIA_ROLES, Personality
from .rules import RuleSet


class Seat(BaseModel):
    model_config = ConfigDict(extra="forbid")

    idx: int
    name: str
    role: str
    backend: str
    model_label: str = ""
    personality: Personality = Field(default_factory=Personality)
    language: str = "en"
    alive: bool = True

    @property
    def is_mafia(self) -> bool:
        return self.role in MAFIA_ROLES


class Pending(BaseModel):
    """Where the state machine is: the stage and the seats that still have to act in it."""

    model_config = ConfigDict(extra="allow")

    stage: str
    remaining: list[str] = Field(default_factory=list)
    mafia_targets: list[str] = Field(default_factory=list)  # "name>target" in choice order
    protected: str | None = None
    check: str | None = None
    votes: dict[str, str] = Field(default_factory=dict)  # valid votes so far
    invalid: dict[str, str] = Field(default_factory=dict)  # voter -> note
    data: dict[str, Any] = Field(default_factory=dict)  # rule-family specific scratch


class GameState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    game_id: str
    rules: RuleSet
    language: str = "en"
    seed: int = 0
    seats: list[Seat]
    round: int = 0
    msg_seq: int = 0
    phase: str = "intro"
    pending: Pending
    events: list[dict[str, Any]] = Field(default_factory=list)
    sheriff_checks: dict[str, dict[str, str]] = Field(default_factory=dict)  # sheriff -> {target: verdict}
    don_checks: dict[str, dict[str, str]] = Field(default_factory=dict)
    night_result: str | None = None
    last_protected: dict[str, str] = Field(default_factory=dict)
    draws: int = 0  # counter of engine random draws (tie breaks)
    act_calls: int = 0  # counter of seat calls; each call's seed derives from (seed, counter)
    step_index: int = 0
    over: bool = False
    winner: str | None = None
    reason: str | None = None

    # ------------------------------------------------------------------ lookups
    def seat(self, name: str) -> Seat:
        for s in self.seats:
            if s.name == name:
                return s
        raise KeyError(name)

    def alive_names(self) -> list[str]:
        return [s.name for s in self.seats if s.alive]

    def alive_with_role(self, *roles: str) -> list[Seat]:
        return [s for s in self.seats if s.alive and s.role in roles]

    def mafia_names(self, alive_only: bool = True) -> list[str]:
        return [s.name for s in self.seats if s.is_mafia and (s.alive or not alive_only)]

    # ------------------------------------------------------------------ randomness
    def derive_seed(self, *parts: object) -> int:
        """A 63-bit seed from the game seed and ``parts`` (stable across processes)."""
        h = hashlib.blake2b(repr((self.seed, *parts)).encode(), digest_size=8).digest()
        return int.from_bytes(h, "big") >> 1

    def next_act_seed(self) -> int:
        self.act_calls += 1
        return self.derive_seed("act", self.act_calls)

    def engine_choice(self, options: list[str]) -> str:
        """Deterministic engine-side random choice (tie breaks), advancing the draw counter."""
        self.draws += 1
        return options[self.derive_seed("engine", self.draws) % len(options)]

    def clone(self) -> GameState:
        return self.model_copy(deep=True)
