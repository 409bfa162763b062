"""The Dashboard's first view without the data grid (issue 17 item 4): the F1 tab draws its chart, and its table
and downloads only while their expander is open (each new element type costs the browser a JavaScript chunk;
the grid's was the largest of the first view). Opened, the expander shows the table and buttons drawn before."""

from __future__ import annotations

import importlib.util

import pytest

pytest.importorskip("streamlit")

from .app_support import assert_clean, dashboard_logs, new_app  # noqa: E402
from .test_app_dashboard_cache import _drawn_specs  # noqa: E402

F1_BUTTONS = ["⬇ Vega-Lite JSON", "⬇ HTML", "⬇ SVG", "⬇ PNG", "⬇ CSV"]


@pytest.fixture()
def logs(tmp_path, monkeypatch):
    return dashboard_logs(tmp_path, monkeypatch)


def _buttons(at) -> list[str]:
    return [b.label for b in at.get("download_button")]


def test_f1_table_and_downloads_are_drawn_only_while_open(logs, monkeypatch):
    from app import dashboard_figures as DF
    from app.dashboard_view import F1_MORE
    from app.widgets import shown

    tables = []  # the F1 figure's table as the page reads it, with a gap (drawn as a dash)
    real = DF.figure

    def figure(dirs, name, *args):
        f = dict(real(dirs, name, *args))
        if name == "f1":
            f["table"] = f["table"].copy()
            f["table"].loc[0, "chance"] = float("nan")
            tables.append(f["table"])
        return f

    monkeypatch.setattr(DF, "figure", figure)

    at = new_app(page="dashboard").run()
    assert_clean(at)
    assert not at.dataframe  # the first view: no data grid
    assert _buttons(at) == ["⬇ Full report (JSON)"]
    assert [e.label for e in at.expander if e.label == "Table and downloads"] == ["Table and downloads"]
    assert len(_drawn_specs(at)) == 1  # the F1 chart

    at.session_state[F1_MORE] = True  # what a click on the expander does (it reruns the page)
    at.run()
    assert_clean(at)
    exports = F1_BUTTONS if importlib.util.find_spec("vl_convert") else ["⬇ Vega-Lite JSON", "⬇ HTML", "⬇ CSV"]
    assert len(at.dataframe) == 1 and _buttons(at) == exports + ["⬇ Full report (JSON)"]
    assert at.dataframe[0].value.equals(shown(tables[-1]))  # the table drawn before, every value as it was (columns in words)

    at.session_state[F1_MORE] = False
    at.run()
    assert not at.dataframe and _buttons(at) == ["⬇ Full report (JSON)"]



def test_bootstrap_resamples_are_a_radio_with_the_same_choices(logs):
    """The sidebar's bootstrap choice is a radio (no slider chunk on any page's first view): same key, choices and
    default, and the figures follow it."""
    from app.sidebar import BOOT_CHOICES

    at = new_app(page="dashboard")
    at.session_state["sb_settings_open"] = True  # the radio is drawn while the Analysis settings expander is open
    at.run()
    assert_clean(at)
    assert not at.select_slider and not at.slider
    boot = at.radio(key="sb_boot")
    assert BOOT_CHOICES == [0, 200, 500, 1000, 2000] and boot.options == [str(b) for b in BOOT_CHOICES] and boot.value == 1000
    assert any("bootstrap B = 1000" in c.value for c in at.caption)
    boot.set_value(0).run()
    assert_clean(at)
    assert any("bootstrap B = 0" in c.value for c in at.caption)
