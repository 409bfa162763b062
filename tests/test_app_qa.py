"""Regression tests of problems found by driving the app like a researcher (QA pass).

Each test fails on the code before its fix: suspicion-only probe batteries (the ten-seat
sport/open-table/imbalanced configs) reported "No data yet" at the end of a finished game,
the crowd-recall strip drew every Mafioso in one colour, single-game calibration printed a
zero-width bootstrap "CI", per-agent labels cut readable game ids to "demo-cla", and an
episode page with zero candidates did not say why.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("streamlit")

from .app_support import DEMO, assert_clean, errors, new_app, panel_heads, texts  # noqa: E402

SPORT = "demo-sport-01"
CLASSIC = "demo-classic-01"


@pytest.fixture
def demo(monkeypatch, tmp_path):
    if not (DEMO / SPORT).is_dir() or not (DEMO / CLASSIC).is_dir():
        pytest.skip("data/demo games are not available")
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(DEMO))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    return DEMO


def _only(at, gid: str):
    """Narrow the sidebar selection (the corpus of the analysis pages) to one game."""
    at.run()
    at.text_input(key="sb_search").input(gid).run()
    return at


@pytest.mark.slow
def test_suspicion_only_battery_is_explained_not_yet(demo):
    at = new_app(page="live", game=SPORT).run()
    assert_clean(at)
    body = texts(at)
    assert "No data yet" not in body
    assert "probe battery has no role_assessment probe" in body and "suspicion_ranking" in body
    assert "need role_assessment answers" in body  # why the metrics strip is empty
    # the agents' suspicion rankings are drawn (one belief graph per seat, as the panels of one chart)
    charts = {c.key: c for c in at.get("vega_lite_chart")}
    assert f"gt_{SPORT}" in charts and len(panel_heads(charts[f"ag_{SPORT}"])) == 10


@pytest.mark.slow
def test_impersonate_suspicion_only_battery(demo):
    at = new_app(page="impersonate", game=SPORT, agent="Logan").run()
    assert_clean(at)
    body = texts(at)
    for stale in ("No role assessment yet", "No assessment yet", "No social_map answer yet", "Nobody has assessed me yet"):
        assert stale not in body
    assert "probe battery has no social_map probe" in body
    assert "Suspicion edges only" in body
    assert "match: needs the social_map and role_assessment probes" in body


@pytest.mark.slow
def test_impersonate_before_first_answer_says_so(demo):
    at = new_app(page="impersonate", game=CLASSIC, agent="Indigo", step="0").run()
    assert_clean(at)
    assert not errors(at)
    body = texts(at)
    assert "probe battery has no" not in body  # the standard battery has every probe


@pytest.mark.slow
def test_crowd_strip_gives_each_mafioso_its_own_colour(demo):
    from app import charts
    from app.data import load_raw
    from app.gamemodel import build_model

    gm = build_model(load_raw(str(demo / CLASSIC)))
    at = new_app(page="live", game=CLASSIC).run()  # a runtime for the cached analytics call
    assert_clean(at)
    import pandas as pd

    m = {"crowd_recall": pd.DataFrame({"label": [gm.steps[1].label], "value": [0.5]}),
         "deception": pd.DataFrame({"label": [gm.steps[1].label] * 2, "player": gm.mafia()[:2], "value": [1.0, 0.5]}),
         "first_order": pd.DataFrame(columns=["label", "player", "value"]),
         "second_order": pd.DataFrame(columns=["label", "player", "value"])}
    _, colors, dashed = charts._strip_frames(m, gm)["crowd"]
    hid = [s for s in colors if s.endswith(" hid")]
    assert len(hid) == 2 and len({colors[s] for s in hid}) == 2
    assert colors["recall"] not in {colors[s] for s in hid}
    assert set(hid) == dashed


@pytest.mark.slow
def test_single_game_calibration_has_no_zero_width_ci(demo):
    at = new_app(page="calibration", game=CLASSIC, mode="game").run()
    assert_clean(at)
    caps = [c.value for c in at.caption]
    assert not any(c.startswith("95% CI [") for c in caps), caps
    assert any("this scope has only one" in c for c in caps)


def test_short_ids_keep_readable_game_ids_distinct():
    from app.widgets import short_id

    assert short_id("demo-classic-01") == "demo-classic-01" != short_id("demo-classic-02")
    assert short_id("0da78714-88e0-4445-b161-f2eaf029184c") == "0da78714"


@pytest.mark.slow
def test_per_agent_calibration_labels_name_the_game(demo):
    at = new_app(page="calibration", mode="agent").run()
    assert_clean(at)
    sb = at.selectbox(key="cal_agent")
    labels = list(sb.options)
    assert not any(lab.endswith("· demo-cla") for lab in labels), labels[:5]


@pytest.mark.slow
def test_zero_episodes_say_why(demo):
    at = _only(new_app(page="episodes"), "demo-sport-01")
    assert_clean(at)
    body = texts(at)
    if "No collective suspicion shift" not in body:
        pytest.skip("this demo game has episode candidates")
    assert "Add games with suspicion_ranking probes" in body
    assert "no agent switched" in body or "complete" in body or "no pair" in body


@pytest.mark.slow
def test_dashboard_says_which_games_the_figures_use(demo, tmp_path, monkeypatch):
    from .app_support import play

    runs = tmp_path / "runs"
    play(runs, "qa-unprobed", 3, "--no-probes")
    at = new_app(page="dashboard").run()
    assert_clean(at)
    caps = " ".join(c.value for c in at.caption)
    # the unprobed games count where no probe answer is needed (outcomes, votes, matchups), and the caption says so
    assert "transcript-only, counted by outcomes" in caps and "probed, counted by the probe-based figures" in caps, caps


@pytest.mark.slow
def test_second_order_without_social_map_explains(demo):
    at = _only(new_app(page="second_order"), SPORT)
    assert_clean(at)
    info = " ".join(i.value for i in at.info)
    assert "No second-order pairs" in info and "social_map" in info


@pytest.mark.slow
def test_calibration_without_role_assessment_explains(demo):
    at = new_app(page="calibration", game=SPORT, mode="game").run()
    assert_clean(at)
    info = " ".join(i.value for i in at.info)
    assert "role_assessment" in info


def test_dead_seat_labels_keep_a_solid_halo():
    """Fading the halo with the label (dead seats) left dark-on-dark smudges on the dark theme."""
    import altair as alt
    import pandas as pd

    from app.graph import halo_text

    halo, ink = halo_text(alt.Chart(pd.DataFrame({"x": [0], "label": ["✝ A"], "o": [0.5]})), x="x:Q", text="label:N",
                          opacity=alt.Opacity("o:Q", scale=None))
    assert "opacity" not in halo.to_dict()["encoding"]
    assert "opacity" in ink.to_dict()["encoding"]


@pytest.mark.slow
def test_second_order_table_prints_intervals_as_text(demo):
    at = new_app(page="second_order").run()
    assert_clean(at)
    df = at.dataframe[0].value
    v = df["over-prediction ratio [95% CI]"].iloc[0]  # the figure beside its interval, as text
    assert isinstance(v, str) and re.fullmatch(r"\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]", v), v


@pytest.mark.slow
def test_ten_seat_transcript_shows_nominations_and_shots(demo):
    """Sport games: nominations (nominator and nominee), the Mafia's shots and the Don's order were dropped."""
    at = new_app(page="live", game=SPORT).run()
    assert_clean(at)
    body = texts(at)
    assert "**Alex** nominated **Quinn**" in body
    assert "Mafia shots: Dana → Riley" in body and "landed" in body
    assert "set the shot order" in body
    # a town seat sees the nominations but neither the shots (visible to nobody) nor the Mafia's order
    at = new_app(page="impersonate", game=SPORT, agent="Logan").run()
    body = texts(at)
    assert "nominated" in body and "Mafia shots" not in body and "shot order" not in body


@pytest.mark.slow
def test_replay_says_when_no_step_of_a_game_can_be_forked(monkeypatch, tmp_path):
    """Original-format games have a state.jsonl but no resumable snapshot: 'pick another step' could never work."""
    from .app_support import CORPUS

    corpus = CORPUS
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(corpus))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(page="replay", game="0da78714").run()
    assert_clean(at)
    body = texts(at)
    assert "None of this game's steps can be forked" in body
    assert "pick another step" not in body


def test_replay_names_the_nearest_forkable_steps():
    from app.replay_view import no_snapshot_hint

    class P:
        def has(self, k):
            return k in {(1, 2), (1, 5)}

    hint = no_snapshot_hint(P(), ["R1.1", "R1.2", "R1.3", "R1.4", "R1.5"], [(1, 1), (1, 2), (1, 3), (1, 4), (1, 5)], 2)
    assert "R1.2 (step 1, before)" in hint and "R1.5 (step 4, after)" in hint


@pytest.mark.slow
def test_dashboard_models_tile_counts_the_games_it_scores(tmp_path, monkeypatch):
    """The Models tile counts models seated in the analysed root games, like the Games tile."""
    import subprocess
    import sys

    import yaml

    from .app_support import ROOT, play

    logs = tmp_path / "logs"
    play(logs, "qa-probed", 4, "--no-snapshots")
    cfg = yaml.safe_load((ROOT / "configs" / "classic.yaml").read_text(encoding="utf-8"))
    cfg["backends"] = {"solo": {"type": "bot", "preset": "analyst", "model": "only-in-unprobed"}}
    cfg["seats"] = [{"backend": "solo"}] * 7
    (tmp_path / "solo.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "mafiascope", "run", "-c", str(tmp_path / "solo.yaml"), "--seed", "5", "--logs",
                    str(logs), "--game-id", "qa-unprobed", "-q", "--no-probes", "--no-snapshots"], check=True, cwd=ROOT,
                   timeout=120)
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(logs))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = _only(new_app(page="dashboard"), "qa-")
    assert_clean(at)
    tiles = {m.label: m.value for m in at.metric}
    # the unprobed game counts where no probe answer is needed (outcomes, votes, matchups): in the Games tile, whose
    # help says how many have probe answers, and its model in the Models tile
    games = [m for m in at.metric if m.label == "Games"][0]
    assert tiles["Games"] == "2" and "1 of them with probe answers" in (games.help or "")
    models = [m for m in at.metric if m.label == "Models"][0]
    assert "only-in-unprobed" in (models.help or "").replace("\\", "")  # (Markdown-escaped)
    assert int(tiles["Models"]) >= 2
