"""Balanced random seating: who sits in which game, in which role.

For each game the ten seats go to the models with the fewest games so far (ties broken at
random, so the mix of opponents varies), a model taking at most ``ceil(10 / n_models)``
seats of one table; then the Don, the Sheriff and the two other Mafia seats go, one by one,
to the seated model with the lowest share of that role so far. Over a run every model
plays about equally often and holds every role about equally often. The schedule is a
pure function of (labels, rule sets, games, seed).

Fixed seating (:func:`make_fixed_schedule`) instead seats the same ten models in every
game (seat *i* of the seating is seat *i* of every table before the engine's shuffle) and
leaves the roles to the engine, which deals them from each game's seed: a model holds
different roles across games, and its seat count stays what the seating gives it.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import asdict, dataclass

from ..engine.rules import TOURNAMENT_ROLES

SPECIAL = ("Don", "Sheriff", "Mafia", "Mafia")


@dataclass
class Scheduled:
    game_id: str
    rules: str
    seed: int
    seats: list[dict[str, str | None]]  # [{backend, role}] in table order before the engine's shuffle; role None: dealt by the engine

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def game_seed(run_seed: int, game_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{run_seed}|{game_id}".encode(), digest_size=8).digest(), "big") >> 33


N_SEATS = sum(TOURNAMENT_ROLES.values())


def _game_id(prefix: str, rules: str, i: int) -> str:
    return f"{prefix}-{rules}-{i:04d}" if prefix else f"{rules}-{i:04d}"


def make_fixed_schedule(seating: list[str], rule_sets: list[str], games: int, seed: int = 0, prefix: str = "") -> list[Scheduled]:
    """``games`` games per rule set, each seating ``seating`` (one label per seat); roles are dealt by the engine."""
    if len(seating) != N_SEATS:
        raise ValueError(f"seating: the ten-seat rules need {N_SEATS} seats, got {len(seating)}")
    out: list[Scheduled] = []
    for i in range(games):
        for rs in rule_sets:
            gid = _game_id(prefix, rs, i)
            out.append(Scheduled(gid, rs, game_seed(seed, gid), [{"backend": m, "role": None} for m in seating]))
    return out


def make_schedule(labels: list[str], rule_sets: list[str], games: int, seed: int = 0, prefix: str = "") -> list[Scheduled]:
    """``games`` games per rule set, interleaved ([prefix-]sport-0000, [prefix-]open_table-0000, ...)."""
    if not labels:
        raise ValueError("the roster has no models")
    n_seats = N_SEATS
    cap = math.ceil(n_seats / len(labels))
    rng = random.Random(seed)
    played = {m: 0 for m in labels}
    roles: dict[str, dict[str, int]] = {m: {} for m in labels}
    out: list[Scheduled] = []
    for i in range(games):
        for rs in rule_sets:
            seats: list[str] = []
            taken = {m: 0 for m in labels}
            while len(seats) < n_seats:
                pool = [m for m in labels if taken[m] < cap]
                low = min(played[m] + taken[m] for m in pool)
                m = rng.choice([m for m in pool if played[m] + taken[m] == low])
                taken[m] += 1
                seats.append(m)
            rng.shuffle(seats)
            dealt = ["Villager"] * n_seats
            for role in SPECIAL:
                free = [j for j in range(n_seats) if dealt[j] == "Villager"]

                def share(j: int, role: str = role) -> float:
                    m = seats[j]
                    return roles[m].get(role, 0) / (played[m] + 1)

                low_share = min(share(j) for j in free)
                j = rng.choice([j for j in free if share(j) == low_share])
                dealt[j] = role
                roles[seats[j]][role] = roles[seats[j]].get(role, 0) + 1
            for m in seats:
                played[m] += 1
            for j, m in enumerate(seats):
                if dealt[j] == "Villager":
                    roles[m]["Villager"] = roles[m].get("Villager", 0) + 1
            gid = _game_id(prefix, rs, i)
            out.append(Scheduled(gid, rs, game_seed(seed, gid), [{"backend": m, "role": r} for m, r in zip(seats, dealt)]))
    return out


def balance(schedule: list[Scheduled]) -> dict[str, dict[str, int]]:
    """Seats per model and role over a schedule: {model: {"games": n, "Don": k, ...}} (roles the engine deals are not counted)."""
    out: dict[str, dict[str, int]] = {}
    for g in schedule:
        for s in g.seats:
            row = out.setdefault(str(s["backend"]), {"games": 0})
            row["games"] += 1
            if s["role"]:
                row[str(s["role"])] = row.get(str(s["role"]), 0) + 1
    return out
