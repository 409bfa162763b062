"""The Live Game's metrics strip as ONE chart (app/strip_chart.py): each panel holds exactly its former chart's rows
(step, series, value, label) moved by the panel's offset, the spec and line data are fixed for a game while a step
moves only the cursor, a click picks a point's step, and names reach the chart only as data."""

from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("streamlit")

from app import strip_chart as SC  # noqa: E402

TITLES = {"first_order": "1st-order", "crowd": "Crowd", "second_order": "2nd-order"}
AGENTS = {"Ann": "#E69F00", "Bob": "#56B4E9", "Cy'); alert(1) //": "#009E73", "Dee": "#F0E442"}


def _leaves(spec: dict) -> list[dict]:
    """The marks' layers, the fixed data's layer groups flattened (their inline rows left out)."""
    out = []
    for lay in spec["layer"]:
        out += _leaves(lay) if "layer" in lay else [lay]
    return out


def _frame(rows: list[tuple[int, str, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"step": s, "series": n, "value": v, "label": f"R1.{s}"} for s, n, v in rows],
                        columns=["step", "series", "value", "label"])


def _frames(empty_second: bool = False):
    fo = _frame([(0, "Ann", 0.5), (1, "Ann", 1.0), (1, "Bob", 0.0), (3, "Cy'); alert(1) //", 0.25)])
    cr = _frame([(0, "recall", 0.0), (2, "recall", 0.5), (2, "Bob hid", 1.0)])
    so = _frame([] if empty_second else [(1, "Dee", 0.75), (4, "Ann", 0.5)])
    return {"first_order": (fo, AGENTS, set()),
            "crowd": (cr, {"recall": "#6e7681", "Bob hid": AGENTS["Bob"]}, {"Bob hid"}),
            "second_order": (so, AGENTS, set())}


def test_each_panel_holds_its_charts_rows_moved_by_its_offset():
    frames = _frames()
    spec, offsets = SC.strip_spec(frames, TITLES, last=4)
    lines = SC.fixed_data(spec)["lines"]
    assert len(offsets) == 3 and offsets[0] == 0 and offsets[1] > 4 and offsets[2] - offsets[1] == offsets[1]
    for i, (kind, (df, colors, dashed)) in enumerate(frames.items()):
        mine = [r for r in lines if r["panel"] == i]
        assert [(r["step"], r["series"], r["value"], r["label"]) for r in mine] == [
            (int(s), n, float(v), lab) for s, n, v, lab in df[["step", "series", "value", "label"]].itertuples(index=False)]
        assert all(r["gx"] == offsets[i] + r["step"] for r in mine)
        assert {r["series"] for r in mine if r["dashed"]} == {n for n in df["series"] if n in dashed}
    # one colour per series over the panels: an agent's colour in the per-agent panels, "X hid" as given
    scale = next(lay for lay in _leaves(spec) if lay["mark"]["type"] == "line")["encoding"]["color"]["scale"]
    got = dict(zip(scale["domain"], scale["range"]))
    assert got["Ann"] == AGENTS["Ann"] and got["Bob hid"] == AGENTS["Bob"] and got["recall"] == "#6e7681"
    legend = [r for r in SC.fixed_data(spec)["frame"] if r["kind"] == "legend"]
    assert [r["text"] for r in legend] == [*AGENTS, "recall", "Bob hid", *AGENTS]
    titles = [r["text"] for r in SC.fixed_data(spec)["frame"] if r["kind"] == "title"]
    assert titles == list(TITLES.values())


def test_a_step_moves_only_the_cursor_and_an_empty_panel_says_so():
    """The fixed data are inline in the spec (the same string each step); the cursor is the one named dataset."""
    frames = _frames(empty_second=True)
    spec, offsets = SC.strip_spec(frames, TITLES, last=4)
    again, _ = SC.strip_spec(frames, TITLES, last=4)
    assert json.dumps(spec, sort_keys=True) == json.dumps(again, sort_keys=True)  # nothing in it depends on the step
    assert "datasets" not in spec and [lay["data"] for lay in _leaves(spec) if "data" in lay] == [{"name": "cursor"}]
    assert len(offsets) == 2  # no cursor in the panel without data
    assert SC.cursor_rows(3, offsets) == [{"gx": offsets[0] + 3}, {"gx": offsets[1] + 3}]
    nodata = [r for r in SC.fixed_data(spec)["frame"] if r["kind"] == "nodata"]
    assert [r["text"] for r in nodata] == ["no data"]
    assert not [r for r in SC.fixed_data(spec)["lines"] if r["panel"] == 2]


def test_click_picks_a_step_and_names_stay_data():
    spec, _ = SC.strip_spec(_frames(), TITLES, last=4)
    params = [p for lay in _leaves(spec) for p in lay.get("params", [])]
    assert params == [{"name": SC.STEP_PARAM, "select": {"type": "point", "fields": ["step"], "on": "click", "nearest": True}}]
    points = next(lay for lay in _leaves(spec) if lay.get("params"))
    assert [t["field"] for t in points["encoding"]["tooltip"]] == ["label", "series", "value"]
    layers = json.loads(json.dumps(_leaves(spec)))
    for lay in layers:  # the colour scale's domain lists the series (a literal array, never evaluated)
        lay.get("encoding", {}).get("color", {}).get("scale", {}).pop("domain", None)
    assert "alert" not in json.dumps(layers)  # elsewhere a name is a datum, never part of an expression or mark property
    assert spec["autosize"]["type"] == "fit-x"
    # the plot of each panel is PLOT_PX tall: the y scale maps [0, 1] onto PLOT_PX pixels
    y = _leaves(spec)[0]["encoding"]["y"]["scale"]["domain"]
    assert spec["height"] == pytest.approx((y[1] - y[0]) * SC.PLOT_PX, abs=1)
