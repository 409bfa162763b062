"""The Arena page: fixed seating (a backend per seat) and the bundled demo run on a fresh install."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from app.arena_view import run_label  # noqa: E402
from mafiascope.arena.ledger import Ledger  # noqa: E402

from .app_support import assert_clean, new_app, plain  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO_RUN = ROOT / "data" / "arena" / "demo-bots"


@pytest.fixture()
def fresh(tmp_path, monkeypatch):
    """A fresh install: no user runs, no extra log roots."""
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.delenv("MAFIASCOPE_LOGS", raising=False)
    return tmp_path / "runs"


def page() -> AppTest:
    """The page file in a frame (AppTest drops button clicks in pages run through st.navigation)."""
    script = f"""
import sys, runpy
sys.path.insert(0, {str(ROOT)!r})
from app.frame import framed
with framed():  # the harness is the frame: the page runs without the entrypoint
    runpy.run_path({str(ROOT / "pages" / "arena.py")!r}, run_name="__main__")
"""
    return AppTest.from_string(script, default_timeout=90)


@pytest.mark.slow
def test_fresh_install_opens_the_bundled_run_leaderboards(fresh):
    at = new_app(page="arena").run()
    assert_clean(at)
    pick = at.selectbox(key="ms_arena_pick")
    assert pick.value == "data/arena/demo-bots" == run_label(DEMO_RUN)  # named by the checkout, not the server's path
    assert not any(str(ROOT) in str(o) for o in pick.options)
    assert "What the noise is" in " ".join(i.value for i in at.info)
    assert len(at.dataframe) >= 4
    models = set(at.dataframe[0].value["model"])
    assert models == {"bot-analyst", "bot-aggressive", "bot-balanced", "bot-cautious", "bot-gullible"}
    assert any("30/30 games finished" in (p.proto.text or "") for p in at.get("progress"))
    games = at.selectbox(key="ms_arena_game")
    assert len(games.options) == 30 and "demo-bots-" in games.value
    # the sidebar keeps the bundled arena games out of the analysis corpus by default
    corpora = at.sidebar.multiselect(key="sb_corpora")
    assert "arena demo-bots" in corpora.options  # options as shown (app/paths.corpus_name); the value holds the labels
    assert "data/demo" in corpora.value and "data/arena/demo-bots" not in corpora.value
    assert not str(at.sidebar.selectbox(key="sb_game").value).startswith("demo-bots-")


@pytest.mark.slow
def test_bundled_arena_game_opens_in_live_game(fresh):
    at = new_app(game="demo-bots-sport-0000").run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="sb_game").value == "demo-bots-sport-0000"
    assert not at.error


@pytest.mark.parametrize("page", ["dashboard", "second_order"])
@pytest.mark.slow
def test_analysis_pages_take_the_bundled_arena_corpus(fresh, page):
    """Opting in to the arena corpus alone (ten-seat games, no probes) leaves the analysis pages informative."""
    at = new_app(page=page).run()
    at.sidebar.multiselect(key="sb_corpora").set_value(["data/arena/demo-bots"]).run()
    assert_clean(at)
    assert not at.error and at.info


@pytest.mark.slow
def test_fixed_seating_mode_estimates_and_launches(fresh):
    at = page().run()
    at.radio(key="ms_arena_mode").set_value("fixed").run()
    assert_clean(at)
    seats = [at.selectbox(key=f"ms_arena_seat_{i}") for i in range(10)]
    from mafiascope.arena.roster import bot_roster

    presets = bot_roster().labels
    assert [s.value for s in seats] == [presets[i % len(presets)] for i in range(10)]  # every preset seated by default
    # keyless: a literal api_key is refused on the page (it would be written into the roster file; docs/security.md)
    at.text_area(key="ms_arena_extra").set_value("gpt: {type: openai, model: gpt-4o-mini}\n").run()
    for i in range(10):
        at.selectbox(key=f"ms_arena_seat_{i}").set_value("gpt" if i == 0 else "bot-balanced" if i < 6 else "bot-cautious")
    at.run()
    assert_clean(at)
    assert any("Every game seats these ten (gpt ×1, bot-balanced ×5, bot-cautious ×4)" in plain(c.value) for c in at.caption)
    metrics = {m.label: m.value for m in at.metric}
    calls = int(metrics["Calls (est.)"].replace(",", ""))
    assert int(metrics["Calls to paid backends"].replace(",", "")) == calls // 10  # one paid seat in ten
    # launch an offline fixed-seating run
    at.selectbox(key="ms_arena_seat_0").set_value("bot-gullible")
    at.multiselect(key="ms_arena_rules").set_value(["imbalanced"])
    at.number_input(key="ms_arena_games").set_value(2)
    at.text_input(key="ms_arena_name").set_value("seated").run()
    at.button(key="ms_arena_launch").click().run()
    assert_clean(at)
    assert any("Started" in s.value for s in at.success)
    run_dir = fresh / "arena" / "seated"
    roster = yaml.safe_load((run_dir / "roster.yaml").read_text())
    assert roster["seating"] == ["bot-gullible"] + ["bot-balanced"] * 5 + ["bot-cautious"] * 4
    assert set(roster["models"]) == {"bot-gullible", "bot-balanced", "bot-cautious"}  # only the seated models
    deadline = time.time() + 60
    while time.time() < deadline and Ledger(run_dir).status()["finished"] < 2:
        time.sleep(0.5)
    assert Ledger(run_dir).status()["finished"] == 2 and Ledger(run_dir).plan()["mode"] == "fixed"
    import json

    for g in run_dir.glob("*/game.jsonl"):
        setup = json.loads(g.read_text().splitlines()[0])
        assert Counter(p["backend"] for p in setup["players"]) == {"bot-gullible": 1, "bot-balanced": 5, "bot-cautious": 4}
    at.run()
    assert_clean(at)
    assert at.selectbox(key="ms_arena_pick").value == run_label(run_dir)  # the run just launched comes first
    assert not any(str(run_dir) in plain(m.value) for m in at.success)  # the launch line names the run, not its path
    assert any(plain(c.value).startswith("Fixed seating: 1. bot-gullible") for c in at.caption)


@pytest.mark.slow
def test_leaderboard_charts_size_rows_by_step(monkeypatch, tmp_path):
    """A fixed pixel height is shared with the title and axis in Streamlit, which squashed the
    leaderboard's rows into one line; each row gets its own step instead."""
    import json

    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=90)
    at.query_params["page"] = "arena"
    at.run()
    assert not at.exception

    def charts(node, out):
        if getattr(node, "type", "") == "vega_lite_chart":
            out.append(json.loads(node.proto.spec))
        for c in getattr(node, "children", {}).values():
            charts(c, out)
        return out

    specs = [s for s in charts(at._tree, []) if "SE" in str(s.get("title", ""))]
    assert specs, "no leaderboard chart on the default (bundled) run"
    assert all(s.get("height") == {"step": 28} for s in specs), [s.get("height") for s in specs]
