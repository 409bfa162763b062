"""The game index of a large corpus read for the first time: progress and the tiles of the games read
so far come before the index is complete (app/data.game_index's ``progress``, app/index_progress.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from .app_support import DEMO, copy_demo  # noqa: E402


@pytest.fixture()
def logs(tmp_path, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "cache"))
    return copy_demo(tmp_path / "logs", 5)


def _fresh() -> None:
    from app import data

    data.clear_index()
    data._ROW_MEMO.clear()
    data._STORED_ROOTS.clear()


def test_index_tells_progress_first_then_the_same_rows(logs, monkeypatch):
    from app import data

    monkeypatch.setattr(data, "PROGRESS_EVERY_S", 0.0)  # tell after every game
    monkeypatch.setattr(data, "PROGRESS_MIN", 2)
    roots = (str(logs),)
    _fresh()
    calls: list[tuple[list[str], int, int]] = []
    told = data.game_index(roots, progress=lambda rows, done, total: calls.append(([r["game_id"] for r in rows], done, total)))
    n = len(list(logs.iterdir()))
    assert calls[0] == ([], 0, n)  # before any game is read: the page shows progress at once
    assert [c[1] for c in calls] == list(range(n + 1)) and all(c[2] == n for c in calls)
    assert all(len(ids) == done for ids, done, _ in calls)  # the rows read so far, each game once
    _fresh()
    quiet = data.game_index(roots)
    assert told.equals(quiet)  # the index itself does not depend on being told
    _fresh()
    data.game_index(roots)  # rows now on disk (app/disk_memo.py): a fresh process reads none, tells nothing
    calls.clear()
    data._INDEX_MEMO.clear()
    data._ROW_MEMO.clear()
    data._STORED_ROOTS.clear()
    data.game_index(roots, progress=lambda *a: calls.append(a))
    assert calls == []


def test_small_corpora_are_indexed_without_progress(logs):
    from app import data

    _fresh()
    calls = []
    data.game_index((str(logs),), progress=lambda *a: calls.append(a))
    assert calls == []  # fewer than PROGRESS_MIN new games: no flash of a progress bar


def test_progress_draws_the_tiles_of_the_games_read_so_far(logs):
    from streamlit.testing.v1 import AppTest

    def script() -> None:
        import streamlit as st

        from app import data
        from app.index_progress import reporter

        rows = data.game_index((st.session_state["root"],)).to_dict("records")
        reporter(st.empty())(rows[:3], 3, 10)

    at = AppTest.from_function(script, default_timeout=60)
    at.session_state["root"] = str(logs)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Games found"] == "3" and "Mean rounds (index)" in tiles
    assert any("3 of 10" in c.value for c in at.caption)


def test_picker_labels_are_each_rows_format(logs):
    """The game picker's labels (built from plain records, not a Series per row) are _fmt_game of each index row."""
    from app import data, sidebar

    _fresh()
    full = data.game_index((str(logs), str(DEMO)))
    labels = sidebar._labels(full)
    seen: set[str] = set()
    for _, row in full.iterrows():
        lab = sidebar._fmt_game(row)
        lab = f"{lab} · {row['game_id']}" if lab in seen else lab
        seen.add(lab)
        assert labels[row["game_id"]] == lab
