"""Games of studies, arena runs and batches started after the session began open in every view, count in the
sidebar and join the corpus (issue 35 item 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from .app_support import ROOT, assert_clean, copy_demo, errors, new_app, plain, use_logs  # noqa: E402

STUDY = """name: tiny
seed: 0
games_per_arm: 2
backends:
  balanced: {type: bot, preset: balanced}
arms:
  - {name: a, lineup: balanced, rules: classic, probes: suspicion, language: en}
executor: {kind: local, parallel: 2}
"""


def cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "mafiascope", *args], check=True, cwd=ROOT, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def games_tile(at) -> int:
    return int(next(m for m in at.metric if m.label == "Games").value.replace(",", ""))


@pytest.fixture()
def runs(tmp_path, monkeypatch) -> Path:
    use_logs(monkeypatch, copy_demo(tmp_path / "logs", 2), tmp_path)
    return tmp_path / "runs"


def count(at) -> tuple[int, int]:
    """The sidebar's "N of M games"."""
    text = next(c.value for c in at.sidebar.caption if " of " in c.value)
    n, _, m = text.split(" ")[:3]
    return int(n), int(m)


@pytest.mark.slow
def test_study_and_arena_games_open_everywhere_and_count(runs, tmp_path):
    at = new_app(page="dashboard").run()
    assert_clean(at)
    n0, m0 = count(at)
    g0 = games_tile(at)
    # a study and an arena run finish while the session is open (the app's own layout under the runs directory)
    spec = tmp_path / "tiny.yaml"
    spec.write_text(STUDY, encoding="utf-8")
    cli("study", "run", str(spec), "--dir", str(runs / "studies" / "tiny"), "--json")
    cli("arena", "run", "--rules", "sport", "--games", "1", "--logs", str(runs / "arena" / "r1"), "--json")
    at.run()
    assert count(at) == (n0 + 3, m0 + 3)  # the new corpora joined the session's selection
    assert games_tile(at) == g0 + 3  # the two study games and the arena game (transcript-only games count too)
    names = [at.sidebar.multiselect(key="sb_corpora").format_func(c) for c in at.sidebar.multiselect(key="sb_corpora").value]
    assert {"study tiny", "arena r1"} <= set(names), names
    for page, game in (("live", "tiny-a-0001"), ("impersonate", "tiny-a-0000"), ("replay", "tiny-a-0000"), ("live", "r1-sport-0000")):
        at.query_params.clear()
        at.query_params.update({"page": page, "game": game})
        at.run()
        assert_clean(at)
        assert not errors(at), (page, game, errors(at))
        assert at.selectbox(key="sb_game").value == game


@pytest.mark.slow
def test_a_new_session_opens_a_study_game_by_its_link(runs, tmp_path):
    spec = tmp_path / "tiny.yaml"
    spec.write_text(STUDY, encoding="utf-8")
    cli("study", "run", str(spec), "--dir", str(runs / "studies" / "tiny"), "--json")
    at = new_app(page="live", game="tiny-a-0000").run()
    assert_clean(at)
    assert not errors(at), errors(at)
    assert at.selectbox(key="sb_game").value == "tiny-a-0000"
    assert any("tiny-a-0000 · " in plain(m.value) and "study tiny" in m.value for m in at.markdown)  # the header names the study


def test_deep_listing_stops_at_games_and_hidden_folders(tmp_path):
    from mafiascope.logs.io import list_game_dirs

    for rel in ("a", "x/b", "x/y/c", "x/y/z/d", "x/y/z/w/e", ".hidden/f", "x/.launch/g"):
        (tmp_path / rel).mkdir(parents=True)
        (tmp_path / rel / "game.jsonl").write_text("{}\n")
    (tmp_path / "a" / "inner").mkdir()
    (tmp_path / "a" / "inner" / "game.jsonl").write_text("{}\n")  # inside a game: not a game of the corpus
    names = lambda d: [p.name for p in list_game_dirs(tmp_path, depth=d)]  # noqa: E731
    assert names(2) == ["f", "a", "b"]  # the default depth: children and grandchildren, as before
    assert names(4) == ["f", "a", "b", "c", "d"]
