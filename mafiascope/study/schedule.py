"""A study's schedule: every game of every arm, its seed and seating, and the config it is played with.

Games are interleaved across arms (arm A game 0, arm B game 0, arm A game 1, ...), so a study
stopped early by its budget still has every arm at about the same n. A game's id is
``<study>-<arm>-<index>`` and its seed derives from ``(spec.seed, arm, index)`` only, so the
same spec gives the same games in any directory and on any executor.

Seating per line-up:
* ``backend``: every seat plays that backend; the engine deals the roles.
* ``seats``: seat *i* plays ``seats[i]`` in every game; the engine deals the roles.
* ``roster``: ten-seat rules use the Arena's balanced schedule (every model about equally
  often in every role); classic rules rotate the roster over the seats game by game (every
  model about equally often; the engine deals the roles).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..arena.schedule import game_seed, make_schedule
from ..config import GameConfig, ProbesConfig, SeatSpec
from .spec import Arm, StudySpec, arm_rules, battery_path


@dataclass
class StudyGame:
    game_id: str
    arm: str
    index: int
    seed: int
    rules: str
    seats: list[dict[str, str | None]]  # [{backend, role}]; role None: dealt by the engine

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _arm_seatings(spec: StudySpec, arm: Arm) -> list[list[dict[str, str | None]]]:
    rules = arm_rules(arm.rules, spec.source_path)
    n, games, lu = rules.n_seats, spec.games_of(arm), arm.lineup
    if lu.backend:
        return [[{"backend": lu.backend, "role": None} for _ in range(n)] for _ in range(games)]
    if lu.seats:
        return [[{"backend": b, "role": None} for b in lu.seats] for _ in range(games)]
    roster = list(lu.roster or [])
    if rules.family == "tournament":
        sched = make_schedule(roster, [rules.name], games, seed=game_seed(spec.seed, f"{arm.name}|roster"))
        return [list(g.seats) for g in sched]
    return [[{"backend": roster[(i * n + j) % len(roster)], "role": None} for j in range(n)] for i in range(games)]


def study_schedule(spec: StudySpec) -> list[StudyGame]:
    per_arm: list[list[StudyGame]] = []
    for arm in spec.arms:
        rules = arm_rules(arm.rules, spec.source_path)
        games = []
        for i, seats in enumerate(_arm_seatings(spec, arm)):
            gid = f"{spec.name}-{arm.name}-{i:04d}"
            games.append(StudyGame(gid, arm.name, i, game_seed(spec.seed, f"{arm.name}-{i}"), rules.name, seats))
        per_arm.append(games)
    out: list[StudyGame] = []
    for i in range(max(len(g) for g in per_arm)):
        out += [games[i] for games in per_arm if i < len(games)]
    return out


def arm_by_name(spec: StudySpec) -> dict[str, Arm]:
    return {a.name: a for a in spec.arms}


def game_config(spec: StudySpec, g: StudyGame) -> GameConfig:
    """The config one scheduled game is played with (backends: only those it seats; no prices)."""
    arm = arm_by_name(spec)[g.arm]
    rules = arm_rules(arm.rules, spec.source_path)
    used = {str(s["backend"]) for s in g.seats}
    host = rules.option("host_backend") if rules.family == "tournament" else None
    if host:
        used.add(str(host))
    probes = ProbesConfig(enabled=False) if arm.probes == "none" else ProbesConfig(
        battery=str(battery_path(arm.probes, arm.language, spec.source_path)), max_lag_s=spec.probe_max_lag_s,
        loss_budget=spec.probe_loss_budget)  # fmt: skip
    return GameConfig(
        name=f"study-{g.game_id}",
        rules=rules,
        language=arm.language,
        seats=[SeatSpec(backend=str(s["backend"]), role=s["role"]) for s in g.seats],
        backends={k: spec.backend_spec(k) for k in spec.backends if k in used},  # each knows the spec's source
        probes=probes,
        snapshots=spec.snapshots,
        max_tokens=spec.max_tokens,
        seed=g.seed,
        fault_budget=spec.fault_budget,
    )
