"""Every page of the Streamlit app under AppTest, on our demo games and on the original-format corpus."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from .app_support import CORPUS, assert_clean, demo_logs, errors, new_app, texts, timeline  # noqa: E402

PAGES = ["live", "impersonate", "calibration", "second_order", "episodes", "dashboard", "arena", "studies", "replay", "search"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return demo_logs(tmp_path_factory)


@pytest.fixture(params=["demo", "shared"])
def corpus(request, demo, monkeypatch, tmp_path):
    root = demo if request.param == "demo" else CORPUS
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(root))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    return root


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.slow
def test_page_renders(corpus, page):
    at = new_app(page=page).run()
    assert_clean(at)
    assert not errors(at), errors(at)


@pytest.mark.slow
def test_live_game_inspector(corpus):
    at = new_app().run()
    assert_clean(at)
    body = texts(at)
    assert "Ground truth" in body and "Transcript" in body
    slider = timeline(at)
    last = int(slider.max)
    assert slider.value == last  # a finished game opens at its last step
    at.button(key="tl_prev").click().run()
    assert timeline(at).value == last - 1
    qp = at.query_params["step"]
    assert (qp[0] if isinstance(qp, list) else qp) == str(last - 1)
    timeline(at).set_value(3).run()
    assert_clean(at)
    qp = at.query_params["step"]
    assert (qp[0] if isinstance(qp, list) else qp) == "3"
    assert "Each agent's view" in texts(at)


@pytest.mark.slow
def test_impersonate_panels(corpus):
    at = new_app(page="impersonate").run()
    assert_clean(at)
    body = texts(at)
    assert "How I think they see me" in body and "could see" in body
    names = [o.split(" (")[0] for o in at.selectbox(key="w_agent").options]
    at.selectbox(key="w_agent").set_value(names[-1]).run()
    assert_clean(at)
    qp = at.query_params["agent"]
    assert len(names) >= 5 and (qp[0] if isinstance(qp, list) else qp) == names[-1]


@pytest.mark.slow
def test_impersonate_match_score(corpus, tmp_path):
    """At a step where analytics scores the agent, the ego panels show 'match N% (m/t)' with those numbers."""
    import re

    from mafiascope.analytics import modes, viewer
    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.logs.io import list_game_dirs

    game_dir = list_game_dirs(corpus)[0]
    c = load_corpus(game_dir, cache_dir=tmp_path / "cache", probed_only=False)
    res = viewer.step_metrics(c, c.game_ids[0], modes.DEFAULT)
    label, agent, m = next((s["label"], a, v) for s in res["per_step"] for a, v in s["match"].items()
                           if v["total"] and v["mismatched"])
    at = new_app(page="impersonate", game=c.game_ids[0], step=label, agent=agent).run()
    assert_clean(at)
    assert not errors(at), errors(at)
    body = texts(at)
    shown = re.search(r"match (\d+)% \((\d+)/(\d+)\)", body)
    assert shown, body[-2000:]
    assert (int(shown[2]), int(shown[3])) == (m["matched"], m["total"])
    assert int(shown[1]) == round(100 * m["matched"] / m["total"])
    assert "pending" not in body


@pytest.mark.slow
def test_calibration_scopes(corpus):
    at = new_app(page="calibration").run()
    assert_clean(at)
    labels = [m.label for m in at.metric]
    assert "ECE" in labels and "Brier" in labels
    for scope in ("model", "game", "agent"):
        at = new_app(page="calibration", mode=scope).run()
        assert_clean(at)
        assert not errors(at), (scope, errors(at))


@pytest.mark.slow
def test_second_order_threshold(corpus):
    at = new_app(page="second_order").run()
    assert_clean(at)
    at.slider(key="tau").set_value(70).run()
    assert_clean(at)
    assert "Over-prediction ratio" in [m.label for m in at.metric]


@pytest.mark.slow
def test_dashboard_tiles(corpus):
    at = new_app(page="dashboard").run()
    assert_clean(at)
    labels = [m.label for m in at.metric]
    for tile in ("Games", "Mafia win rate", "Mean rounds", "Probe parse rate", "Branches"):
        assert tile in labels


@pytest.mark.slow
def test_search_and_filters(corpus):
    at = new_app().run()
    at.text_input(key="sb_search").input("no-such-game-xyz").run()
    assert_clean(at)
    assert "0 of" in texts(at)


@pytest.mark.slow
def test_dashboard_f4_marks_rates_on_few_votes(demo, monkeypatch, tmp_path):
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(demo))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(page="dashboard", tab="F3 · F4").run()
    assert_clean(at)
    (t4,) = [df.value for df in at.dataframe if "voters" in df.value.columns]
    few = t4["n"].between(1, 19)
    assert few.any() and (~few & (t4["n"] > 0)).any()
    assert t4.loc[few, "rate"].str.endswith(" †").all() and not t4.loc[~few & (t4["n"] > 0), "rate"].str.endswith("†").any()
    assert "† fragile: fewer than 20 counted votes" in texts(at)


@pytest.mark.slow
def test_dashboard_compare_view(demo, monkeypatch, tmp_path):
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(demo))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(page="dashboard", tab="Compare models").run()  # only the open tab is drawn
    assert_clean(at)
    a, b = at.selectbox(key="db_cmp_a"), at.selectbox(key="db_cmp_b")
    assert a.value != b.value and len(a.options) >= 3
    b.set_value(b.options[-1]).run()
    assert_clean(at)
    tables = [df.value for df in at.dataframe if "A − B [95% CI]" in df.value.columns]
    # every statistic the registry shows on the Dashboard, the proof metric too (added in its own three files)
    assert tables and {"F1 committed accuracy", "F2 ECE", "side-adjusted score", "town votes on Mafia"} <= set(tables[0]["metric"])
    holm = [c for c in tables[0].columns if c.startswith("Holm p (")]
    assert holm and holm[0].endswith(" metrics)") and "0.000" not in set(tables[0]["p"])  # family beside it; never 0
    assert "Holm p: adjusted over the " in texts(at)
    # which way is better per metric, fragile figures marked, and how the games were resampled
    rows = tables[0].set_index("metric")
    assert rows.loc["F2 ECE", "better"] == "↓ lower" and rows.loc["F1 committed accuracy", "better"] == "↑ higher"
    assert any(str(x).endswith(" †") for x in rows[a.value]) and "† fragile" in texts(at)
    assert "resampled" in texts(at)
    assert {"⬇ SVG", "⬇ PNG"} <= {x.label for x in at.get("download_button")}
