"""Golden playthroughs: one fixed-seed offline bot game per rule family, rendered as a readable trace
(one block per logged event) and compared with the committed file in tests/golden/.

A change to the game (rules, phases, prompts, bots, parsing) shows up as a diff of that file, as in
OpenSpiel's playthroughs. When the change is intended, rewrite the files and review the diff:

    UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from mafiascope.config import load_game_config, shipped_config
from mafiascope.play.game import play_game

GOLDEN = Path(__file__).resolve().parent / "golden"
# family file -> (shipped config, seed); each game runs without probes (probing never changes a game)
GAMES = {
    "classic": ("classic", 11),
    "classic_sheriff": ("classic_sheriff", 12),
    "classic_ru": ("classic_ru", 13),
    "sport": ("tournament_sport", 14),
    "open_table": ("tournament_open_table", 15),
    "imbalanced": ("tournament_imbalanced", 16),
}
# wall-clock and provenance fields that change without the game changing; prompts are left out for size
# (a prompt change that matters changes the replies); player_idx repeats the seat the name already gives
SKIP = {"game_id", "kind", "round", "msg_seq", "ts", "prompt", "response", "player", "player_idx", "text",
        "library_version", "schema_version"}


def _value(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _setup_lines(rec: dict[str, Any]) -> list[str]:
    lines = [f"setup rule_set={rec['rule_set']} seed={rec['seed']} language={rec['language']}",
             f"  rules {_value(rec['rules'])}"]
    for p in rec["players"]:
        lines.append(f"  seat {p['idx']} {p['name']}: {p['role']} model={p['model']} personality={_value(p.get('personality'))}")
    return lines


def trace(game_jsonl: Path) -> str:
    """The game as text: a header line per event (round.msg_seq, kind, speaker, who may see it, the
    parsed fields), then the speaker's words or the host's text, JSON-quoted on one indented line."""
    out: list[str] = []
    for line in game_jsonl.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        kind = rec["kind"]
        if kind == "setup":
            out += _setup_lines(rec)
            continue
        if kind == "game_over":
            rec = {k: v for k, v in rec.items() if k not in ("backends", "cost")}  # cost carries latencies
        where = f"R{rec.get('round')}" + (f".{rec['msg_seq']}" if rec.get("msg_seq") is not None else "")
        head = [where, kind]
        if rec.get("player") is not None:
            head.append(str(rec["player"]))
        if rec.get("visible_to") is not None:
            head.append(f"[to {','.join(rec['visible_to']) or 'nobody'}]")
        head += [f"{k}={_value(v)}" for k, v in rec.items() if k not in SKIP and k != "visible_to" and v is not None]
        out.append(" ".join(head))
        for key in ("response", "text"):
            if isinstance(rec.get(key), str):
                out.append("    " + _value(rec[key]))
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("family", sorted(GAMES))
@pytest.mark.slow
def test_golden_playthrough(family, tmp_path):
    config, seed = GAMES[family]
    cfg = load_game_config(shipped_config(config))
    asyncio.run(play_game(cfg, logs_dir=tmp_path, seed=seed, game_id=f"golden-{family}", probes=False, snapshots=False))
    got = trace(tmp_path / f"golden-{family}" / "game.jsonl")
    path = GOLDEN / f"{family}.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
        return
    assert path.is_file(), f"{path} is missing; create it with UPDATE_GOLDEN=1"
    want = path.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), f"golden/{family}.txt", "this run", n=2))
        pytest.fail(f"the {family} playthrough changed (UPDATE_GOLDEN=1 rewrites it if intended):\n{diff[:20000]}", pytrace=False)
