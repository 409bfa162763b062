"""The sidebar's three collapsed expanders (Filters, Log directories, Analysis settings) draw their widgets only
while open (issue 17 item 4: fewer elements in every whole-page React commit, no radio or checkbox chunk on a
first view). Opened, they show the same widgets; closed again, every value they set keeps applying."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from .app_support import assert_clean, dashboard_logs, new_app  # noqa: E402

FILTER_KEYS = ["sb_lang", "sb_model", "sb_winner", "sb_branch", "sb_invalid"]
SETTING_KEYS = ["sb_metric_mode", "sb_renderer", "sb_boot"]


@pytest.fixture()
def logs(tmp_path, monkeypatch):
    return dashboard_logs(tmp_path, monkeypatch)


def _keys(at) -> set[str]:
    """The keys of the widgets drawn in the sidebar's expanders (and the rest of the page)."""
    return {w.key for kind in ("multiselect", "radio", "checkbox", "text_area") for w in at.get(kind) if w.key}


def _count(at) -> str:
    return next(c.value for c in at.sidebar.caption if " of " in c.value)


def _open(at, key: str, is_open: bool = True):
    at.session_state[key] = is_open  # what a click on the expander does (it reruns the page)
    at.run()
    return at.run()  # and any later rerun: a widget not drawn in a run loses its value at the run's end unless kept


def test_closed_by_default_with_no_widgets_and_open_shows_them(logs):
    from app.sidebar import FILTERS_OPEN, ROOTS_OPEN, SETTINGS_OPEN

    at = new_app(page="dashboard").run()
    assert_clean(at)
    labels = [e.label for e in at.sidebar.expander]
    assert {"Filters", "Log directories", "Analysis settings"} <= set(labels)
    assert not _keys(at) & {*FILTER_KEYS, *SETTING_KEYS, "sb_roots"}
    assert not at.sidebar.radio and not at.sidebar.checkbox  # no radio or checkbox chunk on the first view
    assert any("bootstrap B = 1000" in c.value for c in at.caption)  # the settings' defaults apply, closed

    _open(at, FILTERS_OPEN)
    assert_clean(at)
    assert set(FILTER_KEYS) <= _keys(at)
    assert at.radio(key="sb_branch").value == "all games" and at.checkbox(key="sb_invalid").value is False
    assert at.multiselect(key="sb_winner").options and at.multiselect(key="sb_winner").value == []
    _open(at, ROOTS_OPEN)
    roots = at.multiselect(key="sb_roots")
    assert roots.value == roots.options and roots.value  # every configured root, as before
    _open(at, SETTINGS_OPEN)
    assert_clean(at)
    assert at.radio(key="sb_metric_mode").value == "default" and at.radio(key="sb_boot").value == 1000
    assert at.radio(key="sb_renderer").value == "Vega (default)"
    for key in (FILTERS_OPEN, ROOTS_OPEN, SETTINGS_OPEN):
        at.session_state[key] = False
    at.run()
    assert not _keys(at) & {*FILTER_KEYS, *SETTING_KEYS, "sb_roots"}


def test_values_are_kept_and_applied_while_closed(logs):
    from app.sidebar import FILTERS_OPEN, ROOTS_OPEN, SETTINGS_OPEN

    at = new_app(page="dashboard").run()
    everything = _count(at)
    _open(at, FILTERS_OPEN)
    winner = at.multiselect(key="sb_winner")
    winner.select(winner.options[0]).run()
    filtered = _count(at)
    assert filtered != everything
    _open(at, FILTERS_OPEN, False)
    assert_clean(at)
    assert _count(at) == filtered and "sb_winner" not in _keys(at)  # closed: the selection stays filtered
    at.switch_page("pages/search.py").run()  # another page, the expander still closed: still filtered
    assert_clean(at)
    assert _count(at) == filtered
    at.switch_page("pages/dashboard.py").run()
    _open(at, FILTERS_OPEN)
    assert at.multiselect(key="sb_winner").value == [winner.options[0]]  # reopened: the same choice

    _open(at, SETTINGS_OPEN)
    at.radio(key="sb_boot").set_value(0).run()
    at.radio(key="sb_metric_mode").set_value("compat").run()
    _open(at, SETTINGS_OPEN, False)
    at.switch_page("pages/search.py").run()
    at.switch_page("pages/dashboard.py").run()  # back on the Dashboard through another page, the settings closed
    assert_clean(at)
    assert any("bootstrap B = 0" in c.value for c in at.caption)
    assert at.session_state["sb_metric_mode"] == "compat" and at.session_state["sb_boot"] == 0  # what bridge reads
    _open(at, SETTINGS_OPEN)
    assert at.radio(key="sb_boot").value == 0 and at.radio(key="sb_metric_mode").value == "compat"
    _open(at, SETTINGS_OPEN, False)
    at.session_state["sb_boot"] = 200  # set by code while closed: applies, and the opened radio shows it
    _open(at, SETTINGS_OPEN)
    assert_clean(at)
    assert at.radio(key="sb_boot").value == 200 and any("bootstrap B = 200" in c.value for c in at.caption)

    _open(at, ROOTS_OPEN)
    roots = at.multiselect(key="sb_roots")
    keep = [r for r in roots.options if r != roots.options[0]]
    for r in roots.value:
        if r not in keep:
            roots.unselect(r)
    at.run()
    corpora = at.multiselect(key="sb_corpora").options
    _open(at, ROOTS_OPEN, False)
    at.switch_page("pages/search.py").run()
    assert at.multiselect(key="sb_corpora").options == corpora  # the roots picked stay the roots read
    assert at.session_state["sb_roots"] == keep


def test_url_game_applies_with_every_expander_closed(logs):
    first = new_app(page="live").run().selectbox(key="sb_game").value
    other = next(d.name for d in sorted(logs.iterdir()) if (d / "game.jsonl").is_file() and d.name != first)
    at2 = new_app(page="live", game=other).run()
    assert_clean(at2)
    assert at2.selectbox(key="sb_game").value == other
    assert not _keys(at2) & {*FILTER_KEYS, *SETTING_KEYS, "sb_roots"}


@pytest.mark.slow
def test_the_probe_layer_picker_lists_the_games_layers_and_the_analyses_read_the_picked_one(logs, capsys):
    """Games holding a probe layer (`probes ask`) get a Probe layer choice under Filters; picking it loads the
    corpus with that layer (the answers the Dashboard's figures rest on)."""
    from app import bridge
    from app.sidebar import FILTERS_OPEN
    from mafiascope.cli import main

    at = new_app(page="dashboard").run()
    _open(at, FILTERS_OPEN)
    assert "sb_probe_layer" not in {w.key for w in at.get("selectbox")}  # no layer yet: no picker
    assert main(["probes", "ask", str(logs), "--battery", "suspicion", "--layer", "late", "-q", "--json"]) == 0
    capsys.readouterr()
    from app.data import layers_in

    layers_in.clear()
    at.run()
    pick = at.selectbox(key="sb_probe_layer")
    assert pick.options == ["game", "late"] and pick.value == "game"
    pick.set_value("late").run()
    assert_clean(at)
    assert at.session_state["sb_probe_layer"] == "late"
    dirs = tuple(str(d) for d in sorted(logs.iterdir()) if (d / "game.jsonl").is_file())
    c = bridge._corpus(dirs, "k-late", False, True, None, False, "late")
    assert c.probe_layer == "late" and set(c.cols("probes", ["probe_id"])["probe_id"].astype(str)) == {"suspicion_ranking"}
