"""URL bugs of issue 16: each link reproduces what was seen (Calibration's per-agent scope,
Second-Order's τ, Replay's tabs, unknown pages, the timeline after switching pages)."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from .app_support import DEMO, assert_clean, errors, new_app  # noqa: E402


@pytest.fixture(autouse=True)
def demo(monkeypatch, tmp_path):
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(DEMO))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    return DEMO


def qp(at, key):
    v = at.query_params.get(key)
    return v[0] if isinstance(v, list) else v


@pytest.mark.slow
def test_calibration_agent_link_names_the_agents_game():
    at = new_app(page="calibration", mode="agent").run()
    assert_clean(at)
    sb = at.selectbox(key="cal_agent")
    sidebar_game = at.selectbox(key="sb_game").value
    # an agent of another game than the sidebar's (the bug: the URL kept the sidebar's game)
    from app.widgets import short_id

    other = next(i for i, lab in enumerate(sb.options) if not lab.endswith(short_id(sidebar_game)))
    label = sb.options[other]
    sb.set_value(other).run()
    assert_clean(at)
    agent, game = qp(at, "agent"), qp(at, "game")
    from app.widgets import short_id

    assert label == f"{agent} · {short_id(game)}" and game != sidebar_game, (label, agent, game)
    again = new_app(page="calibration", mode="agent", game=game, agent=agent).run()
    assert_clean(again)
    sb2 = again.selectbox(key="cal_agent")
    assert sb2.options[sb2.value] == label and not errors(again)


def test_second_order_tau_and_side_come_from_the_url():
    """τ and the predictor side are bound to ?tau= and ?side= (the browser writes them on a change:
    tests/test_browser_app.py checks that direction); a fresh session opens the same view."""
    at = new_app(page="second_order", tau="65", side="Mafia").run()
    assert_clean(at)
    assert at.slider(key="tau").value == 65 and at.radio(key="side").value == "Mafia"
    assert at.get("download_button"), "the page drew its tables at τ = 65"


def test_a_launched_game_not_indexed_yet_stays_picked(tmp_path):
    """After a launch whose first game has not written its setup yet, the page waits for that game
    (it used to fall back to another game, so the URL and the page named different games)."""
    import subprocess

    from app import launcher
    from app.data import clear_index

    from .test_replay_forks import play_bot

    runs = tmp_path / "runs"
    proc = subprocess.Popen(["sleep", "60"])  # stands for the batch process still starting
    item = launcher.Launch(cmd=["sleep", "60"], proc=proc, log_file=str(tmp_path / "log.txt"), game_id="pending-0000",
                           logs=str(runs), games=3, prefix="pending")
    launcher.registry().add("pending-0000", item)
    try:
        at = new_app()
        at.session_state["ms_game"] = "pending-0000"
        at.run()
        assert_clean(at)
        assert any("pending-0000 is starting" in str(i.value) for i in at.info), [i.value for i in at.info]
        assert at.session_state["ms_game"] == "pending-0000" and at.query_params.get("game") in (None, [])
        play_bot(runs, gid="pending-0000", seed=2)
        clear_index()
        at.run()
        assert_clean(at)
        assert at.selectbox(key="sb_game").value == "pending-0000" and qp(at, "game") == "pending-0000"
    finally:
        item.stop()


@pytest.mark.parametrize("page, params, check", [
    ("impersonate", {"game": "demo-classic-01", "step": "12", "agent": "Alex", "thr": "8"}, lambda at: at.slider(key="thr").value == 8),
    ("live", {"game": "demo-classic-01", "step": "12", "thr": "3"}, lambda at: at.slider(key="thr").value == 3),
    ("episodes", {"gap": "4", "only": "true"}, lambda at: at.slider(key="gap").value == 4 and at.toggle(key="only").value),
])
def test_view_controls_come_from_the_url(page, params, check):
    at = new_app(page=page, **params).run()
    assert_clean(at)
    assert check(at)


@pytest.mark.parametrize("url, want", [("9", 9), ("11", 6), ("x", 6), (None, 6)])
def test_bound_int_reads_a_valid_url_value_before_the_widget_exists(url, want):
    """pages/impersonate.py draws its graph with ?thr= before the slider that is bound to it."""
    from streamlit.testing.v1 import AppTest

    from .app_support import ROOT

    at = AppTest.from_string(f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from app.state import bound_int
st.text(str(bound_int("thr", 0, 10, 6)))
""")
    if url is not None:
        at.query_params["thr"] = url
    at.run()
    assert_clean(at)
    assert at.text[0].value == str(want)
