"""The Studies page: plan and estimate from the form, background launch, status, stop and resume."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from app.study_view import app_problems, build_spec  # noqa: E402
from mafiascope.play.ledger import StudyLedger  # noqa: E402
from mafiascope.study.spec import parse_study_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def runs(tmp_path, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(tmp_path / "runs"))
    return tmp_path / "runs"


def page() -> AppTest:
    """The page file in a frame (AppTest drops clicks in pages run through st.navigation)."""
    script = f"""
import sys, runpy
sys.path.insert(0, {str(ROOT)!r})
from app.frame import framed
with framed():  # the harness is the frame: the page runs without the entrypoint
    runpy.run_path({str(ROOT / "pages" / "studies.py")!r}, run_name="__main__")
"""
    return AppTest.from_string(script, default_timeout=120)


def url(at: AppTest, key: str) -> str:
    v = at.query_params[key]
    return v[0] if isinstance(v, list) else v


def test_build_spec_is_a_valid_study_and_paths_are_refused():
    spec = build_spec("s", {"bot-balanced": {"type": "bot", "preset": "balanced"}, "bot-analyst": {"type": "bot", "preset": "analyst"}},
                      ["classic", "sport"], ["en", "ru"], "suspicion", "each", 3, 1, 2.5, 2)  # fmt: skip
    parsed = parse_study_spec(spec, "form")
    assert len(parsed.arms) == 8 and parsed.budget.money == 2.5 and parsed.total_games() == 24
    assert build_spec("s", {"a": {"type": "bot"}}, ["classic"], ["en"], "none", "roster", 1, 0, 0, 1)["arms"][0]["lineup"] == {"roster": ["a"]}
    assert app_problems({"arms": [{"rules": "/etc/x.yaml", "probes": "../b.yaml"}]}) == [
        "arms.0.rules: the app takes classic, classic_sheriff, sport, open_table, imbalanced",
        "arms.0.probes: the app takes chained, default, suspicion, none"]


@pytest.mark.slow
def test_plan_launch_watch_stop_resume(runs):
    at = page().run()
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert {"Games", "Calls (est.)", "Money (est.)", "Duration (est.)"} <= set(labels)
    at.multiselect(key="ms_study_bots").set_value(["balanced", "analyst"]).run()
    at.selectbox(key="ms_study_probes").set_value("suspicion").run()
    at.number_input(key="ms_study_games").set_value(4).run()
    at.number_input(key="ms_study_parallel").set_value(1).run()
    at.text_input(key="ms_study_name").set_value("fromapp").run()
    assert next(m for m in at.metric if m.label == "Games").value == "4"
    at.button(key="ms_study_launch").click().run()
    assert not at.exception
    assert any("Started" in s.value for s in at.success)
    assert not any("-m mafiascope" in s.value for s in at.success)  # the command as a user types it
    assert url(at, "tab") == "Studies" and url(at, "study") == "fromapp"  # the page follows the new study, in the URL
    d = runs / "studies" / "fromapp"
    deadline = time.time() + 90
    while time.time() < deadline and not (d / "ledger.jsonl").is_file():
        time.sleep(0.2)
    at.run()
    assert not at.exception
    at.button(key="ms_study_stop").click().run()  # stop at once: the rest stays pending
    assert not at.exception
    counts = StudyLedger(d).counts()
    assert counts["pending"] + counts["running"] >= 1
    # the controls follow the job in the same run: Stop became Resume, and no game counts as running any more
    assert "▶ Resume" in [b.label for b in at.button] and "⏹ Stop" not in [b.label for b in at.button]
    assert next(m for m in at.metric if m.label == "Running").value == "0"
    assert any("stopped" in (p.proto.text or "") for p in at.get("progress"))
    at.run()
    at.button(key="ms_study_resume").click().run()
    assert any("Resumed" in s.value for s in at.success)
    deadline = time.time() + 120
    while time.time() < deadline and StudyLedger(d).counts()["finished"] < 4:
        time.sleep(0.5)
    assert StudyLedger(d).counts()["finished"] == 4
    from app import study_jobs

    while time.time() < deadline and study_jobs.running("fromapp") is not None:  # the runner writes its summary, then exits
        time.sleep(0.2)
    at.run()
    assert not at.exception
    assert "✓ Done" in [b.label for b in at.button]
    assert any((p.proto.text or "").startswith("4/4 games settled · done") for p in at.get("progress"))
    # a new browser with the page's URL opens the same study
    again = page()
    again.query_params.update({k: url(at, k) for k in at.query_params})
    again.run()
    assert again.selectbox(key="ms_study_pick").value == "fromapp" and "✓ Done" in [b.label for b in again.button]
    assert any("Live Game" in s.label for s in at.selectbox)
    assert "Finished" in [m.label for m in at.metric]


@pytest.mark.slow
def test_grow_a_finished_study_from_the_studies_tab(runs):
    """The Studies tab grows a finished study: more games per arm, the games played kept."""
    import yaml

    from mafiascope.study.run import run_study

    d = runs / "studies" / "pilot"
    d.mkdir(parents=True)
    data = build_spec("pilot", {"bot-balanced": {"type": "bot", "preset": "balanced"}}, ["classic"], ["en"], "none", "roster", 1, 0, 0, 1)
    data["out"] = str(d)
    (d / "spec.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    run_study(parse_study_spec(data, str(d / "spec.yaml")), quiet=True)
    first = StudyLedger(d).rows()
    at = page()
    at.query_params["tab"] = "Studies"  # the tabs are bound to the URL: only the open one is drawn
    at.run()
    at.selectbox(key="ms_study_pick").set_value("pilot").run()
    at.number_input(key="ms_study_grow_n").set_value(3).run()
    at.button(key="ms_study_grow").click().run()
    assert not at.exception and any("Growing to 3" in s.value for s in at.success)
    deadline = time.time() + 120
    while time.time() < deadline and StudyLedger(d).counts()["finished"] < 3:
        time.sleep(0.3)
    rows = StudyLedger(d).rows()
    assert StudyLedger(d).counts()["finished"] == 3 and all(rows[g]["attempts"] == 1 for g in first)
    assert yaml.safe_load((d / "spec.yaml").read_text())["games_per_arm"] == 3
    # the report's per-model figures per arm, on demand
    at.run()
    at.toggle(key="ms_study_models").set_value(True).run()
    assert not at.exception
    models = next(df.value for df in at.dataframe if "model" in df.value.columns)
    assert models["model"].tolist() == ["bot-balanced"] and models["games"].tolist() == [3] and "side-adjusted score" in models.columns
    caps = " ".join(c.value for c in at.caption)
    assert "F2 ECE ↓ lower" in caps and "† fragile" in caps  # which way is better; 3 games: every figure fragile


@pytest.mark.slow  # runs a small study
def test_a_ledger_stop_reason_is_shown_as_text(runs, tmp_path):
    """Issue 31 item 6. Seen: the Studies page rendered a ledger's stop reason as Markdown (an image beacon fired)."""
    import yaml

    from mafiascope.cli import main

    from .injection import problems

    d = runs / "studies" / "beacon"
    spec = {"name": "beacon", "seed": 0, "games_per_arm": 2, "backends": {"b": {"type": "bot"}},
            "arms": [{"name": "x", "lineup": "b", "rules": "classic", "probes": "none"}], "out": str(d)}  # fmt: skip
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    assert main(["study", "run", str(tmp_path / "s.yaml"), "--limit", "1"]) == 0  # a stop shows while games are left
    reason = "budget: ![b](http://beacon.example/x.png) <img src=http://beacon.example/y> [c](http://beacon.example)"
    StudyLedger(d).append({"event": "stop", "runner": "r", "reason": reason})
    (d / "spec.yaml").write_text(yaml.safe_dump(spec))  # as the page saves a study it launches
    at = page()
    at.query_params["tab"] = "Studies"
    at.query_params["study"] = "beacon"
    at.run()
    shown = [w.value for w in at.warning if "Last stop" in w.value]
    assert shown and not problems(shown[0]) and "beacon" in shown[0]
