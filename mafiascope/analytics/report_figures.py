"""The report directory's per-model figures (belief dynamics, outcomes by side, F4, custom probes: one row or
panel per model, never pooled over models) and the sizes and type a paper takes: one column is 3.5 in
(252 pt) wide, two columns 7 in (504 pt); text 7-9 pt. A Vega-Lite pixel is a PDF point, so a figure saved
at these widths is set at 100 % by ``\\includegraphics`` and its text keeps its size."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from . import figures as F
from .metrics import labels as metric_labels

COLUMN_PT = 252  # one column of a two-column paper (3.5 in)
PAGE_PT = 504  # both columns (7 in)


def paper_style(chart: alt.TopLevelMixin, width: int = PAGE_PT) -> alt.TopLevelMixin:
    """Type sizes for print (axis labels 8 pt, titles 9 pt, chart title 10 pt, cut at ``width``), legends
    under the plot, no view border."""
    return (chart.configure(padding=4)
            .configure_axis(labelFontSize=8, titleFontSize=9)
            .configure_legend(labelFontSize=8, titleFontSize=9, labelLimit=LABEL_PT + 40, orient="bottom", columns=2,
                              symbolSize=40)
            .configure_header(labelFontSize=9, titleFontSize=9)
            .configure_title(fontSize=10, anchor="start", offset=6, limit=width - 10)
            .configure_view(strokeWidth=0))


def _metric_frame(by_model: dict[str, Any], by_model_role: dict[str, Any], keys: list[str]) -> pd.DataFrame:
    """model, group ("all" or a true role), metric, label, value, ci_lo, ci_hi, n for ``keys`` (per model from
    ``by_model``, per model and role from ``by_model_role``)."""
    names = metric_labels()
    rows = []
    for mdl, e in by_model.items():
        entries = [("all", e)] + [(role, x) for role, x in (by_model_role.get(mdl) or {}).items()]
        for group, x in entries:
            for key in keys:
                v = (x.get("metrics") or {}).get(key)
                if v and v.get("point") is not None:
                    ci = v.get("ci95") or [None, None]
                    rows.append({"model": mdl, "group": group, "metric": key, "label": names.get(key, key),
                                 "value": v["point"], "ci_lo": ci[0], "ci_hi": ci[1], "n": v.get("n")})
    return pd.DataFrame(rows, columns=["model", "group", "metric", "label", "value", "ci_lo", "ci_hi", "n"])


LABEL_PT = 110  # the widest model name on a row axis (longer ones end in an ellipsis: alias them)


def _points(df: pd.DataFrame, *, color: str, colors: alt.Scale, width: int, x_title: str, fmt: str,
            domain: list[float] | None, axis: bool = True, legend_columns: int = 1) -> alt.LayerChart:
    """Points with 95% whiskers, a row per model, coloured by ``color`` and dodged within the row."""
    tip = ["model", color, alt.Tooltip("value:Q", format=".3f"), alt.Tooltip("ci_lo:Q", format=".3f", title="95% low"),
           alt.Tooltip("ci_hi:Q", format=".3f", title="95% high"), alt.Tooltip("n:Q", title="n")]
    scale = alt.Scale(domain=domain, nice=False) if domain else alt.Scale(zero=False)
    base = alt.Chart(df).encode(
        y=alt.Y("model:N", title=None, axis=alt.Axis(labelLimit=LABEL_PT) if axis else None),
        yOffset=alt.YOffset(f"{color}:N"), color=alt.Color(f"{color}:N", scale=colors, title=None,
                                                           legend=alt.Legend(columns=legend_columns)),
        tooltip=tip)
    whisk = base.mark_rule(strokeWidth=1.5).encode(x=alt.X("ci_lo:Q", title=x_title, scale=scale, axis=alt.Axis(format=fmt)),
                                                   x2="ci_hi:Q")
    pts = base.mark_point(filled=True, size=30).encode(x="value:Q")
    return (whisk + pts).properties(width=width, height=alt.Step(9))


def _group_colors(groups: list[str]) -> alt.Scale:
    order = [g for g in ("all", "Mafia", "Don", "town", *F.ROLE_COLORS) if g in groups] + \
            [g for g in groups if g not in ("all", "Mafia", "Don", "town", *F.ROLE_COLORS)]
    order = list(dict.fromkeys(order))
    return alt.Scale(domain=order, range=[F.AGGREGATE_COLOR if g in ("all", "town") else
                                          F.ROLE_COLORS.get(g, F.ROLE_COLORS["Unknown"]) for g in order])


def dynamics_per_model(rep: dict[str, Any], width: int = PAGE_PT) -> alt.HConcatChart | None:
    """Belief dynamics per model: a panel per measure, a row per model, every agent and each true role."""
    keys = [f"dynamics.{m}" for m in F.DYN_MEASURES]
    df = _metric_frame(rep.get("by_model") or {}, rep.get("by_model_role") or {}, keys)
    if df.empty:
        return None
    colors = _group_colors(list(dict.fromkeys(df["group"])))
    panels = []
    for i, key in enumerate(k for k in keys if k in set(df["metric"])):
        title, fmt = F.DYN_MEASURES[key.split(".", 1)[1]]
        sub = df[df["metric"] == key]
        if fmt == "%":
            sub = sub.assign(ci_lo=sub["ci_lo"].clip(0, 1), ci_hi=sub["ci_hi"].clip(0, 1))
        panels.append(_points(sub, color="group", colors=colors, width=int((width - LABEL_PT - 20) / 3) - 10, x_title=title,
                              fmt=fmt, domain=[0, 1] if fmt == "%" else None, axis=i == 0, legend_columns=6))
    return alt.hconcat(*panels, spacing=8).properties(title="Belief dynamics per model and true role (95% intervals)")


SIDE_KEYS = {"outcome.win_rate_mafia": "as Mafia", "outcome.win_rate_town": "as town"}


def outcomes_per_model(rep: dict[str, Any], width: int = COLUMN_PT) -> alt.LayerChart | None:
    """Win rate per model by side when the registry has the side statistics, else the seat win rate per model
    and true role (the side a model drew decides much of its seat win rate)."""
    by_model, by_role = rep.get("by_model") or {}, rep.get("by_model_role") or {}
    df = _metric_frame(by_model, {}, list(SIDE_KEYS))
    if not df.empty:
        df = df.assign(group=[SIDE_KEYS[k] for k in df["metric"]])
        title = "Win rate by side (95% intervals)"
    else:
        df = _metric_frame(by_model, by_role, ["outcome.seat_win_rate"])
        df = df[df["group"] != "all"]
        title = "Seat win rate by true role (95% CI)"
    if df.empty:
        return None
    df = df.assign(ci_lo=df["ci_lo"].clip(0, 1), ci_hi=df["ci_hi"].clip(0, 1))
    groups = list(dict.fromkeys(df["group"]))
    colors = alt.Scale(domain=groups, range=[F.ROLE_COLORS["Mafia"] if "Mafia" in g else F.ROLE_COLORS.get(g, F.AGENT_PALETTE[4])
                                             for g in groups])
    return _points(df, color="group", colors=colors, width=width - LABEL_PT - 20, x_title="win rate", fmt="%",
                   domain=[0, 1]).properties(title=title)


F4_KEYS = ("f4.top1.innocent", "f4.committed_set.innocent", "f4.top1.mafia")


def f4_per_model(rep: dict[str, Any], width: int = COLUMN_PT) -> alt.LayerChart | None:
    """F4 belief-vote coupling per model: each hit rate with its 95% interval."""
    df = _metric_frame(rep.get("by_model") or {}, {}, list(F4_KEYS))
    if df.empty:
        return None
    df = df.assign(measure=df["label"].str.replace("F4 ", "", regex=False), ci_lo=df["ci_lo"].clip(0, 1),
                   ci_hi=df["ci_hi"].clip(0, 1))
    order = list(dict.fromkeys(df["measure"]))
    colors = alt.Scale(domain=order, range=F.AGENT_PALETTE[4:4 + len(order)])
    return _points(df, color="measure", colors=colors, width=width - LABEL_PT - 20, x_title="share of votes", fmt="%",
                   domain=[0, 1]).properties(title="F4 per model (95% intervals)")


def custom_per_model(probe_id: str, frame: pd.DataFrame, width: int = PAGE_PT) -> alt.VConcatChart | None:
    """A custom probe per model (:func:`.figures.custom_frame`): each categorical field's answer shares as
    stacked bars, each numeric field's mean; free text has no figure (its table has the lengths)."""
    panels = []
    cat = frame[frame["answer"].notna()]
    for field, sub in cat.groupby("field", sort=False):
        tip = ["model", "answer", alt.Tooltip("count:Q"), alt.Tooltip("share:Q", format=".1%"), alt.Tooltip("n:Q")]
        panels.append(alt.Chart(sub).mark_bar().encode(
            y=alt.Y("model:N", title=None, axis=alt.Axis(labelLimit=LABEL_PT)),
            x=alt.X("share:Q", title=f"{field}: share of answers", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("answer:N", title=field, legend=alt.Legend(orient="right", labelLimit=160)),
            order=alt.Order("answer:N"), tooltip=tip).properties(width=width - 300, height=alt.Step(14)))
    num = frame[frame["mean"].notna()]
    for field, sub in num.groupby("field", sort=False):
        panels.append(alt.Chart(sub).mark_bar(color=F.AGENT_PALETTE[4]).encode(
            y=alt.Y("model:N", title=None, axis=alt.Axis(labelLimit=LABEL_PT)), x=alt.X("mean:Q", title=f"{field}: mean"),
            tooltip=["model", alt.Tooltip("mean:Q", format=".3f"), "n:Q"]).properties(width=width - 300, height=alt.Step(14)))
    if not panels:
        return None
    return alt.vconcat(*panels, spacing=10).resolve_scale(color="independent").properties(
        title=f"Custom probe {probe_id} per model")
