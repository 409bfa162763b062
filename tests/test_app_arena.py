"""The Arena page: roster, estimate, leaderboards of a finished run, launch of a background run."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from mafiascope.arena.ledger import Ledger  # noqa: E402
from mafiascope.arena.roster import load_roster  # noqa: E402
from mafiascope.arena.run import run_arena  # noqa: E402

from app import arena_jobs  # noqa: E402

from .app_support import plain  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def runs(tmp_path, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(tmp_path / "runs"))
    run_arena(load_roster(), "imbalanced,open", 2, tmp_path / "runs" / "arena" / "done", quiet=True)
    return tmp_path / "runs"


def app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=90)
    at.query_params["page"] = "arena"
    return at


@pytest.mark.slow
def test_arena_page_shows_estimate_and_leaderboards(runs):
    at = app().run()
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert "Calls (est.)" in labels and "Games" in labels
    text = " ".join(i.value for i in at.info)
    assert "What the noise is" in text
    assert len(at.dataframe) >= 4  # leaderboard tabs, pairs, rule measures, models
    assert any("done" in str(o) for o in at.selectbox(key="ms_arena_pick").options)


@pytest.mark.slow
def test_the_run_pick_is_in_the_url_and_a_link_restores_it(runs):
    run_arena(load_roster(), "imbalanced", 1, runs / "arena" / "newer", quiet=True)
    at = app()
    at.query_params["tab"] = "Leaderboards"
    at.run()
    assert not at.exception
    pick = at.selectbox(key="ms_arena_pick")
    assert pick.value == "arena/newer" and at.query_params["run"] in ("arena/newer", ["arena/newer"])  # the default is written too
    pick.set_value("arena/done").run()
    assert at.query_params["run"] in ("arena/done", ["arena/done"])
    again = app()
    again.query_params.update({"tab": "Leaderboards", "run": "arena/done"})
    again.run()
    assert not again.exception and again.selectbox(key="ms_arena_pick").value == "arena/done"
    bad = app()
    bad.query_params.update({"tab": "Leaderboards", "run": "/etc"})
    bad.run()
    assert bad.selectbox(key="ms_arena_pick").value == "arena/newer"
    assert any("run='/etc'" in plain(str(e.value)) for e in bad.error), [e.value for e in bad.error]


def page() -> AppTest:
    """The page without st.navigation: AppTest drops button clicks in pages run through
    st.navigation (Streamlit 1.5x), so the interaction test runs the page file in a frame."""
    script = f"""
import sys, runpy
sys.path.insert(0, {str(ROOT)!r})
from app.frame import framed
with framed():  # the harness is the frame: the page runs without the entrypoint
    runpy.run_path({str(ROOT / "pages" / "arena.py")!r}, run_name="__main__")
"""
    return AppTest.from_string(script, default_timeout=90)


@pytest.mark.slow
def test_arena_page_launches_a_background_run(runs):
    at = page().run()
    at.multiselect(key="ms_arena_rules").set_value(["imbalanced"]).run()
    at.number_input(key="ms_arena_games").set_value(1).run()
    at.text_input(key="ms_arena_name").set_value("fromapp").run()
    at.button(key="ms_arena_launch").click().run()
    assert not at.exception
    assert any("Started" in s.value for s in at.success)
    assert not any("-m mafiascope" in s.value for s in at.success)
    # the run's progress line says it is starting until its schedule exists, never "0/0 games"
    texts = [p.proto.text or "" for p in at.get("progress")]
    assert texts and not any("0/0" in t for t in texts), texts
    run_dir = runs / "arena" / "fromapp"
    deadline = time.time() + 60
    while time.time() < deadline and Ledger(run_dir).status()["finished"] < 1:
        time.sleep(0.5)
    assert Ledger(run_dir).status()["finished"] == 1
    deadline = time.time() + 30
    while time.time() < deadline and any(j.running for _, j in arena_jobs.jobs().items()):
        time.sleep(0.2)
    at.run()
    assert not at.exception
    assert any("fromapp: 1/1 games finished · done" in (p.proto.text or "") for p in at.get("progress"))


@pytest.mark.slow
def test_extra_models_bad_yaml_is_one_clear_line(runs):
    at = app().run()
    at.text_area(key="ms_arena_extra").set_value("gpt: {type: openai, model: [\n").run()
    assert not at.exception
    errs = [plain(e.value) for e in at.error]  # shown escaped (app/text.py)
    assert any(e.startswith("Extra models: not valid YAML at line") for e in errs), errs
    assert not any("<unicode string>" in e for e in errs), errs


@pytest.mark.slow
def test_sport_only_run_shows_no_internals(tmp_path, monkeypatch):
    """After a sport-only run the models table had a "town imbalanced" column of "0/0 (avg None)" and Don/Sheriff
    cells of "0/0": a column per rule set played, "—" where a model never held the side or role, no None anywhere."""
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(tmp_path / "runs"))
    run_arena(load_roster(), "sport", 2, tmp_path / "runs" / "arena" / "sport", quiet=True)
    at = app().run()
    assert not at.exception
    tables = [d.value for d in at.dataframe]
    models = next(t for t in tables if "model" in t.columns and any(str(c).startswith("Mafia: ") for c in t.columns))
    assert list(models.columns) == ["model", "Mafia: Sport", "Don: won", "Don: hits", "Sheriff: won", "Sheriff: hits"], list(models.columns)
    for t in tables:
        cells = [str(c) for c in t.to_numpy().ravel()]
        assert not [c for c in cells if c in ("None", "nan", "<NA>") or "None" in c or "0/0" in c], (list(t.columns), cells[:20])


@pytest.mark.slow
def test_a_run_too_small_to_rank_says_so_and_no_table_shows_internals(tmp_path, monkeypatch):
    """One game per rule set: every seat scores its side's average, so every model tied at "1st, 0 ± 0" on an axis
    labelled 0.000000; the page says there are not enough games instead. No table shows a raw list, None or a
    snake_case column name (issue 35 item 5)."""
    import re

    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(tmp_path / "runs"))
    run_arena(load_roster(), "sport,open,imbalanced", 1, tmp_path / "runs" / "arena" / "one", quiet=True)
    at = app().run()
    assert not at.exception
    assert any("Not enough games to rank" in w.value for w in at.warning), [w.value for w in at.warning]
    assert not [d for d in at.dataframe if "rank" in d.value.columns]  # no leaderboard of ties
    for d in at.dataframe:
        cols, cells = [str(c) for c in d.value.columns], [str(c) for c in d.value.to_numpy().ravel()]
        assert not [c for c in cols if "_" in c], cols
        assert not [c for c in cells if re.fullmatch(r"\[.*\]", c) or c in ("None", "nan")], (cols, cells[:30])
