"""Conformance checks shipped with the package (after PettingZoo's api_test).

``check_config(cfg)`` plays offline games of a config and verifies the invariants every
rule set must keep: determinism for a seed, records valid against the schema, unique
(round, msg_seq) keys, private events confined to ``visible_to``, a consistent alive set,
a winner that matches the final table, and snapshots that restore to the same state.
A new rule set or a user's own config can be checked the same way:

    python -c "from mafiascope.play.conformance import main; main()" configs/my_rules.yaml
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..config import GameConfig, load_game_config
from ..engine.observation import context_for
from ..engine.snapshots import iter_snapshots
from ..engine.state import GameState
from ..logs import kinds as K
from ..logs.io import GAME_FILE, STATE_FILE, read_jsonl
from ..logs.schema import MAFIA_ROLES, UTTERANCE_KINDS, parse_event
from .game import WALL_CLOCK_FIELDS, play_game


class ConformanceError(AssertionError):
    pass


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ConformanceError(msg)


def _public_view(path: Path) -> list[str]:
    out = []
    for rec in read_jsonl(path):
        rec = {k: v for k, v in rec.items() if k not in WALL_CLOCK_FIELDS and k not in ("game_id", "cost")}
        out.append(json.dumps(rec, sort_keys=True, ensure_ascii=False))
    return out


def check_game_log(game_dir: Path) -> dict[str, Any]:
    """Invariants of one finished game directory; returns a few counts."""
    events = read_jsonl(game_dir / GAME_FILE)
    _check(bool(events) and events[0]["kind"] == K.SETUP, "first record must be setup")
    _check(events[-1]["kind"] == K.GAME_OVER, "last record must be game_over")
    roles = {p["name"]: p["role"] for p in events[0]["players"]}
    alive = set(roles)
    keys: set[tuple[int, int]] = set()
    for ev in events:
        parse_event(ev)  # raises on schema violations
        if ev.get("msg_seq") is not None and not ev.get("inherited"):
            key = (ev["round"], ev["msg_seq"])
            _check(key not in keys, f"duplicate (round, msg_seq) {key}")
            keys.add(key)
        if ev["kind"] in UTTERANCE_KINDS:
            _check(
                ev["player"] in alive or ev["kind"] in (K.LAST_WORDS, K.BEST_MOVE),
                f"{ev['player']} acted while dead ({ev['kind']} R{ev['round']})",
            )
            if ev.get("fault"):
                _check(ev["response"] == "", "a failed turn must not carry text")
        for name in (ev.get("victim"), ev.get("eliminated")):
            if name and ev["kind"] in (K.NIGHT_KILL, K.DAY_ELIMINATE):
                _check(name in alive, f"{name} died twice")
                alive.discard(name)
        for name in ev.get("removed", []) or []:
            alive.discard(name)
        if ev.get("visible_to") is not None:
            _check(all(v in roles for v in ev["visible_to"]), f"visible_to names an unknown seat in {ev['kind']}")
    over = events[-1]
    mafia = sum(1 for n in alive if roles[n] in MAFIA_ROLES)
    town = len(alive) - mafia
    if over["winner"] == "Villagers":
        _check(mafia == 0, "town declared winner with Mafia alive")
    elif over["winner"] == "Mafia":
        _check(mafia >= town and mafia > 0, "Mafia declared winner without parity")
    else:
        _check(
            over["winner"] == "Draw" and over.get("reason") == "round_cap",
            "a game without a side winning must be a round-cap draw",
        )
    return {"events": len(events), "alive_at_end": len(alive)}


def check_snapshots(game_dir: Path) -> int:
    """Each snapshot's state restores, and its stored contexts equal the observation function's."""
    n = 0
    for rec in iter_snapshots(game_dir / STATE_FILE):
        state = GameState.model_validate(rec["state"])
        for p in rec["players"]:
            ctx = context_for(state, p["name"])
            msgs = list(ctx.messages) + ([{"role": "user", "content": "\n".join(ctx.pending)}] if ctx.pending else [])
            _check(msgs == p["messages"], f"snapshot R{rec['round']}.{rec['msg_seq']}: stored context of {p['name']} differs")
        n += 1
    return n


def check_config(cfg: GameConfig, seeds: tuple[int, ...] = (1, 2), probes: bool = False) -> dict[str, Any]:
    """Play each seed twice and check every invariant; raises ConformanceError on the first violation."""
    report: dict[str, Any] = {"games": 0, "snapshots": 0}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for seed in seeds:
            for copy in ("a", "b"):
                asyncio.run(play_game(cfg, logs_dir=root, seed=seed, game_id=f"s{seed}{copy}", probes=probes, snapshots=True))
            a, b = root / f"s{seed}a", root / f"s{seed}b"
            _check(_public_view(a / GAME_FILE) == _public_view(b / GAME_FILE), f"seed {seed}: two runs differ")
            check_game_log(a)
            report["snapshots"] += check_snapshots(a)
            report["games"] += 1
    return report


def main(argv: list[str] | None = None) -> int:
    paths = argv if argv is not None else sys.argv[1:]
    for p in paths:
        rep = check_config(load_game_config(p))
        print(f"{p}: ok ({rep['games']} seeds, {rep['snapshots']} snapshots checked)")
    return 0
