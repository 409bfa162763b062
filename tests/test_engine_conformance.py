"""Every shipped game config passes the package's conformance checks with offline bots."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafiascope.config import load_game_config
from mafiascope.play.conformance import ConformanceError, check_config, check_game_log

REPO = Path(__file__).resolve().parents[1]
import yaml


def _offline_game_config(p: Path) -> bool:
    data = yaml.safe_load(p.read_text())
    backends = (data or {}).get("backends") or {}
    return "rules" in (data or {}) and bool(backends) and all(b.get("type") == "bot" for b in backends.values())


CONFIGS = sorted(p for p in (REPO / "configs").glob("*.yaml") if _offline_game_config(p))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
@pytest.mark.slow
def test_shipped_config_conforms(path):
    rep = check_config(load_game_config(path), seeds=(11,))
    assert rep["games"] == 1 and rep["snapshots"] > 5


@pytest.mark.slow
def test_conformance_catches_a_broken_log(tmp_path):
    import asyncio
    import json

    from mafiascope.play.game import play_game

    asyncio.run(play_game(load_game_config(REPO / "configs/classic.yaml"), logs_dir=tmp_path, seed=3, game_id="g", probes=False))
    path = tmp_path / "g" / "game.jsonl"
    rows = [json.loads(l) for l in path.read_text().splitlines()]
    rows[-1]["winner"] = "Villagers" if rows[-1]["winner"] == "Mafia" else "Mafia"  # lie about the winner
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConformanceError, match="winner|parity"):
        check_game_log(tmp_path / "g")
