"""A new game's table: the seats dealt from a config (names, seat order, roles, personalities,
all drawn from the seed) and the setup record that opens its log."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from .. import __version__
from ..backends.base import Backend
from ..config import PERSONALITY_PRESETS, GameConfig
from ..engine import prompts
from ..engine.phases import phases_for
from ..engine.records import build
from ..engine.state import GameState, Pending, Seat
from ..logs.schema import SCHEMA_VERSION, Personality, Setup


def new_game_id() -> str:
    return str(uuid.uuid4())


def _deal(cfg: GameConfig, seed: int, label: Callable[[str], str]) -> tuple[list[Seat], list[int]]:
    """Seats in config order (names, roles, personalities) and the table order, all drawn from the seed.

    ``label`` gives a backend entry's model label. One random sequence: initial_state and seating agree."""
    import random

    rng = random.Random(seed)
    n = cfg.rules.n_seats
    roles = [s.role for s in cfg.seats] if cfg.seats[0].role else cfg.rules.role_list()
    if not cfg.seats[0].role:
        rng.shuffle(roles)
    pool = [nm for nm in prompts.NAME_POOL]
    rng.shuffle(pool)
    preset_names = sorted(PERSONALITY_PRESETS)
    seats: list[Seat] = []
    used = {s.name for s in cfg.seats if s.name}
    free = [nm for nm in pool if nm not in used]
    for i, spec in enumerate(cfg.seats):
        name = spec.name or free.pop(0)
        pers = spec.personality
        if isinstance(pers, Personality):
            personality = pers
        else:  # a preset named, or one drawn for the seat
            preset = pers if pers is not None else preset_names[rng.randrange(len(preset_names))]
            personality = Personality(**PERSONALITY_PRESETS[preset])
        seats.append(
            Seat(
                idx=i,
                name=name,
                role=roles[i],
                backend=spec.backend,
                model_label=label(spec.backend),
                personality=personality,
                language=cfg.language,
            )
        )
    order = list(range(n))
    rng.shuffle(order)
    return seats, order


def seating(cfg: GameConfig, seed: int) -> list[tuple[int, str]]:
    """(config seat index, player name) in table order, as a game of ``cfg`` with ``seed`` seats them
    (the app's seat picker names a seat as the game will; no backend is built)."""
    seats, order = _deal(cfg, seed, lambda b: b)
    return [(j, seats[j].name) for j in order]


def initial_state(cfg: GameConfig, *, seed: int, game_id: str, backends: dict[str, Backend]) -> GameState:
    """Seat the table: names and seat order shuffled by the seed, roles assigned, personalities set."""
    dealt, order = _deal(cfg, seed, lambda b: getattr(backends[b], "model_label", b))
    seats = [dealt[j] for j in order]
    for i, s in enumerate(seats):
        s.idx = i
    state = GameState(
        game_id=game_id, rules=cfg.rules, language=cfg.language, seed=seed, seats=seats, pending=Pending(stage="init")
    )
    phases_for(state).start(state)
    return state


def setup_record(
    state: GameState,
    cfg: GameConfig,
    backends: dict[str, Backend],
    probes_snapshot: dict[str, Any] | None,
    extra: dict[str, Any] | None,
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "game_id": state.game_id,
        "kind": "setup",
        "round": 0,
        "ts": time.time(),
        "schema_version": SCHEMA_VERSION,  # the writer's version (it was left at 1 when 2 came)
        "library_version": __version__,
        "players": [
            {
                "name": s.name,
                "role": s.role,
                "model": s.model_label,
                "backend": s.backend,
                "personality": s.personality.model_dump(),
                "idx": s.idx,
                "language": s.language,
            }
            for s in state.seats
        ],
        "rule_set": state.rules.name,
        "rules": state.rules.model_dump(mode="json"),
        "seed": state.seed,
        "language": state.language,
        "game_type": state.rules.family,
        "config": cfg.snapshot(),
        "backends": {name: b.describe() for name, b in backends.items() if any(s.backend == name for s in state.seats)},
        "probes": probes_snapshot,
    }
    if extra:
        rec.update(extra)
    return build(Setup, rec)
