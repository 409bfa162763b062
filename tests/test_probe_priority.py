"""Probes never slow the game: priority, auto-sized caps, lag, the probe loop (real HTTP on loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafiascope.logs.io import iter_probe_records
from mafiascope.backends.devserver import DevServer
from mafiascope.backends.registry import build_backends, clear_cache
from mafiascope.config import parse_game_config
from mafiascope.play.game import backend_demand, initial_state, play_game

ROOT = Path(__file__).resolve().parents[1]


def _cfg(base_url: str, **backend: object) -> object:
    data = {
        "name": "priority",
        "rules": {"name": "classic", "roles": {"Mafia": 2, "Doctor": 1, "Villager": 4}, "intro_round": True, "max_rounds": 1},
        "seats": [{"backend": "m"} for _ in range(7)],
        "backends": {"m": {"type": "openai", "base_url": base_url, "model": "bot-balanced", "timeout": 5, **backend}},
        "probes": {"enabled": True, "battery": str(ROOT / "configs/probes/chained_en.yaml"), "max_lag_s": 3},
        "snapshots": False,
    }
    return parse_game_config(data, "test")


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
async def test_with_max_lag_s_set_probes_that_lag_behind_a_rate_limit_are_skipped_and_counted_acts_are_not(tmp_path):
    clear_cache()
    async with DevServer() as srv:
        # 300 rpm (0.2 s apart): a step's ~30 probe calls need ~6 s, so once ~15 are queued on the backend
        # (3 s = max_lag_s) later steps are skipped; the moves always go first
        cfg = _cfg(srv.base_url, rpm=300, burst=2)
        res = await play_game(cfg, logs_dir=tmp_path, seed=4, game_id="lag")
    gdir = Path(res.path)
    over = _records(gdir / "game.jsonl")[-1]
    assert over["kind"] == "game_over"
    assert res.faults == 0 and over["cost"]["act"]["faults"] == 0  # every move got its call
    probes = list(iter_probe_records(gdir))
    lagged = [r for r in probes if r.get("lagged")]
    assert lagged and over["cost"]["probes"]["skipped"] == len(lagged)
    assert all(r["error"].startswith("lagged") and r["answer_raw"] is None for r in lagged)
    assert len(lagged) < len(probes)  # the rate left room for some probes
    assert over["cost"]["probes"]["max_lag_s"] == 3
    # bounded: the last answered probe started at most max_lag_s plus a few calls after its step
    answered = [r for r in probes if not r.get("error")]
    assert max(r["finished_ts"] - r["timestamp"] for r in answered) < 3 + 10


@pytest.mark.slow
async def test_acts_go_first_when_one_model_serves_every_seat(tmp_path):
    """With one backend for all seats, the moves do not queue behind the probes' calls."""
    clear_cache()
    async with DevServer(latency_ms=60) as srv:
        cfg = _cfg(srv.base_url)
        cfg.probes.max_lag_s = 60  # no rate limit: nothing may lag
        un = await play_game(cfg, logs_dir=tmp_path, seed=4, game_id="unprobed", probes=False)
        pr = await play_game(cfg, logs_dir=tmp_path, seed=4, game_id="probed")
    act = {g: _records(Path(r.path) / "game.jsonl")[-1]["cost"]["act"] for g, r in (("un", un), ("pr", pr))}
    mean = {g: a["latency_ms"] / a["calls"] for g, a in act.items()}
    probes = list(iter_probe_records(pr.path))
    assert len(probes) > 5 * act["pr"]["calls"] and not any(r.get("lagged") for r in probes)
    # FIFO behind ~25 probe calls per move would make a move wait several latencies
    assert mean["pr"] < mean["un"] + 3 * 60, mean


def test_auto_cap_demand_counts_each_seat_move_and_its_step_probes():
    clear_cache()
    cfg = _cfg("http://127.0.0.1:9/v1")
    backends = build_backends(cfg.backends)
    st = initial_state(cfg, seed=1, game_id="d", backends=backends)

    class Hook:
        class battery:
            active = [1, 2, 3, 4, 5]

    assert backend_demand(st, Hook()) == {"m": 7 * 6}
    assert backend_demand(st, None) == {"m": 7}
    b = backends["m"]
    assert b.limits.describe()["max_concurrency"] == "auto"
    with b.limits.demand(42):
        assert b.limits.concurrency.limit == 42
