"""The Live Game's metrics strip as ONE chart: three step-indexed panels side by side in one coordinate space.

Three charts in three columns cost the browser three elements, four containers and three Vega views on each of a
timeline step's whole-page React commits, and their line data was re-sent with each step. Here the panels, their
titles, axes' labels and legends are marks over one x scale (panel ``i`` occupies ``[i * pitch, i * pitch + last
step]``), so the spec and its ``lines`` and ``frame`` datasets are fixed for a game; a step sends the one-row-per-
panel ``cursor`` dataset (the fixed data sit inline in the spec, whose unchanged string the browser keeps parsed). A click
picks the nearest point of any panel (its ``step``), as the three charts' clicks did.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import pandas as pd

from . import vega_data
from .graph import MID_INK

PLOT_PX = 150  # each panel's plot height (the three charts' STRIP_HEIGHT)
TITLE_PX = 24  # the panel titles above the plots
AXIS_PX = 34  # the x tick labels and the "step" title below the plots
LEGEND_ROW_PX = 20
GAP = 0.3  # the gap between two panels (room for the next panel's y labels), as a share of a panel's steps
LEGEND_LABEL_LIMIT = 64  # px: two legend columns fit a panel in a third of a 1000-px page
CURSOR = "#a16207"
STEP_PARAM = "pick_step"


def _ticks(last: int) -> list[int]:
    """Step ticks every 10 (5 for a short game, 1 for a tiny one), as the former charts' x axes had them."""
    every = 10 if last >= 30 else 5 if last >= 10 else 1
    return list(range(0, last + 1, every))


@functools.lru_cache(maxsize=64)
def _skeleton(legend_rows: int, pitch: float, last: int, colors: tuple[tuple[str, str], ...]) -> str:
    """The spec without data: lines, points (the click), cursor rules and the frame's text and grid marks."""
    u = 1.0 / PLOT_PX  # data units per pixel on the y scale
    y_dom = [-(AXIS_PX + legend_rows * LEGEND_ROW_PX + 6) * u, 1 + TITLE_PX * u]
    x_dom = [-0.12 * max(last, 1), 2 * pitch + max(last, 1) + 0.03 * max(last, 1)]
    x = {"field": "gx", "type": "quantitative", "scale": {"domain": x_dom, "nice": False, "zero": False}, "axis": None}
    y = {"field": "y", "type": "quantitative", "scale": {"domain": y_dom, "nice": False, "zero": False}, "axis": None}
    yv = {**y, "field": "value"}
    dash = {"condition": {"test": "datum.dashed", "value": [4, 3]}, "value": [1, 0]}
    # one colour per series over the three panels (an agent has the same colour in each; "X hid" is X's colour)
    color = {"field": "series", "type": "nominal", "legend": None,
             "scale": {"domain": [c[0] for c in colors], "range": [c[1] for c in colors]}}
    lines = {"mark": {"type": "line", "strokeWidth": 1.8, "interpolate": "linear"},
             "encoding": {"x": x, "y": yv, "color": color, "detail": {"field": "panel", "type": "nominal"}, "strokeDash": dash}}
    tip = [{"field": "label", "type": "nominal", "title": "step"}, {"field": "series", "type": "nominal"},
           {"field": "value", "type": "quantitative", "format": ".0%"}]
    points = {"mark": {"type": "point", "size": 26, "filled": True, "opacity": 0.9},
              "params": [{"name": STEP_PARAM, "select": {"type": "point", "fields": ["step"], "on": "click", "nearest": True}}],
              "encoding": {"x": x, "y": yv, "color": color, "tooltip": tip}}
    cursor = {"data": {"name": "cursor"}, "mark": {"type": "rule", "color": CURSOR, "strokeWidth": 2},
              "encoding": {"x": x, "y": {"datum": 0, "type": "quantitative", "scale": y["scale"], "axis": None},
                           "y2": {"datum": 1}}}
    frame: dict[str, Any] = {}

    def where(kind: str) -> dict[str, Any]:
        return {"transform": [{"filter": f"datum.kind === '{kind}'"}]}

    grid = {**frame, **where("grid"), "mark": {"type": "rule", "color": "#8b949e", "strokeOpacity": 0.25, "strokeWidth": 1},
            "encoding": {"x": x, "x2": {"field": "gx2"}, "y": y, "y2": {"field": "y2"}}}
    swatch = {**frame, **where("legend"), "mark": {"type": "point", "filled": True, "size": 70, "opacity": 1},
              "encoding": {"x": x, "y": y, "color": color}}
    texts = []
    for kind, mark in (("title", {"align": "left", "baseline": "bottom", "dy": -8, "fontSize": 12, "fontWeight": "bold",
                                  "limit": {"expr": "width / 3 - 12"}}),
                       ("ylabel", {"align": "right", "baseline": "middle", "dx": -5, "fontSize": 10}),
                       ("xlabel", {"align": "center", "baseline": "top", "dy": 4, "fontSize": 10}),
                       ("xtitle", {"align": "center", "baseline": "top", "dy": 18, "fontSize": 10}),
                       ("legend", {"align": "left", "baseline": "middle", "dx": 8, "fontSize": 12, "limit": LEGEND_LABEL_LIMIT}),
                       ("nodata", {"align": "center", "baseline": "middle", "fontSize": 11})):
        texts.append({**frame, **where(kind), "mark": {"type": "text", "fill": MID_INK, **mark},
                      "encoding": {"x": x, "y": y, "text": {"field": "text", "type": "nominal"}}})
    height = round((y_dom[1] - y_dom[0]) / u)
    spec = {"$schema": "https://vega.github.io/schema/vega-lite/v6.json", "height": height, "background": "transparent",
            "config": {"view": {"strokeWidth": 0}},
            # the fixed data go inline into two layer groups (filled by strip_spec), not into named datasets: a step
            # then sends the same spec string, which the browser keeps parsed, and decodes only the cursor's Arrow rows
            "layer": [{"name": "frame", "layer": [grid, *texts[:4], swatch, *texts[4:]]},
                      {"name": "lines", "layer": [lines, points]}, cursor],
            "usermeta": vega_data.CANVAS, "autosize": {"type": "fit-x", "contains": "padding"}}
    return json.dumps(spec)


def strip_spec(frames: dict[str, tuple[pd.DataFrame, dict[str, str], set[str]]], titles: dict[str, str],
               last: int) -> tuple[dict[str, Any], list[float]]:
    """The strip's spec and datasets ``lines`` and ``frame`` (fixed for a game) from each panel's long table
    (step, series, value, label), its colours and its dashed series; returns (spec, the x offset of each panel that
    has data: step ``s`` of such a panel is at ``offset + s``)."""
    span = max(last, 1)
    pitch = span * (1 + GAP)
    lines: list[dict[str, Any]] = []
    frame: list[dict[str, Any]] = []
    legend_rows = 1
    offsets: list[float] = []
    palette: dict[str, str] = {}
    for i, kind in enumerate(titles):
        df, colors, dashed = frames[kind]
        ox = i * pitch
        frame.append({"kind": "title", "gx": ox - 0.1 * span, "y": 1.0, "text": titles[kind]})
        if df.empty:
            frame.append({"kind": "nodata", "gx": ox + span / 2, "y": 0.5, "text": "no data"})
            continue
        offsets.append(ox)
        for v in (0.0, 0.5, 1.0):
            frame.append({"kind": "grid", "gx": ox, "gx2": ox + span, "y": v, "y2": v})
            frame.append({"kind": "ylabel", "gx": ox, "y": v, "text": f"{v:.0%}"})
        for t in _ticks(last):
            frame.append({"kind": "grid", "gx": ox + t, "gx2": ox + t, "y": 0.0, "y2": 1.0})
            frame.append({"kind": "xlabel", "gx": ox + t, "y": 0.0, "text": str(t)})
        frame.append({"kind": "xtitle", "gx": ox + span / 2, "y": 0.0, "text": "step"})
        series = list(colors)
        palette.update(colors)
        ncol = 1 if len(series) <= 3 else 2
        legend_rows = max(legend_rows, math.ceil(len(series) / ncol))
        for j, s in enumerate(series):
            frame.append({"kind": "legend", "gx": ox + 0.08 * span + (j % ncol) * 0.5 * span, "row": j // ncol,
                          "text": s, "series": s})
        for r in df.itertuples(index=False):
            lines.append({"gx": ox + int(r.step), "step": int(r.step), "value": float(r.value), "label": str(r.label),
                          "series": str(r.series), "panel": i, "dashed": r.series in dashed})
    u = 1.0 / PLOT_PX
    for row in frame:
        if row["kind"] == "legend":
            row["y"] = -(AXIS_PX + (row.pop("row") + 0.5) * LEGEND_ROW_PX + 6) * u
    spec = json.loads(_skeleton(legend_rows, pitch, last, tuple(palette.items())))
    for group, rows in zip(spec["layer"], (frame, lines)):
        group["data"] = {"values": vega_data.records(rows)}
    return spec, offsets


def fixed_data(spec: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The rows of the strip's fixed layer groups by name (``frame``, ``lines``)."""
    return {g["name"]: g["data"]["values"] for g in spec["layer"] if "name" in g}


def cursor_rows(step: int, offsets: list[float]) -> list[dict[str, Any]]:
    """The step's cursor rule in each panel that has data."""
    return [{"gx": ox + step} for ox in offsets]
