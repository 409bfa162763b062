"""The Dashboard at scale: results kept on disk between server processes (app/disk_memo.py),
keyed by the games' files, and a cold analytics cache built under a progress bar."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from .app_support import assert_clean, dashboard_logs, new_app, script_says  # noqa: E402


@pytest.fixture()
def logs(tmp_path, monkeypatch):
    return dashboard_logs(tmp_path, monkeypatch)


def _fresh_process() -> None:
    """What a new server process starts without: Streamlit's caches and the app's in-memory memos."""
    import streamlit as st

    from app import bridge, data

    st.cache_data.clear()
    st.cache_resource.clear()
    data._ROW_MEMO.clear()
    data._STORED_ROOTS.clear()
    data._INDEX_MEMO.clear()
    bridge._SIG_MEMO.clear()
    data._SIG_SEEN.clear()
    bridge._WARM.clear()


def _tiles(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_disk_memo_roundtrip_and_bad_entries(tmp_path, monkeypatch):
    from app import disk_memo

    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path))
    assert disk_memo.load("x", ("k", 1)) == (False, None)
    disk_memo.store("x", ("k", 1), {"a": [1, 2.5]})
    assert disk_memo.load("x", ("k", 1)) == (True, {"a": [1, 2.5]})
    assert disk_memo.load("x", ("k", 2)) == (False, None)  # another key
    assert all(p.is_relative_to(tmp_path / "app") for p in tmp_path.rglob("*.pkl"))
    for p in (tmp_path / "app").glob("*.pkl"):
        p.write_bytes(b"not a pickle")  # a damaged entry is recomputed, not raised
    assert disk_memo.load("x", ("k", 1)) == (False, None)
    monkeypatch.setattr(disk_memo, "MAX_ENTRIES", 3)
    for i in range(6):
        disk_memo.store("y", i, i)
    assert len(list((tmp_path / "app").glob("*.pkl"))) == 3
    assert disk_memo.load("y", 5) == (True, 5) and disk_memo.load("y", 0) == (False, None)  # the oldest went
    monkeypatch.setenv(disk_memo.ENV_OFF, "0")
    assert disk_memo.load("y", 5) == (False, None)


@pytest.mark.slow
def test_fresh_process_renders_from_disk_and_sees_changed_games(logs, monkeypatch):
    import mafiascope.analytics.report as report_mod

    at = new_app(page="dashboard").run()  # cold: parses the games (progress bar), computes, stores
    assert_clean(at)
    first = _tiles(at)
    n_games = int(first["Games"].replace(",", ""))
    assert n_games >= 4  # ours and any corpora the app lists by default
    cache = Path(os.environ["MAFIASCOPE_CACHE_DIR"])
    assert list((cache / "app").glob("report-*.pkl")) and list((cache / "app").glob("index-*.pkl"))

    calls = []
    real = report_mod.build_report  # the app imports it when a report is computed: patch it in its module
    monkeypatch.setattr(report_mod, "build_report", lambda *a, **k: calls.append(1) or real(*a, **k))
    _fresh_process()
    at = new_app(page="dashboard").run()
    assert_clean(at)
    assert _tiles(at) == first and not calls  # every figure from disk: the report was not rebuilt

    # a game's files change: its signature changes the key, so the figures are computed again
    victim = sorted(logs.iterdir())[0] / "game.jsonl"
    victim.write_bytes(victim.read_bytes() + b'{"kind": "note", "round": 1}\n')
    _fresh_process()
    at = new_app(page="dashboard").run()
    assert_clean(at)
    assert calls and int(_tiles(at)["Games"].replace(",", "")) == n_games


def test_build_progress_parses_then_reports_warm(logs):
    """The Dashboard's cold path: pending games are parsed batch by batch (progress), then none are pending."""

    def script() -> None:
        import pandas as pd
        import streamlit as st

        from app import bridge
        from app import dashboard_view as D
        from mafiascope.logs.io import list_game_dirs

        dirs = tuple(sorted(str(d) for d in list_game_dirs(st.session_state["root"])))
        before = bridge.pending(dirs)
        D.build_progress(dirs, pd.DataFrame({"dir": list(dirs), "winner": "Mafia", "rounds": 3}))
        st.write(f"pending {before} -> {bridge.pending(dirs)}")

    assert "pending 4 -> 0" in script_says(script, logs)


def _drawn_specs(at) -> list[str]:
    out: list[str] = []

    def walk(node) -> None:
        if getattr(node, "type", "") == "vega_lite_chart":
            out.append(node.proto.spec)
        for c in getattr(node, "children", {}).values():
            walk(c)

    walk(at._tree)
    return out


@pytest.mark.slow
def test_figures_drawn_from_disk_are_the_charts_drawn_cold(logs, monkeypatch):
    """A fresh process draws every Dashboard figure from its stored Vega-Lite dict, identical to the one drawn
    when the figures were first computed, without building an Altair chart."""
    from mafiascope.analytics import figures

    from .app_support import each_tab

    at = new_app(page="dashboard").run()
    cold = [spec for at in each_tab(at) for spec in _drawn_specs(at)]
    assert len(cold) >= 3  # F1, calibration, belief dynamics, the comparison (when two models sit)
    built = []
    for name in ("f1_per_model_chart", "calibration_per_model_chart", "dynamics_chart", "comparison_chart"):
        real = getattr(figures, name)
        monkeypatch.setattr(figures, name, lambda *a, _real=real, **k: built.append(1) or _real(*a, **k))
    _fresh_process()
    at = new_app(page="dashboard").run()
    warm = [spec for at in each_tab(at) for spec in _drawn_specs(at)]
    assert warm == cold and not built


def test_chart_exports_build_the_stored_figure(logs):
    """The export buttons build the chart on a click (app/dashboard_figures.chart_builder): its Vega-Lite JSON is
    the stored figure the page draws."""

    def script() -> None:
        import json

        import streamlit as st

        from app import analysis as A
        from app import dashboard_figures as DF
        from mafiascope.logs.io import list_game_dirs

        dirs = tuple(sorted(str(d) for d in list_game_dirs(st.session_state["root"])))
        pm = A.per_model(dirs)
        models = A.seat_models(dirs)
        cases = [("f1", (), pm), ("calibration", (), pm), ("dynamics", (), None)]
        cases += [("compare", (models[0], models[1]), None)] if len(models) > 1 else []
        for name, args, inputs in cases:
            fig = DF.figure(dirs, name, *args)
            if fig["spec"] is None:
                continue
            exported = json.loads(DF.chart_builder(name, fig["table"], inputs, *args)().to_json())
            st.write(f"{name}: {'same' if exported == fig['spec'] else 'DIFFERENT'}")

    said = script_says(script, logs)
    assert len(said) >= 3 and all(s.endswith(": same") for s in said), said


def test_chart_export_buttons_build_on_click(monkeypatch):
    """widgets.download_chart with a builder: nothing is built while the page draws; each button's callable builds
    the chart once and exports it like a chart passed in directly."""
    import altair as alt
    import pandas as pd
    from streamlit.delta_generator import DeltaGenerator

    from app import widgets

    chart = alt.Chart(pd.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_line().encode(x="x", y="y")
    built: list[int] = []
    buttons: dict[str, object] = {}
    monkeypatch.setattr(DeltaGenerator, "download_button", lambda self, label, data, **k: buttons.setdefault(label, data))
    widgets.download_chart(lambda: built.append(1) or chart, "demo", key="ex_demo")
    assert not built and {"⬇ Vega-Lite JSON", "⬇ HTML"} <= set(buttons)
    assert buttons["⬇ Vega-Lite JSON"]() == chart.to_json()
    assert "vega" in buttons["⬇ HTML"]()
    if "⬇ SVG" in buttons:  # vl-convert installed
        assert buttons["⬇ SVG"]().lstrip().startswith("<svg")
    assert built == [1]  # built on the first click, reused by the others
