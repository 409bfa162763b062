"""No probe is dropped: late answers under a rate limit, the durable queue a crash leaves, resume finishing
it, skipping only when asked, the probe-loss budget, a study overlapping games with earlier probes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from mafiascope.backends.registry import clear_cache
from mafiascope.cli import main
from mafiascope.config import load_game_config, parse_game_config
from mafiascope.play.game import play_game
from mafiascope.logs.io import iter_probe_records, read_jsonl
from mafiascope.logs.probe_steps import read_probe_steps
from mafiascope.probes.pending import needs_finishing, pending_calls
from mafiascope.probes.recorded import RecordedGame
from mafiascope.play.usage import game_usage

from .servers import threaded_devserver

ROOT = Path(__file__).resolve().parents[1]
SUSPICION = str(ROOT / "configs/probes/suspicion_en.yaml")


def _net_cfg(base_url: str, rounds: int = 1, battery: str = SUSPICION, **probes: object) -> object:
    return parse_game_config({
        "name": "queue", "rules": {"name": "classic", "roles": {"Mafia": 2, "Doctor": 1, "Villager": 4}, "intro_round": True,
                                   "max_rounds": rounds},
        "seats": [{"backend": "m"} for _ in range(7)],
        "backends": {"m": {"type": "openai", "base_url": base_url, "model": "bot-balanced", "timeout": 5, "rpm": 1200, "burst": 2}},
        "probes": {"enabled": True, "battery": battery, **probes}, "snapshots": True}, "test")  # fmt: skip


def _over(gdir: Path) -> dict:
    return read_jsonl(gdir / "game.jsonl")[-1]


def _answers(gdir: Path) -> dict[tuple[int, str, str], tuple[str | None, str | None]]:
    return {(r["step_index"], r["player_name"], r["probe_id"]): (r["question"], r["answer_raw"]) for r in iter_probe_records(gdir)}


def _bot_cfg(tmp: Path) -> object:
    cfg = load_game_config(ROOT / "configs/classic.yaml")
    cfg.probes.battery, cfg.probes.probes = str(ROOT / "configs/probes/default_en.yaml"), None
    cfg.rules.max_rounds = 2
    return cfg


@pytest.mark.slow
async def test_under_a_rate_limit_every_probe_is_answered_late_and_the_moves_keep_their_pace(tmp_path):
    clear_cache()
    with threaded_devserver(latency_ms=20) as srv:
        cfg = _net_cfg(srv.base_url)
        un = await play_game(cfg, logs_dir=tmp_path, seed=4, game_id="un", probes=False)
        acts: list[float] = []
        pr = await play_game(cfg, logs_dir=tmp_path, seed=4, game_id="pr", on_acts_done=lambda: acts.append(time.time()))
        t1 = time.time()
    over = _over(Path(pr.path))
    pc = over["cost"]["probes"]
    recs = list(iter_probe_records(pr.path))
    # 1200 rpm cannot keep up with ~7 probe calls per move: they are answered late, none is dropped
    assert pc["scheduled"] == pc["calls"] == pc["answered"] == len(recs) > 100 and pc["skipped"] == 0 and pc["errors"] == 0
    assert not any(r.get("lagged") or r.get("error") for r in recs)
    assert over["probes_lost"] == 0 and not over.get("invalid")
    assert pc["delay_ms"]["max"] > 2000 and pc["delay_ms"]["n"] == len(recs)  # late, by seconds
    assert acts and t1 - acts[0] > 1.0  # the probes drained after the last move
    # the moves went first: the probed game's moves keep the unprobed pace
    act = {g: _over(Path(r.path))["cost"]["act"] for g, r in (("un", un), ("pr", pr))}
    assert act["pr"]["latency_ms"] / act["pr"]["calls"] < act["un"]["latency_ms"] / act["un"]["calls"] + 60
    # every call of every step in probe_steps.jsonl has its record: nothing pending
    assert pending_calls(RecordedGame.load(pr.path)) == []
    steps = read_probe_steps(pr.path)
    assert steps.acts_done is not None and len(steps.steps) == max(r["step_index"] for r in recs)


@pytest.mark.slow
async def test_skipping_is_explicit_and_a_skipped_call_is_never_a_call_an_error_or_spend(tmp_path):
    clear_cache()
    with threaded_devserver(latency_ms=20) as srv:
        res = await play_game(_net_cfg(srv.base_url, max_lag_s=0.5, loss_budget=1.0), logs_dir=tmp_path, seed=4, game_id="skip")
    gdir = Path(res.path)
    over = _over(gdir)
    pc = over["cost"]["probes"]
    recs = list(iter_probe_records(gdir))
    skipped = [r for r in recs if r.get("lagged")]
    assert skipped and pc["skipped"] == len(skipped) and pc["scheduled"] == len(recs)
    assert pc["calls"] == pc["answered"] == len(recs) - len(skipped) and pc["errors"] == 0
    assert over["probes_lost"] == len(skipped) and not over.get("invalid")  # budget 1.0: lost, but allowed
    use = game_usage(gdir)["by_backend"]["m"]
    assert use["probe_calls"] == pc["calls"] and use["probes_skipped"] == len(skipped) and use["probes_failed"] == 0
    assert use["probes_scheduled"] == len(recs) and use["probes_answered"] == pc["answered"]
    # the cost command counts no skipped call either
    from mafiascope.probes.cost import game_cost

    assert game_cost(gdir)["probe_calls"] == pc["calls"] and game_cost(gdir)["probe_errors"] == 0


@pytest.mark.slow
def test_probe_loss_over_the_budget_makes_the_game_invalid(tmp_path):
    from .test_probes_engine import backends_for, run

    cfg = _bot_cfg(tmp_path)
    res = run(cfg, tmp_path, "lossy", 3, True, backends=backends_for(cfg, fail={"suspicion_ranking"}))
    over = _over(Path(res.path))
    assert over["invalid"] and "probe calls got no answer" in over["invalid_reason"] and over["probes_lost"] > 0
    assert res.invalid and over["moves_fell_back"] == 0  # the moves were fine: only the probe loss counts
    cfg.probes.loss_budget = 1.0
    ok = run(cfg, tmp_path, "allowed", 3, True, backends=backends_for(cfg, fail={"suspicion_ranking"}))
    assert not _over(Path(ok.path)).get("invalid")


def _cut(src: Path, dst: Path, keep_lines: int) -> None:
    """A copy of a finished game as a crash while its probes drained leaves it: introspection.jsonl cut
    after ``keep_lines`` lines (plus a torn line), no game_over."""
    shutil.copytree(src, dst)
    lines = (dst / "introspection.jsonl").read_text().splitlines(keepends=True)
    (dst / "introspection.jsonl").write_text("".join(lines[:keep_lines]) + lines[keep_lines][:40])
    game = (dst / "game.jsonl").read_text().splitlines(keepends=True)
    (dst / "game.jsonl").write_text("".join(game[:-1]))


@pytest.mark.slow
def test_resume_finishes_the_pending_probe_calls_with_the_same_answers(tmp_path, capsys):
    from .test_probes_engine import backends_for, run

    cfg = _bot_cfg(tmp_path)
    ref = Path(run(cfg, tmp_path / "ref", "g", 5, True, backends=backends_for(cfg)).path)
    logs = tmp_path / "logs"
    _cut(ref, logs / "g", keep_lines=400)
    assert needs_finishing(logs / "g")
    missing = pending_calls(RecordedGame.load(logs / "g"))
    assert 0 < len(missing) < len(_answers(ref))
    assert main(["resume", str(logs), "--min-idle", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(r["game_id"], r["resume_point"], r["probes_finished"]) for r in out["resumed"]] == [("g", "probes", len(missing))]
    # the same questions and answers as the uninterrupted game (bots are deterministic for a seed)
    assert _answers(logs / "g") == _answers(ref)
    old, new = _over(ref), _over(logs / "g")
    assert {k: v for k, v in new.items() if k not in ("ts", "cost", "backends")} == {k: v for k, v in old.items() if k not in ("ts", "cost", "backends")}
    for k in ("scheduled", "answered", "parsed", "valid", "skipped", "errors"):
        assert new["cost"]["probes"][k] == old["cost"]["probes"][k], k
    assert new["cost"]["probes"]["finished_by_resume"] == len(missing) and new["cost"]["act"] == old["cost"]["act"]
    assert not needs_finishing(logs / "g") and pending_calls(RecordedGame.load(logs / "g")) == []
    # the game's snapshots now read (their probe memory refers to the records just written)
    from mafiascope.replay.source import ParentGame

    assert ParentGame(logs / "g").snapshots[-1]["probe_memory"] == ParentGame(ref).snapshots[-1]["probe_memory"]


@pytest.mark.slow
def test_a_crash_mid_game_asks_the_pending_calls_of_the_kept_steps_before_playing_on(tmp_path):
    from .test_probes_engine import backends_for, run
    from mafiascope.replay.resume import find_unfinished, resume_all

    cfg = _bot_cfg(tmp_path)
    ref = Path(run(cfg, tmp_path / "ref", "g", 5, True, backends=backends_for(cfg)).path)
    logs = tmp_path / "logs"
    _cut(ref, logs / "g", keep_lines=100)
    steps = (logs / "g" / "probe_steps.jsonl").read_text().splitlines(keepends=True)
    (logs / "g" / "probe_steps.jsonl").write_text("".join(steps[:-1]))  # no acts_done: died mid-game
    snaps = (logs / "g" / "state.jsonl").read_text().splitlines(keepends=True)
    (logs / "g" / "state.jsonl").write_text("".join(snaps[:20]))
    from mafiascope.replay.source import ParentGame, ReplayError

    with pytest.raises(ReplayError, match="pending"):  # the snapshots name records not written yet
        ParentGame(logs / "g")
    [cand] = find_unfinished(logs)
    assert cand.point is not None and not cand.finish_probes
    [res] = asyncio.run(resume_all([cand]))
    assert "error" not in res, res
    assert _answers(logs / "g") == _answers(ref)  # the game played on exactly, its probes too
    def steps(gdir: Path) -> list[dict]:
        return [s.model_dump(exclude={"ts"}) for s in read_probe_steps(gdir).steps]

    assert steps(logs / "g") == steps(ref)  # the kept steps, then the continuation's


def _devserver_proc(*args: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "mafiascope", "dev-server", "--port", "0", "--json", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None
    base = json.loads(proc.stdout.readline())["base_url"]
    return proc, base if base.rstrip("/").endswith("/v1") else base.rstrip("/") + "/v1"


def _wait_for(cond, timeout: float = 120.0) -> None:
    t0 = time.time()
    while not cond():
        if time.time() - t0 > timeout:
            raise AssertionError("timed out")
        time.sleep(0.05)


@pytest.mark.slow
def test_kill_9_while_the_probes_drain_then_resume_finishes_them(tmp_path, capsys):
    server, base = _devserver_proc("--latency-ms", "10")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        cfg_path = tmp_path / "g.yaml"
        data = yaml.safe_load(Path(ROOT / "configs/classic.yaml").read_text())
        data.update(backends={"m": {"type": "openai", "base_url": base, "model": "bot-balanced", "timeout": 5, "rpm": 600, "burst": 2}},
                    seats=[{"backend": "m"} for _ in range(7)], probes={"enabled": True, "battery": SUSPICION})  # fmt: skip
        data["rules"]["max_rounds"] = 1
        cfg_path.write_text(yaml.safe_dump(data))
        cmd = [sys.executable, "-m", "mafiascope", "run", "-c", str(cfg_path), "--seed", "2", "--game-id", "g", "--json"]
        ref = subprocess.run([*cmd, "--logs", str(tmp_path / "ref")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert ref.returncode == 0, ref.stderr[-2000:]
        logs = tmp_path / "logs"
        proc = subprocess.Popen([*cmd, "--logs", str(logs)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for(lambda: read_probe_steps(logs / "g").acts_done is not None)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert needs_finishing(logs / "g") and pending_calls(RecordedGame.load(logs / "g"))
        setup_before = read_jsonl(logs / "g" / "game.jsonl")[0]
        assert main(["resume", str(logs), "--min-idle", "0", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert [r["resume_point"] for r in out["resumed"]] == ["probes"]
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert read_jsonl(logs / "g" / "game.jsonl")[0] == setup_before  # no move played again
    assert _answers(logs / "g") == _answers(tmp_path / "ref" / "g")
    assert _over(logs / "g")["probes_lost"] == 0


def _rate_limited_study(tmp_path: Path, base: str, games: int) -> Path:
    data = {"name": "q", "seed": 3, "games_per_arm": games,
            "backends": {"m": {"type": "openai", "base_url": base, "model": "bot-balanced", "timeout": 5, "rpm": 900, "burst": 2}},
            "arms": [{"name": "a", "lineup": "m", "rules": "classic", "probes": SUSPICION}],
            "executor": {"kind": "local", "parallel": 1}, "out": str(tmp_path / "study")}  # fmt: skip
    path = tmp_path / "q.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.slow
def test_a_study_plays_its_next_game_while_the_last_ones_probes_drain(tmp_path):
    from mafiascope.study.run import run_study
    from mafiascope.study.spec import load_study_spec

    clear_cache()
    with threaded_devserver(latency_ms=10) as srv:
        spec = load_study_spec(_rate_limited_study(tmp_path, srv.base_url, 2))
        st = run_study(spec, quiet=True)
    games = sorted((tmp_path / "study" / "games").iterdir())
    first, second = (read_jsonl(g / "game.jsonl") for g in games)
    # one worker (parallel 1), yet the second game started before the first one's game_over: its probes drained behind
    assert second[0]["ts"] < first[-1]["ts"]
    assert st["counts"]["finished"] == 2 and st["probes"]["total"]["skipped"] == 0
    assert st["probes"]["total"]["answered"] == st["probes"]["total"]["scheduled"] > 0
    assert st["probes"]["by_arm_backend"]["a"]["m"]["answered_share"] == 1.0


@pytest.mark.slow
def test_a_study_killed_while_probes_drain_finishes_them_without_replaying_moves(tmp_path):
    server, base = _devserver_proc("--latency-ms", "10")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        path = _rate_limited_study(tmp_path, base, 1)
        proc = subprocess.Popen([sys.executable, "-m", "mafiascope", "study", "run", str(path), "--json"], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        gdir = tmp_path / "study" / "games" / "q-a-0000"
        _wait_for(lambda: read_probe_steps(gdir).acts_done is not None)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        setup_before = read_jsonl(gdir / "game.jsonl")[0]
        assert needs_finishing(gdir)
        done = subprocess.run([sys.executable, "-m", "mafiascope", "study", "run", str(path), "--json"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        server.terminate()
        server.wait(timeout=10)
    st = json.loads(done.stdout)
    assert st["counts"]["finished"] == 1 and st["probes"]["total"]["answered"] == st["probes"]["total"]["scheduled"]
    assert read_jsonl(gdir / "game.jsonl")[0] == setup_before  # the moves were kept, not replayed
