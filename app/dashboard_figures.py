"""The Dashboard's figures as Vega-Lite dicts with their tables, built once per selection and kept
on disk beside the results they draw (app/disk_memo.py).

Building an Altair chart (and importing Altair) cost a fresh server process more than a second per
Dashboard render; a stored figure is drawn from its dict. The chart builders are those of
mafiascope.analytics.figures (shared with `mafiascope report`), called only when a figure is not
stored yet; the stored dict is their ``to_dict(validate=False)``, exactly what was drawn before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from . import analysis as A
from . import bridge, disk_memo

Figure = dict[str, Any]  # {"spec": Vega-Lite dict or None (nothing to draw), "table": DataFrame}


def _spec(chart: Any) -> dict[str, Any]:
    return chart.to_dict(validate=False)  # the builders are tested; schema validation was most of their cost


def _f1(dirs: tuple[str, ...]) -> Figure:
    from mafiascope.analytics import figures as F

    pm = A.per_model(dirs)
    df = F.f1_frame(pm)
    return {"table": df, "spec": None if df.empty else _spec(F.f1_per_model_chart(df, pm))}


def _calibration(dirs: tuple[str, ...]) -> Figure:
    from mafiascope.analytics import figures as F

    pm = A.per_model(dirs)
    df, s = F.calibration_frames(pm)
    return {"table": s, "spec": None if df.empty else _spec(F.calibration_per_model_chart(df, pm))}


def _dynamics(dirs: tuple[str, ...]) -> Figure:
    from mafiascope.analytics import figures as F

    df = F.dynamics_frame(A.report_summary(dirs))
    return {"table": df, "spec": None if df.empty else _spec(F.dynamics_chart(df))}


def _compare(dirs: tuple[str, ...], a: str, b: str) -> Figure:
    from mafiascope.analytics import figures as F

    df = F.comparison_frame([A.compare(dirs, a, b)])
    return {"table": df, "spec": _spec(F.comparison_chart(df, a, b)) if df["diff"].notna().any() else None}


_BUILDERS = {"f1": _f1, "calibration": _calibration, "dynamics": _dynamics, "compare": _compare}


@st.cache_data(max_entries=64, show_spinner=False)
@disk_memo.persist("dash_figure", bridge.corpus_choices)
def _figure(_dirs: tuple[str, ...], key: str, mode: Any, name: str, args: tuple[str, ...]) -> Figure:
    return _BUILDERS[name](_dirs, *args)


def figure(dirs: tuple[str, ...], name: str, *args: str) -> Figure:
    """The stored figure ``name`` (f1, calibration, dynamics, compare with models a, b) of this selection."""
    return _figure(*A.cache_key(dirs), name, tuple(args))


def chart_builder(name: str, table: pd.DataFrame, pm: dict[str, Any] | None = None, *args: str) -> Callable[[], Any]:
    """A function building the Altair chart of a figure, for its export buttons: called on a click, from
    results captured now (a download callable runs outside the script run, without the session's state)."""

    def build() -> Any:
        from mafiascope.analytics import figures as F

        if name == "f1":
            return F.f1_per_model_chart(table, pm)
        if name == "calibration":
            return F.calibration_per_model_chart(F.calibration_frames(pm)[0], pm)
        if name == "dynamics":
            return F.dynamics_chart(table)
        return F.comparison_chart(table, *args)

    return build
