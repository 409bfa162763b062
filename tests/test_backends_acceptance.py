"""End-to-end: games against the faulty dev server, a mixed line-up, and secret hygiene."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mafiascope.backends.bus.hub import Hub
from mafiascope.backends.devserver import DevServer
from mafiascope.backends.registry import build_backend, clear_cache
from mafiascope.config import load_game_config
from mafiascope.play.game import play_game
from mafiascope.logs.io import read_jsonl

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-test-SECRET-1234567890"
BUS_TOKEN = "acceptance-bus-token-42"


def _load_bench():
    spec = importlib.util.spec_from_file_location("fault_matrix", ROOT / "bench" / "fault_matrix.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _probes_ready() -> bool:
    """The probe engine lands separately; run probed games once its default battery exists."""
    try:
        import mafiascope.probes as p
    except ImportError:
        return False
    return hasattr(p, "build_probe_hook") and (ROOT / "configs" / "probes" / "chained_en.yaml").exists()


def utterances(game_dir: str) -> list[tuple]:
    return [(r.get("player"), r.get("response")) for r in read_jsonl(Path(game_dir) / "game.jsonl") if "response" in r]


def _check_matrix(res: dict, games: int) -> None:
    assert res["completed"] == games and res["crashes"] == 0, res["crash_details"]
    assert res["error_text_utterances"] == 0, res["error_text_examples"]
    assert res["faults_injected_total"] > 0
    # every injected fault is in the records (game_over backend stats; client timeouts under load may add more)
    assert res["faults_recorded"] >= res["faults_injected_total"]
    # per type: an injected 429/500/garbage is recorded as such, or -- when the loaded server answered it
    # after the client's timeout -- as a timeout; hangs are always timeouts
    inj, rec = res["faults_injected"], res["faults_recorded_by_type"]
    late = [inj[i] - rec.get(r, 0) for i, r in (("429", "http_429"), ("500", "http_500"), ("garbage", "bad_body"))]
    assert all(d >= 0 for d in late), (inj, rec)
    assert rec.get("timeout", 0) >= inj["hang"] + sum(late), (inj, rec)
    # every call that failed after its retries became a logged fallback or a probe error, never speech
    assert res["calls_failed_after_retries"] <= res["fallbacks_total"] + res["probe_failures"]


@pytest.mark.slow
async def test_fault_matrix_small(tmp_path):
    bench = _load_bench()
    res = await bench.run_matrix(games=5, parallel=5, probes=False, logs_dir=str(tmp_path), timeout=0.5)
    _check_matrix(res, 5)


@pytest.mark.slow
async def test_fault_matrix_probed(tmp_path):
    if not _probes_ready():
        pytest.skip("probe engine or default battery not available")
    bench = _load_bench()
    res = await bench.run_matrix(games=3, parallel=3, probes=True, logs_dir=str(tmp_path))
    _check_matrix(res, 3)
    assert res["probe_rows"] > 0


@pytest.mark.slow
async def test_devserver_game_equals_in_process_bot_game(tmp_path):
    """Same seed, no faults: bots behind HTTP + the openai SDK play exactly the in-process bots' game."""
    local = await play_game(load_game_config(ROOT / "configs" / "classic.yaml"), logs_dir=tmp_path, seed=11,
                            game_id="local", probes=False, snapshots=False)
    cfg = load_game_config(ROOT / "configs" / "devserver.yaml")
    async with DevServer() as srv:
        backends = {n: build_backend(n, s.model_copy(update={"base_url": srv.base_url})) for n, s in cfg.backends.items()}
        remote = await play_game(cfg, logs_dir=tmp_path, seed=11, game_id="remote", probes=False, snapshots=False,
                                 backends=backends)
        for b in backends.values():
            await b.aclose()
    assert utterances(local.path) == utterances(remote.path)
    assert (local.winner, local.rounds) == (remote.winner, remote.rounds)


def _mixed_cfg(srv: DevServer, hub: Hub, api_key_ref: str | None):
    cfg = load_game_config(ROOT / "configs" / "mixed_lineup.yaml")
    backends = {}
    for name, spec in cfg.backends.items():
        if spec.type == "openai":
            spec = spec.model_copy(update={"base_url": srv.base_url, "api_key": api_key_ref, "max_retries": 1,
                                           "backoff_base": 0.01})
        elif spec.type == "bus":
            spec = spec.model_copy(update={"hub": hub.url})
        backends[name] = spec
    return cfg.model_copy(update={"backends": backends})


def _start_worker(hub: Hub) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-m", "mafiascope", "bus", "worker", "--hub", hub.url, "--token", BUS_TOKEN, "--bot", "analyst",
         "--serve-as", "bus-bot", "--poll-wait", "2", "--concurrency", "4"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _all_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


@pytest.mark.slow
async def test_mixed_lineup_provenance_and_no_secret_anywhere(tmp_path, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_BUS_TOKEN", BUS_TOKEN)
    monkeypatch.setenv("MIXED_TEST_KEY", SECRET)
    clear_cache()
    async with DevServer(require_key=SECRET, p_429=0.05, p_500=0.05, retry_after=0.01, seed=3) as srv, \
            Hub(BUS_TOKEN) as hub:
        worker = _start_worker(hub)
        try:
            res = await play_game(_mixed_cfg(srv, hub, "${MIXED_TEST_KEY}"), logs_dir=tmp_path, seed=5,
                                  game_id="mixed", probes=_probes_ready())
            # the same line-up with a key the server rejects: 401s fail fast, the game still completes
            async with DevServer(require_key="another-key") as bad:
                res_bad = await play_game(_mixed_cfg(bad, hub, "${MIXED_TEST_KEY}"), logs_dir=tmp_path, seed=6,
                                          game_id="mixed-401", probes=False)
                assert bad.stats.unauthorized > 0
        finally:
            worker.terminate()
            worker.wait(10)
            from mafiascope.backends.registry import close_all

            await close_all()
            clear_cache()
    rows = read_jsonl(Path(res.path) / "game.jsonl")
    setup = rows[0]
    assert setup["kind"] == "setup" and res.winner
    by_backend = {p["backend"]: p["model"] for p in setup["players"]}
    assert by_backend == {"bot-balanced": "bot-balanced", "bot-cautious": "bot-cautious",
                          "api-aggressive": "bot-aggressive", "api-gullible": "bot-gullible", "bus-seat": "bus:bus-bot"}
    prov = setup["backends"]
    assert {n: d["type"] for n, d in prov.items()} == {"bot-balanced": "bot", "bot-cautious": "bot",
                                                       "api-aggressive": "openai", "api-gullible": "openai", "bus-seat": "bus"}
    assert prov["api-aggressive"]["api_key_set"] is True and prov["api-aggressive"]["base_url_host"] == f"127.0.0.1:{srv.port}"
    assert prov["api-aggressive"]["sampling"]["temperature"] == 0.7
    over = next(r for r in rows if r["kind"] == "game_over")
    assert over["backends"]["api-aggressive"]["served_model"] == "bot-aggressive-devserver"
    workers = over["backends"]["bus-seat"]["workers"]
    assert workers and all(m["adapter"]["type"] == "bot" or "bot" in str(m["adapter"]) for m in workers.values())
    # the rejected-key game: completed, openai seats fell back, errors name the backend, no secret
    bad_rows = read_jsonl(Path(res_bad.path) / "game.jsonl")
    faults = [r["fault"] for r in bad_rows if r.get("fault")]
    assert res_bad.winner and faults and all("401" in f["error"] and "backend 'api-" in f["error"] for f in faults)
    assert all(f["attempts"] == 1 for f in faults)
    everything = _all_text(tmp_path)
    assert SECRET not in everything and BUS_TOKEN not in everything
    assert "SECRET-123" not in everything
