"""What the app shows users (issue 16): no "None"/"nan" cells in its tables, "1 game" not "1 games"."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from .app_support import assert_clean, demo_logs, each_tab, new_app  # noqa: E402


@pytest.fixture
def logs(tmp_path_factory, monkeypatch, tmp_path):
    demo = demo_logs(tmp_path_factory)
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(demo))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    return demo


def _internal_cells(at) -> list[tuple[list[str], str]]:
    bad = []
    for d in at.dataframe:
        df = d.value
        for c in df.columns:
            bad += [(list(df.columns), f"{c}={v}") for v in df[c] if str(v) in ("None", "nan", "NaN", "<NA>") or "None" in str(v)]
    return bad


@pytest.mark.slow
@pytest.mark.parametrize("page", ["dashboard", "calibration"])
def test_tables_show_no_none(logs, page):
    """The Dashboard's F4 table had "None" chance cells and Calibration's bins table None/nan for empty bins."""
    at = new_app(page=page)
    if page == "dashboard":
        from app.dashboard_view import F1_MORE

        at.session_state[F1_MORE] = True  # the F1 tab draws its table while the expander holding it is open
    at.run()
    assert_clean(at)
    assert at.dataframe, "no table drawn"
    assert not _internal_cells(at), _internal_cells(at)[:5]
    for at in each_tab(at) if page == "dashboard" else ():  # the Dashboard draws only its open tab (F4 is in the third)
        assert_clean(at)
        assert not _internal_cells(at), _internal_cells(at)[:5]


def test_dashes_keeps_full_columns():
    import pandas as pd

    from app.widgets import dashes

    df = pd.DataFrame({"n": [1, 2], "rate": [0.25, None], "ci": [None, "0.1–0.2"]})
    out = dashes(df, 2)
    assert out["n"].tolist() == [1, 2] and out["rate"].tolist() == ["0.25", "—"] and out["ci"].tolist() == ["—", "0.1–0.2"]


def test_vote_counts_are_plural_aware():
    from app.transcript import _votes

    assert _votes(1) == "1 vote" and _votes(3) == "3 votes" and _votes(None).endswith("votes")
