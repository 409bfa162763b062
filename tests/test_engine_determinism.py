"""Same seed + offline bots -> identical game.jsonl (apart from wall-clock fields); different seeds differ."""

from __future__ import annotations

import asyncio
import json

import pytest

from mafiascope.config import load_game_config
from mafiascope.play.game import WALL_CLOCK_FIELDS, play_game
from mafiascope.engine.snapshots import iter_snapshots
from mafiascope.logs.io import read_jsonl
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

pytest.importorskip("mafiascope.backends.bot")


def transcript(path) -> list[str]:
    out = []
    for rec in read_jsonl(path):
        rec = {k: v for k, v in rec.items() if k not in WALL_CLOCK_FIELDS and k != "game_id"}
        rec.pop("cost", None)  # contains latency sums
        out.append(json.dumps(rec, sort_keys=True, ensure_ascii=False))
    return out


@pytest.mark.parametrize("config", ["configs/classic.yaml", "configs/classic_sheriff.yaml", "configs/classic_ru.yaml"])
@pytest.mark.slow
def test_same_seed_same_game(tmp_path, config):
    cfg = load_game_config(REPO / config)
    for gid in ("a", "b"):
        asyncio.run(play_game(cfg, logs_dir=tmp_path, seed=7, game_id=gid, probes=False, snapshots=True))
    assert transcript(tmp_path / "a" / "game.jsonl") == transcript(tmp_path / "b" / "game.jsonl")
    # the full states, as every reader sees them (stored records are deltas: engine/snapshots.py)
    a = [r["state"] for r in iter_snapshots(tmp_path / "a" / "state.jsonl")]
    b = [r["state"] for r in iter_snapshots(tmp_path / "b" / "state.jsonl")]
    for x, y in zip(a, b):
        x.pop("game_id"), y.pop("game_id")
    assert a == b and len(a) > 10


def test_different_seeds_give_different_games(tmp_path):
    cfg = load_game_config(REPO / "configs/classic.yaml")
    seen = set()
    for seed in range(4):
        asyncio.run(play_game(cfg, logs_dir=tmp_path, seed=seed, game_id=f"s{seed}", probes=False, snapshots=False))
        seen.add("\n".join(transcript(tmp_path / f"s{seed}" / "game.jsonl")))
    assert len(seen) == 4
