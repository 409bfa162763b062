"""Asking new questions of games already played: `mafiascope probes ask` (probe layers), its validity proofs,
its ledger, plan and budget, the Batch API path against the dev server, and the analytics reading a layer."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mafiascope.backends.registry import clear_cache
from mafiascope.cli import main
from mafiascope.config import load_game_config, parse_game_config
from mafiascope.engine.recorded import NotRebuildable, steps_from_log
from mafiascope.logs.io import iter_probe_records
from mafiascope.logs.layers import layer_dir, read_manifest
from mafiascope.play.game import play_game
from mafiascope.probes.recorded import RecordedGame

from .servers import threaded_devserver

ROOT = Path(__file__).resolve().parents[1]
CHAINED = str(ROOT / "configs/probes/chained_en.yaml")
SUSPICION = str(ROOT / "configs/probes/suspicion_en.yaml")


def _answers(d: Path) -> dict[tuple[int, str, str], tuple]:
    return {(r["step_index"], r["player_name"], r["probe_id"]): (r["question"], r["answer_raw"], r["answer_parse_ok"], r["error"])
            for r in iter_probe_records(d)}


def _bot_cfg(rounds: int = 2, battery: str = CHAINED):
    cfg = load_game_config(ROOT / "configs/classic.yaml")
    cfg.probes.battery, cfg.probes.probes = battery, None
    cfg.rules.max_rounds = rounds
    return cfg


def _play(cfg, logs: Path, gid: str, seed: int, probes: bool = True) -> Path:
    return Path(asyncio.run(play_game(cfg, logs_dir=logs, seed=seed, game_id=gid, probes=probes)).path)


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_reasking_a_bot_games_own_battery_with_its_backends_reproduces_its_answers_exactly(tmp_path, capsys):
    logs = tmp_path / "logs"
    g = _play(_bot_cfg(), logs, "g", 5)
    own = _sha(g / "introspection.jsonl")
    before = _files(tmp_path)
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "again", "-q", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [row] = out["games"]
    assert row["failed"] == 0 and row["pending"] == 0 and row["answered"] == row["scheduled"] == out["asked"] > 100
    assert _answers(layer_dir(g, "again")) == _answers(g)  # every question and answer, byte for byte
    assert _sha(g / "introspection.jsonl") == own  # the in-game layer is untouched
    new = _files(tmp_path) - before
    assert new == {"logs/g/probe_layers/again/introspection.jsonl", "logs/g/probe_layers/again/layer.json"}
    m = read_manifest(g, "again")
    assert m["answered_by"] == "each seat's own backend" and m["battery"] == "chained_en" and not m.get("invalid")
    # the layer is its own ledger: running it again asks nothing
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "again", "-q", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["asked"] == 0


@pytest.mark.slow
def test_asking_an_unprobed_game_afterwards_equals_asking_it_in_the_game(tmp_path, capsys):
    """Probes never change the game and the contexts come from its log: a game played without probes and
    asked later gets the answers the same game gets when probed while it is played (bots: deterministic)."""
    cfg = _bot_cfg()
    probed = _play(cfg, tmp_path / "a", "g", 7)
    plain = _play(cfg, tmp_path / "b", "g", 7, probes=False)
    assert not (plain / "introspection.jsonl").exists() and (plain / "probe_steps.jsonl").is_file()
    assert main(["probes", "ask", str(tmp_path / "b"), "--battery", CHAINED, "--layer", "later", "-q", "--json"]) == 0
    capsys.readouterr()
    assert _answers(layer_dir(plain, "later")) == _answers(probed)


def test_a_game_older_than_the_steps_file_is_asked_from_its_snapshots(tmp_path, capsys):
    logs = tmp_path / "logs"
    g = _play(_bot_cfg(), logs, "g", 9)
    (g / "probe_steps.jsonl").unlink()  # as games recorded before probe_steps.jsonl (data/demo)
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "again", "-q", "--json"]) == 0
    capsys.readouterr()
    assert _answers(layer_dir(g, "again")) == _answers(g)


def _contexts(game: RecordedGame, steps: list) -> list[tuple]:
    """Every probed seat's context at every step, as the probe engine builds it (the request's messages)."""
    from mafiascope.engine.observation import context_for

    state = game.state()
    return [(vars(s) | {"ts": None, "contexts": None}, seat, json.dumps(context_for(state, seat, s.events).__dict__))
            for s in steps for seat in s.seats]  # fmt: skip


def test_a_game_without_steps_file_or_snapshots_is_asked_from_its_moves_replayed_through_its_rules(tmp_path, capsys):
    """The data/demo games have neither probe_steps.jsonl nor state.jsonl: their steps come from driving the
    rules over the logged moves. Proof: on a game that has both, the rebuilt steps and every seat's context are
    identical to those from probe_steps.jsonl, and re-asking the game's own battery gives its answers."""
    logs = tmp_path / "logs"
    g = _play(_bot_cfg(), logs, "g", 11)
    recorded = RecordedGame.load(g)
    want = recorded.asking_steps()
    (g / "probe_steps.jsonl").unlink()
    (g / "state.jsonl").unlink()
    replayed = RecordedGame.load(g)
    got = replayed.asking_steps()
    assert len(got) == len(want) > 20
    assert _contexts(replayed, got) == _contexts(recorded, want)  # steps (time aside) and contexts, byte for byte
    asked = {r["step_index"] for r in iter_probe_records(g)}
    assert [s.ts for s in got if s.step_index in asked] == [s.ts for s in want if s.step_index in asked]
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "again", "-q", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert not out["refused"] and out["asked"] > 100
    assert _answers(layer_dir(g, "again")) == _answers(g)
    assert {r["step_index"]: r["timestamp"] for r in iter_probe_records(layer_dir(g, "again"))} == \
        {r["step_index"]: r["timestamp"] for r in iter_probe_records(g)}


def test_a_log_the_rules_do_not_replay_is_refused_naming_the_event():
    setup, *records = [json.loads(x) for x in (ROOT / "data/demo/demo-classic-02/game.jsonl").read_text().splitlines()]
    vote = next(i for i, r in enumerate(records) if r["kind"] == "day_vote")
    other = next(p["name"] for p in setup["players"] if p["name"] not in (records[vote]["player"], records[vote]["target"]))
    forged = [*records[:vote], {**records[vote], "target": other}, *records[vote + 1:]]
    with pytest.raises(NotRebuildable, match=r"event \d+ of its log \(vote_tally\) is not the vote_tally the rules make there"):
        steps_from_log(setup, forged)
    with pytest.raises(NotRebuildable, match=rf"event {vote} of its log is day_vote by .* where the rules ask"):
        steps_from_log(setup, records[:vote - 1] + records[vote:])


def test_every_bundled_demo_game_is_planned(tmp_path, capsys):
    assert main(["probes", "ask", str(ROOT / "data/demo"), "--battery", SUSPICION, "--layer", "x", "--plan", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["games"] == plan["games_to_ask"] == 10 and not plan["refused"] and plan["calls"] > 0


def test_games_that_cannot_be_asked_are_refused_one_line_each(tmp_path, capsys):
    logs = tmp_path / "logs"
    g = _play(_bot_cfg(rounds=1, battery=SUSPICION), logs, "ok", 3)
    bare = _play(_bot_cfg(rounds=1, battery=SUSPICION), logs, "bare", 4, probes=False)
    (bare / "probe_steps.jsonl").unlink()
    (bare / "state.jsonl").unlink()
    lines = (bare / "game.jsonl").read_text().splitlines(keepends=True)  # a move lost: the rules cannot replay the log
    (bare / "game.jsonl").write_text("".join(lines[:3] + lines[4:]))
    running = _play(_bot_cfg(rounds=1, battery=SUSPICION), logs, "running", 5)
    lines = (running / "game.jsonl").read_text().splitlines(keepends=True)
    (running / "game.jsonl").write_text("".join(lines[:-1]))
    assert main(["probes", "ask", str(logs), "--battery", SUSPICION, "--layer", "L", "-q", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["game_id"] for r in out["games"]] == ["ok"] and _answers(layer_dir(g, "L"))
    why = {r["game_id"]: r["reason"] for r in out["refused"]}
    assert "its probe steps cannot be rebuilt (and it has no probe_steps.jsonl nor snapshots)" in why["bare"]
    assert "not finished" in why["running"]
    assert main(["probes", "ask", str(logs), "--battery", SUSPICION, "--layer", "L", "-q"]) == 0
    assert "refused game bare: event 3 of its log" in capsys.readouterr().err
    # the same layer name with another battery is refused: it would not be the same measurement
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "L", "-q", "--json"]) == 0
    refused = {r["game_id"]: r["reason"] for r in json.loads(capsys.readouterr().out)["refused"]}
    assert "layer 'L' was asked with another battery_sha256" in refused["ok"]


@pytest.mark.parametrize("bad, msg", [("../x", "--layer"), (".hidden", "--layer"), ("a/b", "--layer"), ("game", "game's own")])
def test_a_layer_name_is_validated_like_a_game_id(tmp_path, capsys, bad, msg):
    _play(_bot_cfg(rounds=1, battery=SUSPICION), tmp_path / "logs", "g", 3)
    assert main(["probes", "ask", str(tmp_path / "logs"), "--battery", SUSPICION, "--layer", bad]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "logs" / "g" / "probe_layers").exists() and not (tmp_path / "x").exists()


def test_plan_counts_calls_tokens_and_money_and_the_budget_refuses_before_asking(tmp_path, capsys):
    logs = tmp_path / "logs"
    g = _play(_bot_cfg(), logs, "g", 5)
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "p", "--plan", "--price", "1,4", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    n = len(list(iter_probe_records(g)))
    assert plan["calls"] == plan["calls_scheduled"] == n and plan["prompt_tokens"] > 100 * n and plan["completion_tokens"] > 0
    assert plan["money"] == pytest.approx(plan["prompt_tokens"] / 1e6 + 4 * plan["completion_tokens"] / 1e6, rel=1e-3)
    assert "the games' own answers" in plan["completion_basis"]  # the game's own answers give the completion size
    assert not (g / "probe_layers").exists()  # a plan writes nothing
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "p", "--plan", "--price", "1,4", "--batch", "--json"]) == 0
    bplan = json.loads(capsys.readouterr().out)["plan"]
    assert bplan["money"] == pytest.approx(plan["money"] / 2, rel=1e-3) and bplan["batches"] > 10  # one per chain position
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "p", "--price", "1,4", "--budget-money",
                 str(plan["money"] / 2)]) == 2  # fmt: skip
    assert "budget:" in capsys.readouterr().err and not (g / "probe_layers").exists()
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "p", "--budget-calls", "10"]) == 2


@pytest.mark.slow
def test_an_observer_model_answers_for_every_seat_and_analytics_read_and_compare_the_layers(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "cache"))
    logs = tmp_path / "logs"
    for i in range(3):
        _play(_bot_cfg(), logs, f"g{i}", 20 + i)
    assert main(["probes", "ask", str(logs), "--battery", CHAINED, "--layer", "obs", "--config", str(ROOT / "configs/classic.yaml"),
                 "--backend", "analyst", "-q", "--json"]) == 0  # fmt: skip
    capsys.readouterr()
    recs = list(iter_probe_records(layer_dir(logs / "g0", "obs")))
    assert {r["model"] for r in recs} == {"bot-analyst"}
    assert read_manifest(logs / "g0", "obs")["answered_by"].startswith("observer analyst: type=bot")
    assert main(["analyze", str(logs), "--probe-layer", "obs", "--boot", "50", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["parse"]["calls"] == sum(len(list(iter_probe_records(layer_dir(logs / f"g{i}", "obs")))) for i in range(3))
    [prov] = rep["provenance"]["probe_layers"]
    assert prov["layer"] == "obs" and prov["battery"] == "chained_en" and prov["games"] == 3 and prov["backends"] == ["bot:bot-analyst"]
    assert any(k.endswith("probe_layers/obs/introspection.jsonl") for k in rep["provenance"]["manifest"][0]["files"])
    assert main(["compare", str(logs), "--layers", "game,obs", "--boot", "50", "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["layers"] == ["game", "obs"] and cmp["games_shared"] == 3 and cmp["paired"] == "by game"
    f1 = next(r for r in cmp["rows"] if r["metric"] == "f1.accuracy")
    assert f1["a"] != f1["b"] and f1["diff_ci95"] is not None  # the observer reads the same contexts otherwise
    metrics = {r["metric"].split(".")[0] for r in cmp["rows"]}
    assert "f2" in metrics and not metrics & {"outcome", "votes"}  # the same games: no figure without probes differs
    assert main(["compare", str(logs), "--layers", "game,nope", "--boot", "50"]) == 2


@pytest.mark.slow
def test_a_layer_over_its_fault_budget_makes_its_games_invalid_for_analytics(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "cache"))
    logs = tmp_path / "logs"
    _play(_bot_cfg(rounds=1, battery=SUSPICION), logs, "g", 3)
    with threaded_devserver(p_500=1.0) as srv:  # every call fails
        cfg = tmp_path / "obs.yaml"
        cfg.write_text(json.dumps({"backends": {"o": {"type": "openai", "base_url": srv.base_url, "model": "bot-balanced",
                                                      "max_retries": 0, "timeout": 5}}}))  # fmt: skip
        clear_cache()
        assert main(["probes", "ask", str(logs), "--battery", SUSPICION, "--layer", "broken", "--config", str(cfg), "--backend", "o",
                     "--no-preflight", "-q", "--json"]) == 0  # fmt: skip
    [row] = json.loads(capsys.readouterr().out)["games"]
    assert row["failed"] == row["scheduled"] and row["invalid"] and "calls of layer 'broken' failed" in row["invalid_reason"]
    assert main(["analyze", str(logs), "--probe-layer", "broken", "--boot", "0"]) == 2  # no valid game left
    assert "invalid" in capsys.readouterr().err


@pytest.mark.slow
def test_kill_9_mid_ask_then_rerun_asks_no_recorded_call_again_and_loses_none(tmp_path):
    logs = tmp_path / "logs"
    g = _play(_bot_cfg(), logs, "g", 5)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with threaded_devserver(latency_ms=30) as srv:
        cfg = tmp_path / "obs.yaml"
        cfg.write_text(json.dumps({"backends": {"o": {"type": "openai", "base_url": srv.base_url, "model": "bot-balanced",
                                                      "max_concurrency": 4}}}))  # fmt: skip
        cmd = [sys.executable, "-m", "mafiascope", "probes", "ask", str(logs), "--battery", CHAINED, "--layer", "obs", "--config",
               str(cfg), "--backend", "o", "-q", "--json"]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        path = layer_dir(g, "obs") / "introspection.jsonl"
        t0 = time.time()
        while time.time() - t0 < 120 and (not path.is_file() or path.stat().st_size < 30_000):
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = _answers(layer_dir(g, "obs"))
        served_before = srv.stats.requests
        assert 0 < len(before)
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        served = srv.stats.requests - served_before
    after = _answers(layer_dir(g, "obs"))
    n = len(list(iter_probe_records(g)))
    assert len(after) == n and all(after[k] == v for k, v in before.items())  # nothing lost, nothing rewritten
    keys = [(r["step_index"], r["player_name"], r["probe_id"]) for r in iter_probe_records(layer_dir(g, "obs"))]
    assert len(keys) == len(set(keys))  # no call recorded twice
    assert served == n - len(before)  # the rerun asked exactly the calls without a record (plus the preflight's none)


def _dev_game(tmp_path: Path, base_url: str) -> Path:
    cfg = parse_game_config({"name": "b", "rules": {"name": "classic", "roles": {"Mafia": 2, "Doctor": 1, "Villager": 4},
                                                     "intro_round": True, "max_rounds": 1},
                             "seats": [{"backend": "m"} for _ in range(7)],
                             "backends": {"m": {"type": "openai", "base_url": base_url, "model": "bot-balanced"}},
                             "probes": {"enabled": False}}, "test")  # fmt: skip
    clear_cache()
    return Path(asyncio.run(play_game(cfg, logs_dir=tmp_path / "logs", seed=3, game_id="g")).path)


@pytest.mark.slow
def test_the_batch_api_path_gives_the_answers_of_direct_calls_one_batch_per_chain_position(tmp_path, capsys):
    with threaded_devserver(batch_delay_s=0.05) as srv:
        g = _dev_game(tmp_path, srv.base_url)
        logs = str(tmp_path / "logs")
        assert main(["probes", "ask", logs, "--battery", CHAINED, "--layer", "direct", "-q", "--json", "--no-preflight"]) == 0
        capsys.readouterr()
        assert main(["probes", "ask", logs, "--battery", CHAINED, "--layer", "batched", "--batch", "--poll-s", "0.05", "-q",
                     "--json", "--no-preflight"]) == 0  # fmt: skip
        out = json.loads(capsys.readouterr().out)
        created = srv.batches.created
    assert _answers(layer_dir(g, "batched")) == _answers(layer_dir(g, "direct"))
    assert created == out["plan"]["batches"] > 5
    ledger = [json.loads(x) for x in (tmp_path / "logs" / ".probe_layers" / "batched" / "batches.jsonl").read_text().splitlines()]
    assert sum(r["event"] == "batch" for r in ledger) == created and all(r.get("status", "completed") == "completed" for r in ledger)


@pytest.mark.slow
def test_a_failed_batch_leaves_its_calls_pending_and_a_rerun_sends_them_again(tmp_path, capsys):
    with threaded_devserver(batch_delay_s=0.05, batch_script=[None, "failed"]) as srv:
        g = _dev_game(tmp_path, srv.base_url)
        logs = str(tmp_path / "logs")
        args = ["probes", "ask", logs, "--battery", SUSPICION, "--layer", "b", "--batch", "--poll-s", "0.05", "-q", "--json", "--no-preflight"]
        assert main(args) == 0  # the first batch (position 0) answered; suspicion quotes nothing: one position only
        first = json.loads(capsys.readouterr().out)
        assert first["stopped"] is None and first["games"][0]["pending"] == 0
        assert main(["probes", "ask", logs, "--battery", CHAINED, "--layer", "c", "--batch", "--poll-s", "0.05", "-q", "--json",
                     "--no-preflight"]) == 0  # fmt: skip
        second = json.loads(capsys.readouterr().out)  # the second batch created (position 0 of layer c) fails
        assert "failed" in second["stopped"] and second["games"][0]["pending"] == second["games"][0]["scheduled"]
        assert main(["probes", "ask", logs, "--battery", CHAINED, "--layer", "c", "--batch", "--poll-s", "0.05", "-q", "--json",
                     "--no-preflight"]) == 0  # fmt: skip
        third = json.loads(capsys.readouterr().out)
    assert third["stopped"] is None and third["games"][0]["pending"] == 0 and not third["games"][0]["failed"]
    assert len(_answers(layer_dir(g, "c"))) == third["games"][0]["scheduled"]


@pytest.mark.slow
def test_a_killed_batch_run_polls_its_open_batch_instead_of_sending_it_again(tmp_path, capsys):
    with threaded_devserver(batch_delay_s=3.0) as srv:
        g = _dev_game(tmp_path, srv.base_url)
        logs = tmp_path / "logs"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", "mafiascope", "probes", "ask", str(logs), "--battery", SUSPICION, "--layer", "b", "--batch",
               "--poll-s", "0.1", "-q", "--json", "--no-preflight"]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ledger = logs / ".probe_layers" / "b" / "batches.jsonl"
        t0 = time.time()
        while time.time() - t0 < 60 and not (ledger.is_file() and '"batch"' in ledger.read_text()):
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert srv.batches.created == 1 and not (layer_dir(g, "b") / "introspection.jsonl").is_file()
        assert main(cmd[3:]) == 0
        out = json.loads(capsys.readouterr().out)
        assert srv.batches.created == 1  # the open batch was collected, not sent again
    assert out["games"][0]["pending"] == 0 and len(_answers(layer_dir(g, "b"))) == out["games"][0]["scheduled"]


@pytest.mark.slow
def test_a_study_that_defers_its_probes_and_one_that_asks_them_in_game_or_afterwards_give_identical_probe_layers(tmp_path, capsys):
    """The same games three ways: probes asked in the game at once; probes queued behind a rate limit and
    answered long after their steps (the deferred queue, draining while the next game plays); no probes in
    the game and the battery asked afterwards with `probes ask`. Every question and answer is the same."""
    import yaml

    from mafiascope.study.run import run_study
    from mafiascope.study.spec import load_study_spec

    def spec(name: str, base_url: str, rpm: float | None, probes: str) -> Path:
        entry = {"type": "openai", "base_url": base_url, "model": "bot-balanced", **({"rpm": rpm, "burst": 2} if rpm else {})}
        data = {"name": name, "seed": 4, "games_per_arm": 2, "backends": {"m": entry},
                "arms": [{"name": "a", "lineup": "m", "rules": "classic", "probes": probes}],
                "executor": {"kind": "local", "parallel": 1}, "out": str(tmp_path / name)}  # fmt: skip
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    with threaded_devserver(latency_ms=5) as srv:
        for name, rpm, probes in (("ingame", None, SUSPICION), ("deferred", 900, SUSPICION), ("later", None, "none")):
            clear_cache()
            st = run_study(load_study_spec(spec(name, srv.base_url, rpm, probes)), quiet=True)
            assert st["counts"]["finished"] == 2
        clear_cache()
        assert main(["probes", "ask", str(tmp_path / "later" / "games"), "--battery", SUSPICION, "--layer", "asked", "-q", "--json",
                     "--no-preflight"]) == 0  # fmt: skip
        capsys.readouterr()
    delays = []
    for i in range(2):
        ingame = tmp_path / "ingame" / "games" / f"ingame-a-{i:04d}"
        deferred = tmp_path / "deferred" / "games" / f"deferred-a-{i:04d}"
        later = tmp_path / "later" / "games" / f"later-a-{i:04d}"
        want = _answers(ingame)
        assert want and _answers(deferred) == want and _answers(layer_dir(later, "asked")) == want
        delays += [r["finished_ts"] - r["timestamp"] for r in iter_probe_records(deferred)]
    assert max(delays) > 2.0  # the deferred study's answers really came late


@pytest.mark.slow
def test_a_batch_the_provider_does_not_know_is_sent_again_and_the_money_budget_stops_further_batches(tmp_path, capsys):
    """A ledger's open batch the provider answers 404 for (lost, or a ledger copied from elsewhere) leaves its
    calls pending and the run sends them; --budget-money stops sending batches once the money spent reaches it."""
    with threaded_devserver(batch_delay_s=0.05) as srv:
        g = _dev_game(tmp_path, srv.base_url)
        logs = tmp_path / "logs"
        ledger = logs / ".probe_layers" / "b" / "batches.jsonl"
        ledger.parent.mkdir(parents=True)
        ledger.write_text(json.dumps({"event": "batch", "batch_id": "batch_gone", "position": 0, "backend": "m", "calls": 3}) + "\n")
        base = ["probes", "ask", str(logs), "--battery", CHAINED, "--batch", "--poll-s", "0.05", "-q", "--json", "--no-preflight"]
        assert main([*base, "--layer", "b"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["stopped"] is None and out["games"][0]["pending"] == 0
        assert any(json.loads(x).get("status") == "not found" for x in ledger.read_text().splitlines())
        created = srv.batches.created
        from mafiascope.backends.registry import run_closing
        from mafiascope.probes.ask import AskRequest, Price, prepare, run_ask

        req = AskRequest(logs, CHAINED, "m", price=Price(1000.0, 1000.0), batch=True)
        res = run_closing(run_ask(prepare(req), req, poll_s=0.05, budget_money=1e-9))  # the money run_ask is allowed, spent at once
        assert "budget" in res["stopped"] and srv.batches.created - created == 1  # the first batch only
        assert 0 < res["games"][0]["answered"] < res["games"][0]["scheduled"]
    assert len(_answers(layer_dir(g, "b"))) == out["games"][0]["scheduled"]
