"""The front ends (batch, arena run, validate ab, fork batches) run through the one study runner and its ledger."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mafiascope.cli import main
from mafiascope.logs.io import list_game_dirs, read_jsonl
from mafiascope.play.ledger import StudyLedger

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _batch_cmd(logs: Path, n: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "mafiascope", "batch", "-n", str(n), "--parallel", "4", "--id-prefix", "p", "--logs", str(logs),
            "--no-probes", "--no-snapshots", "--no-preflight", "--json", *extra]  # fmt: skip


def _kinds(d: Path) -> list[str]:
    return [r["kind"] for r in read_jsonl(d / "game.jsonl")]


def _claims(ledger: StudyLedger) -> dict[str, list[str]]:
    """game id -> the runners that claimed it, in order."""
    out: dict[str, list[str]] = {}
    for r in ledger.records():
        if r.get("event") == "state" and r.get("state") == "running":
            out.setdefault(r["game_id"], []).append(r["runner"])
    return out


@pytest.mark.slow
def test_kill_9_batch_then_resume_loses_and_duplicates_nothing(tmp_path):
    logs, n = tmp_path / "logs", 80
    ledger = StudyLedger(logs / ".batches" / "p")
    proc = subprocess.Popen(_batch_cmd(logs, n), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    deadline = time.time() + 120
    while time.time() < deadline and ledger.counts().get("finished", 0) < 6:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = ledger.rows()
    states = [r["state"] for r in before.values()]
    assert states.count("finished") >= 6 and states.count("pending") > 0, states  # killed mid-run, some never started
    finished = {g: (logs / g / "game.jsonl").read_bytes() for g, r in before.items() if r["state"] == "finished"}
    interrupted = [g for g, r in before.items() if r["state"] == "running"]

    # a plain re-run is refused: the batch exists
    assert main(["batch", "-n", str(n), "--id-prefix", "p", "--logs", str(logs), "--no-probes", "--no-snapshots", "--json"]) == 2
    code = subprocess.run(_batch_cmd(logs, n, "--resume"), capture_output=True, text=True, env=ENV, timeout=600)
    assert code.returncode == 0, code.stderr
    out = json.loads(code.stdout)
    assert out["games"] == n and out["errors"] == 0 and sorted(out["game_ids"]) == [f"p-{i:04d}" for i in range(n)]
    dirs = list_game_dirs(logs)
    assert sorted(d.name for d in dirs) == [f"p-{i:04d}" for i in range(n)]  # none lost, none duplicated
    for d in dirs:
        kinds = _kinds(d)
        assert kinds.count("setup") == 1 and kinds.count("game_over") == 1, d
    assert all((logs / g / "game.jsonl").read_bytes() == b for g, b in finished.items())  # finished games untouched
    claims = _claims(ledger)
    assert all(len(claims[g]) == 1 for g in finished)  # never played twice
    assert all(len(claims[g]) == 2 for g in interrupted)  # the killed run's games: replayed once from scratch
    assert ledger.counts()["finished"] == n


@pytest.mark.slow
def test_two_runners_share_one_batch_through_the_ledger(tmp_path):
    logs, n = tmp_path / "logs", 24
    ledger = StudyLedger(logs / ".batches" / "p")
    first = subprocess.Popen(_batch_cmd(logs, n), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    deadline = time.time() + 60
    while time.time() < deadline and not ledger.exists():
        time.sleep(0.02)
    second = subprocess.Popen(_batch_cmd(logs, n, "--resume"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    outs = [p.communicate(timeout=600)[0] for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0]
    claims = _claims(ledger)
    assert sorted(claims) == [f"p-{i:04d}" for i in range(n)] and all(len(c) == 1 for c in claims.values())  # one runner per game
    dirs = list_game_dirs(logs)
    assert len(dirs) == n and all(_kinds(d).count("setup") == 1 for d in dirs)
    last = json.loads(outs[1])
    assert last["games"] + len(last["skipped"]) <= n and last["errors"] == 0


@pytest.mark.slow
def test_arena_run_resumes_an_old_format_run_through_the_study_ledger(tmp_path, capsys):
    """An arena run written before arena runs had a study ledger (data/arena/demo-bots without its
    .study/) still loads, and a resume plays exactly the games its arena ledger does not list as finished."""
    import shutil

    run = tmp_path / "demo-bots"
    shutil.copytree(REPO / "data" / "arena" / "demo-bots", run, ignore=shutil.ignore_patterns(".study"))
    assert not (run / ".study").exists()
    lines = (run / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    fin = [i for i, line in enumerate(lines) if json.loads(line)["event"] == "finished"]
    lost = [json.loads(lines[i])["game_id"] for i in fin[-2:]]  # an interrupted old run: its last two games never finished
    orig = {g: [(r["kind"], r.get("winner")) for r in read_jsonl(run / g / "game.jsonl")] for g in lost}
    (run / "ledger.jsonl").write_text("\n".join(x for i, x in enumerate(lines) if i not in fin[-2:]) + "\n", encoding="utf-8")
    shutil.rmtree(run / lost[0])
    (run / lost[1] / "game.jsonl").write_text(json.dumps(read_jsonl(run / lost[1] / "game.jsonl")[0]) + "\n")
    kept = {d.name: (d / "game.jsonl").read_bytes() for d in list_game_dirs(run) if d.name not in lost}
    args = ["arena", "run", "--rules", "sport,open_table,imbalanced", "--games", "10", "--seed", "0", "--logs", str(run), "--json"]
    assert main(args) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["played_now"] == 2 and s["finished"] == s["scheduled"] == 30 and s["failed"] == 0
    assert all((run / g / "game.jsonl").read_bytes() == b for g, b in kept.items())  # finished games untouched
    assert {g: [(r["kind"], r.get("winner")) for r in read_jsonl(run / g / "game.jsonl")] for g in lost} == orig  # same games again
    rows = StudyLedger(run / ".study").rows()
    assert sum(r["state"] == "finished" for r in rows.values()) == 30
    assert main(args) == 0 and json.loads(capsys.readouterr().out)["played_now"] == 0  # nothing left
    assert main(["arena", "report", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 30


@pytest.mark.slow
def test_validate_ab_counts_invalid_games_and_leaves_them_out(tmp_path, capsys):
    from mafiascope.backends.registry import clear_cache

    from .servers import threaded_devserver
    from .test_fault_budget import config_text

    clear_cache()
    logs = tmp_path / "ab"
    with threaded_devserver(fault_every_request="500") as srv:
        bad = tmp_path / "bad.yaml"
        bad.write_text(config_text(srv.base_url, failing_seats=3))  # 3 of 7 seats fall back on every move: over 0.2
        args = ["validate", "ab", "-c", str(bad), "--games", "2", "--logs", str(logs), "--no-preflight", "--json"]
        assert main(args) == 0
        res = json.loads(capsys.readouterr().out)
    clear_cache()
    assert res["invalid"] == {"probed": ["ab-probed-0000", "ab-probed-0001"], "unprobed": ["ab-unprobed-0000", "ab-unprobed-0001"]}
    assert res["games"] == {"probed": [], "unprobed": []} and res["errors"] == []  # excluded, not errors
    assert res["mafia_wins"]["probed"]["n"] == 0 and res["rounds"]["probed"]["n"] == 0
    rows = StudyLedger(logs / ".ab" / "ab").rows()
    assert [r["state"] for r in rows.values()] == ["invalid"] * 4
    # the same command again resumes the ledger: nothing replayed, the same answer
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["invalid"] == res["invalid"] and len(_claims(StudyLedger(logs / ".ab" / "ab"))) == 4


def _fork_digest(tmp: Path) -> dict:
    """Six branches of a bot game forked at its eighth step with batch seed 1: per-branch outcome and a
    digest of its events (wall-clock and id fields stripped), the batch summary."""
    import asyncio
    import hashlib

    from mafiascope.replay.forks import plan_fork, run_fork_batch
    from mafiascope.replay.source import ParentGame

    from .test_replay_forks import play_bot, strip

    parent = play_bot(tmp / "parent")
    rec = asyncio.run(run_fork_batch(plan_fork(parent, ParentGame(parent).keys()[7], 6, logs=tmp / "f", batch_seed=1, batch_id="golden",
                                               parallel=3)))  # fmt: skip
    branches = []
    for b in rec["branches"]:
        events = strip(read_jsonl(Path(b["path"]) / "game.jsonl"))
        branches.append({k: b[k] for k in ("replica_idx", "game_id", "winner", "rounds", "reason", "faults", "acts", "error")}
                        | {"events_sha256": hashlib.sha256(json.dumps(events, sort_keys=True).encode()).hexdigest()})  # fmt: skip
    out = {"fork_point": rec["fork_point"], "branches": branches, "summary": rec["summary"], "failed": rec["failed"]}
    return json.loads(json.dumps(out, sort_keys=True)), rec


def test_fork_batch_through_the_runner_matches_the_old_loop(tmp_path):
    """tests/golden/fork_batch_old_loop.json was recorded with the fork batch's own asyncio loop (before
    fork batches went through the study runner, commit 28b080f): the same seeds give the same branches."""
    digest, rec = _fork_digest(tmp_path)
    assert digest == json.loads((REPO / "tests" / "golden" / "fork_batch_old_loop.json").read_text())
    rows = StudyLedger(tmp_path / "f" / "experiments" / "fork-golden.ledger").rows()
    assert [r["state"] for r in rows.values()] == ["finished"] * 6 and rec["invalid"] == []
    assert [r["replica_idx"] for r in rows.values()] == list(range(6))


@pytest.mark.slow
def test_fork_batch_lists_invalid_branches_and_leaves_them_out_of_the_summary(tmp_path):
    import asyncio

    from mafiascope.backends.registry import clear_cache
    from mafiascope.config import load_game_config
    from mafiascope.play.game import play_game
    from mafiascope.replay.forks import plan_fork, run_fork_batch
    from mafiascope.replay.source import ParentGame

    from .servers import threaded_devserver
    from .test_fault_budget import config_text

    clear_cache()
    with threaded_devserver(fault_every_request="500") as srv:
        cfg_path = tmp_path / "bad.yaml"
        cfg_path.write_text(config_text(srv.base_url, failing_seats=3) + "snapshots: true\n")
        asyncio.run(play_game(load_game_config(cfg_path), logs_dir=tmp_path / "logs", seed=3, game_id="parent"))
        parent = tmp_path / "logs" / "parent"
        rec = asyncio.run(run_fork_batch(plan_fork(parent, ParentGame(parent).keys()[2], 2, logs=tmp_path / "logs", batch_id="inval",
                                                   batch_seed=1)))  # fmt: skip
    clear_cache()
    assert rec["invalid"] == ["fork-inval-000", "fork-inval-001"] and all(b["invalid"] for b in rec["branches"])
    assert rec["summary"]["n"] == 0 and rec["failed"] == 0
    on_disk = json.loads((tmp_path / "logs" / "experiments" / "fork-inval.json").read_text())
    assert on_disk["invalid"] == rec["invalid"]


# loopback only: with RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 Ray keeps 127.0.0.1 instead of the host's network
# address; RAY_AUTH_MODE=disabled: head and driver agree on no token whatever ~/.ray holds
RAY_ENV = {**ENV, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled"}


def _pids_under(tmp: str) -> list[int]:
    """The processes of the Ray head started under ``tmp`` (their command lines name its session directory)."""
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if tmp in (p / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(p.name))
            except OSError:
                continue
    return pids


def _stop_head(tmp: str) -> None:
    """``ray stop`` would stop every Ray instance on the machine (other test runs' too): stop only ours, by pid."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _pids_under(tmp):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.time() + 10
        while _pids_under(tmp) and time.time() < deadline:
            time.sleep(0.2)


@pytest.fixture
def ray_head():
    """A real local Ray head on a free loopback port (``ray start --head``), its processes stopped in teardown."""
    import shutil
    import socket
    import tempfile

    pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'mafiascope[ray]'")
    ray_bin = Path(sys.executable).with_name("ray")
    if not ray_bin.is_file():
        pytest.skip("the ray command is not installed next to this Python")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths live under it
    env = RAY_ENV  # workers inherit PYTHONPATH: they import mafiascope
    start = [str(ray_bin), "start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false", f"--temp-dir={tmp}",
             "--node-ip-address=127.0.0.1", "--disable-usage-stats"]  # fmt: skip
    done = subprocess.run(start, capture_output=True, text=True, env=env, timeout=180)
    if done.returncode != 0:
        _stop_head(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.fail(f"ray start failed: {done.stderr[-2000:]}")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        _stop_head(tmp)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.slow
def test_study_runs_on_a_ray_cluster_address(tmp_path, ray_head):
    spec = tmp_path / "ray.yaml"
    spec.write_text("name: onray\nseed: 1\ngames_per_arm: 2\nbackends: {bal: balanced}\n"
                    "arms: [{name: a, lineup: bal, probes: none}]\nexecutor: {kind: local, parallel: 2}\n")  # fmt: skip
    run = subprocess.run([sys.executable, "-m", "mafiascope", "study", "run", str(spec), "--dir", str(tmp_path / "s"), "--executor", "ray",
                          "--address", ray_head, "--json"], capture_output=True, text=True, env=RAY_ENV, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout)
    assert out["counts"]["finished"] == 2 and out["played_now"] == 2
    games = list_game_dirs(tmp_path / "s" / "games")
    assert sorted(d.name for d in games) == ["onray-a-0000", "onray-a-0001"]
    # the same games as the local executor plays (same seeds, offline bots)
    local = subprocess.run([sys.executable, "-m", "mafiascope", "study", "run", str(spec), "--dir", str(tmp_path / "l"), "--json"],
                           capture_output=True, text=True, env=ENV, timeout=600)  # fmt: skip
    assert local.returncode == 0, local.stderr[-3000:]
    for d in games:
        a = [(r["kind"], r.get("winner")) for r in read_jsonl(d / "game.jsonl")]
        assert a == [(r["kind"], r.get("winner")) for r in read_jsonl(tmp_path / "l" / "games" / d.name / "game.jsonl")]
    # a front end that already takes Ray options goes to the same address through the same runner
    arena = subprocess.run([sys.executable, "-m", "mafiascope", "arena", "run", "--rules", "imbalanced", "--games", "1", "--executor", "ray",
                            "--address", ray_head, "--logs", str(tmp_path / "arena"), "--json"],
                           capture_output=True, text=True, env=RAY_ENV, timeout=600)  # fmt: skip
    assert arena.returncode == 0, arena.stderr[-3000:]
    assert json.loads(arena.stdout)["finished"] == 1
    assert [r["state"] for r in StudyLedger(tmp_path / "arena" / ".study").rows().values()] == ["finished"]


def test_batch_resume_takes_over_a_batch_older_than_its_ledger(tmp_path, capsys):
    """A named batch played before batches had a ledger (no .batches/): --resume keeps its finished games
    and replays the one it left half-played."""
    import shutil

    logs = tmp_path / "logs"
    args = ["batch", "-n", "3", "--id-prefix", "p", "--logs", str(logs), "--no-probes", "--no-snapshots", "--no-preflight", "--json"]
    assert main(args) == 0
    full = json.loads(capsys.readouterr().out)
    shutil.rmtree(logs / ".batches")
    kept = {g: (logs / g / "game.jsonl").read_bytes() for g in ("p-0000", "p-0002")}
    lines = (logs / "p-0001" / "game.jsonl").read_text().splitlines()
    (logs / "p-0001" / "game.jsonl").write_text("\n".join(lines[:3]) + "\n")  # killed mid-game
    assert main(args + ["--resume"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game_ids"] == ["p-0000", "p-0001", "p-0002"] and out["skipped"] == [] and out["winners"] == full["winners"]
    assert all((logs / g / "game.jsonl").read_bytes() == b for g, b in kept.items())
    assert _kinds(logs / "p-0001").count("game_over") == 1
    claims = _claims(StudyLedger(logs / ".batches" / "p"))
    assert len(claims["p-0000"]) == 1 and len(claims["p-0001"]) == 2  # only the half-played game was played again
