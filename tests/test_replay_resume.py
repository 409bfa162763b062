"""Crash resume: in place, same game id, exact continuation; a SIGKILLed batch loses and duplicates nothing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mafiascope.cli import main
from mafiascope.logs.io import list_game_dirs, read_jsonl
from mafiascope.replay.resume import STAGING, find_unfinished, last_kind, repair_staging

from .test_replay_forks import play_bot, strip


def crash_copy(src: Path, dst: Path, keep_snapshots: int, extra_events: int = 3) -> None:
    """A copy of a finished game cut as a crash would leave it (plus a torn last line)."""
    shutil.copytree(src, dst)
    snaps = (dst / "state.jsonl").read_text().splitlines(keepends=True)
    (dst / "state.jsonl").write_text("".join(snaps[:keep_snapshots]) + snaps[keep_snapshots][:50])
    n_events = len(json.loads(snaps[keep_snapshots - 1])["state"]["events"])
    lines = (dst / "game.jsonl").read_text().splitlines(keepends=True)
    (dst / "game.jsonl").write_text("".join(lines[: 1 + n_events + extra_events]) + '{"torn')


def test_resume_continues_exactly_in_place(tmp_path, capsys):
    src = play_bot(tmp_path / "orig", gid="g")
    logs = tmp_path / "logs"
    crash_copy(src, logs / "g", keep_snapshots=14)
    assert last_kind(logs / "g") != "game_over"
    cands = find_unfinished(logs)
    assert [c.game_id for c in cands] == ["g"] and cands[0].point is not None
    assert main(["resume", str(logs), "--min-idle", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["game_id"] for r in out["resumed"]] == ["g"]
    assert [d.name for d in list_game_dirs(logs)] == ["g"] and not (logs / STAGING).exists()
    new = read_jsonl(logs / "g" / "game.jsonl")
    old = read_jsonl(src / "game.jsonl")
    assert new[0]["resume_of"] == "g" and new[0]["resume_point"] == list(cands[0].point)
    assert {k: v for k, v in new[0].items() if k not in ("resume_of", "resume_point", "resumes")} == old[0]
    assert strip(new) == strip(old)  # the same logical game, exactly
    snaps = read_jsonl(logs / "g" / "state.jsonl")
    assert [(s["round"], s["msg_seq"]) for s in snaps] == [(s["round"], s["msg_seq"]) for s in read_jsonl(src / "state.jsonl")]
    # nothing left to do
    assert main(["resume", str(logs), "--min-idle", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["resumed"] == []


def test_interrupted_swap_is_repaired(tmp_path):
    src = play_bot(tmp_path / "orig", gid="g")
    logs = tmp_path / "logs"
    stage = logs / STAGING
    (stage / "g").mkdir(parents=True)
    shutil.copytree(src, stage / "g" / "g")  # finished staged copy
    crash_copy(src, stage / "g.old", keep_snapshots=5)  # the live dir was already moved away
    notes = repair_staging(logs)
    assert notes and (logs / "g" / "game.jsonl").is_file() and last_kind(logs / "g") == "game_over"
    assert not stage.exists()


def test_never_started_and_active_games_are_skipped(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "game.jsonl").write_text("")
    src = play_bot(tmp_path / "orig", gid="g")
    crash_copy(src, tmp_path / "busy", keep_snapshots=5)
    cands = {c.game_id: c for c in find_unfinished(tmp_path, min_idle=3600)}
    assert cands["empty"].point is None and cands["empty"].empty
    assert cands["g"].point is None and "still running" in cands["g"].reason
    assert main(["resume", str(tmp_path), "--min-idle", "0", "--drop-empty"]) == 0
    assert not (tmp_path / "empty").exists()


@pytest.mark.slow
def test_sigkilled_batch_resumes_without_loss_or_duplicates(tmp_path):
    logs = tmp_path / "logs"
    cmd = [sys.executable, "-m", "mafiascope", "batch", "-n", "400", "--parallel", "8", "--logs", str(logs), "--no-probes"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and len([d for d in logs.glob("*/game.jsonl")]) < 12:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {d.name: last_kind(d) for d in list_game_dirs(logs)}
    finished_before = {g for g, k in before.items() if k == "game_over"}
    assert before and len(finished_before) < 400
    finished_logs = {g: (logs / g / "game.jsonl").read_bytes() for g in finished_before}
    assert main(["resume", str(logs), "--min-idle", "0", "--drop-empty"]) == 0
    after = {d.name: last_kind(d) for d in list_game_dirs(logs)}
    started = {g for g, k in before.items() if k is not None}
    assert set(after) == started  # no game lost, none duplicated
    assert all(k == "game_over" for k in after.values())  # every started game is finished
    assert all((logs / g / "game.jsonl").read_bytes() == b for g, b in finished_logs.items())  # finished games untouched
    ids = [read_jsonl(logs / g / "game.jsonl")[0]["game_id"] for g in after]
    assert len(ids) == len(set(ids))
