"""The run/batch/demo commands as a user calls them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mafiascope.logs.io import read_jsonl

REPO = Path(__file__).resolve().parents[1]


def cli(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mafiascope", *args], cwd=REPO, input=input, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_run_json_reports_game_and_writes_logs(tmp_path):
    out = cli("run", "-c", "configs/classic.yaml", "--seed", "2", "--logs", str(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert set(res) >= {"game_id", "path", "winner", "rounds"}
    d = Path(res["path"])
    assert (d / "game.jsonl").is_file() and (d / "introspection.jsonl").is_file() and (d / "state.jsonl").is_file()
    assert read_jsonl(d / "game.jsonl")[-1]["winner"] == res["winner"]


@pytest.mark.slow
def test_run_flags_turn_off_probes_and_snapshots(tmp_path):
    out = cli("run", "--seed", "2", "--logs", str(tmp_path), "--game-id", "g", "--no-probes", "--no-snapshots", "-q")
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "g" / "introspection.jsonl").exists() and not (tmp_path / "g" / "state.jsonl").exists()
    assert out.stdout.strip().endswith(str(tmp_path / "g"))


@pytest.mark.slow
def test_run_refuses_bad_game_id_and_existing_game(tmp_path):
    bad = cli("run", "--logs", str(tmp_path), "--game-id", "../escape", "--no-probes")
    assert bad.returncode == 2 and "invalid game id" in bad.stderr
    assert cli("run", "--logs", str(tmp_path), "--game-id", "g", "--no-probes", "-q").returncode == 0
    again = cli("run", "--logs", str(tmp_path), "--game-id", "g", "--no-probes", "-q")
    assert again.returncode == 2 and "already exists" in again.stderr


@pytest.mark.slow
def test_batch_json_summary(tmp_path):
    out = cli("batch", "-n", "6", "--parallel", "3", "--logs", str(tmp_path), "--no-probes", "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["games"] == 6 and res["errors"] == 0 and sum(res["winners"].values()) == 6
    assert len(list(tmp_path.iterdir())) == 6


@pytest.mark.slow
def test_human_seat_plays_from_stdin(tmp_path):
    moves = "I am just a quiet villager.\n\n" * 200
    out = cli("run", "--seed", "3", "--human", "0", "--logs", str(tmp_path), "--game-id", "h", "--no-probes", "-q", input=moves)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("You are ")
    me = out.stdout.split()[2].rstrip(",")
    mine = [e for e in read_jsonl(tmp_path / "h" / "game.jsonl") if e.get("player") == me]
    assert mine and all(e["response"].startswith("I am just a quiet villager") for e in mine)
