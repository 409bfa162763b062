"""Altair charts over analytics results (metrics strip, reliability diagram, ...).

The adapters here only reshape what mafiascope.analytics returns into long tables for
plotting; the numbers themselves come from analytics.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from mafiascope.analytics.custom import custom_probe_ids, custom_summary, numeric_series
from mafiascope.analytics.figures import CI_COLOR  # interval whiskers (grey: both themes)
from mafiascope.analytics.modes import Mode
from mafiascope.analytics.viewer import step_metrics
from mafiascope.logs import StepKey, step_label

from . import bridge, vega_data
from .data import file_sig
from .gamemodel import GameModel
from .palette import AGENT_PALETTE, ROLE_COLORS
from .strip_chart import STEP_PARAM

RECALL_COLOR = "#6e7681"  # neutral grey: the crowd line never shares a hue with a Mafioso's agent colour

STRIP_HEIGHT = 150  # plot height of each metrics-strip chart (legend rows come on top of it)
N_ROW = 1.05  # reliability diagram: the y of the row of "n=" labels, above 100 %


# ----------------------------------------------------------------------------- per-step viewer metrics


@st.cache_data(max_entries=32, show_spinner="Scoring the game ...")
def _viewer_metrics(path: str, sig: tuple, mode_name: str) -> dict[str, Any]:
    c = bridge.corpus([path], include_forks=True, probed_only=False)
    if c.m == 0:
        return _normalise_viewer({"per_step": []})
    return _normalise_viewer(step_metrics(c, c.game_ids[0], bridge.current_mode()))


def viewer_metrics(path: str) -> dict[str, Any]:
    """analytics.viewer.step_metrics of one game as long tables keyed by step label."""
    return _viewer_metrics(str(path), file_sig(path), bridge.current_mode().name)


def _normalise_viewer(res: dict[str, Any]) -> dict[str, Any]:
    fo, so, de, cr = [], [], [], []
    for s in res.get("per_step") or []:
        lab = StepKey.parse(s["label"]).label  # compat spells a round end "R1 end": the app's labels are URL labels
        for k, v in (s.get("accuracy") or {}).items():
            fo.append((lab, k, v))
        for k, v in (s.get("second_order") or {}).items():
            so.append((lab, k, v))
        for k, v in (s.get("deception") or {}).items():
            de.append((lab, k, v))
        cr.append((lab, s.get("crowd_recall")))
    cols = ["label", "player", "value"]
    out = {
        "first_order": pd.DataFrame(fo, columns=cols),
        "second_order": pd.DataFrame(so, columns=cols),
        "deception": pd.DataFrame(de, columns=cols),
        "crowd_recall": pd.DataFrame(cr, columns=["label", "value"]),
        "summary": {k: v for k, v in res.items() if k != "per_step"},
        "per_step": {StepKey.parse(s["label"]).label: s for s in res.get("per_step") or []},
    }
    for k in ("first_order", "second_order", "deception", "crowd_recall"):
        out[k]["value"] = pd.to_numeric(out[k]["value"], errors="coerce")
    return out


@st.cache_data(max_entries=32, show_spinner=False)
def _custom_series(path: str, sig: tuple) -> dict[str, pd.DataFrame]:
    c = bridge.corpus([path], include_forks=True, probed_only=False)
    out: dict[str, pd.DataFrame] = {}
    if c.m == 0:
        return out
    for pid in custom_probe_ids(c):
        for field, e in (custom_summary(c, Mode(boot=0), pid).get("fields") or {}).items():
            if e.get("kind") != "numeric":
                continue
            df = numeric_series(c, 0, pid, field)
            if len(df):
                out[f"{pid}.{field}"] = pd.DataFrame({"label": [step_label(r, s) for r, s in zip(df["round"], df["pms"])],
                                                      "player": df["name"], "value": df["value"]})
    return out


def custom_series(path: str) -> dict[str, pd.DataFrame]:
    """Numeric fields of the game's custom probes per step and agent: {"probe.field": (label, player, value)}."""
    return _custom_series(str(path), file_sig(path))


def custom_strip(gm: GameModel, step: int, agent: str | None = None) -> None:
    """A per-step chart of one numeric field of a custom probe (all agents, or one), with the step cursor."""
    series = custom_series(gm.dir)
    if not series:
        return
    key = st.selectbox("Custom probe field", list(series), key=f"cs_{gm.game_id}_{agent or 'all'}",
                       help="Numeric fields (probability, score) of the game's custom probes, per step")
    df = with_steps(series[key], gm)
    if agent is not None:
        df = df[df["player"] == agent]
    if df.empty:
        st.caption(f"{key}: no answers" + (f" from {agent}" if agent else ""))
        return
    top = 1.0 if float(df["value"].max()) <= 1.0 else 10.0  # probability or 0-10 score
    colors = dict(zip(gm.names, AGENT_PALETTE * 3))
    dom = [n for n in gm.names if n in set(df["player"])]
    base = alt.Chart(df).encode(
        x=alt.X("step:Q", title="step", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("value:Q", title=key, scale=alt.Scale(domain=[0, top])),
        color=alt.Color("player:N", scale=alt.Scale(domain=dom, range=[colors[d] for d in dom]),
                        legend=alt.Legend(orient="bottom", title=None, columns=4)))
    pts = base.mark_point(size=26, filled=True).encode(tooltip=["label:N", "player:N", alt.Tooltip("value:Q", format=".2f")])
    cursor = alt.Chart(pd.DataFrame({"step": [step]})).mark_rule(color="#a16207", strokeWidth=2).encode(x="step:Q")
    st.altair_chart(alt.layer(base.mark_line(strokeWidth=1.6), pts, cursor).properties(height=STRIP_HEIGHT),
                    width="stretch", key=f"csc_{gm.game_id}_{agent or 'all'}")


def with_steps(df: pd.DataFrame, gm: GameModel) -> pd.DataFrame:
    """Attach the app's step index to a table keyed by step label (rows of unknown labels dropped)."""
    idx = {s.label: s.idx for s in gm.steps}
    out = df.assign(step=df["label"].map(idx))
    return out.dropna(subset=["step"]).astype({"step": int})


def deception_at(m: dict[str, Any], label: str) -> dict[str, float | None] | None:
    ps = (m.get("per_step") or {}).get(label)
    if ps is None:
        return None
    return {str(k): (None if v is None else float(v)) for k, v in (ps.get("deception") or {}).items()}


def _pick(event: Any, key: str) -> int | None:
    from .graph import selection_value

    val = selection_value(event, STEP_PARAM, "step", key)
    return int(val) if val is not None else None


_STRIP_SPECS: dict[tuple, tuple[dict[str, Any], list[float]]] = {}


def _strip_frames(m: dict[str, Any], gm: GameModel) -> dict[str, tuple[pd.DataFrame, dict[str, str], set[str]]]:
    labels = {s.idx: s.label for s in gm.steps}
    agents = dict(zip(gm.names, AGENT_PALETTE * 3))
    out = {}
    for kind in ("first_order", "crowd", "second_order"):
        if kind == "crowd":
            cr = with_steps(m["crowd_recall"], gm)
            dec = with_steps(m["deception"], gm)
            parts = []
            if len(cr):
                parts.append(cr.assign(series="recall")[["step", "series", "value"]])
            if len(dec):
                parts.append(dec.assign(series=dec["player"].astype(str) + " hid")[["step", "series", "value"]])
            df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["step", "series", "value"])
            ser = list(dict.fromkeys(df["series"]))
            # each Mafioso keeps its colour from the per-agent charts (one shared colour made them indistinguishable)
            colors = {s: (RECALL_COLOR if s == "recall" else agents.get(s[:-len(" hid")], ROLE_COLORS["Mafia"])) for s in ser}
            dashed = {s for s in ser if s != "recall"}
        else:
            df = with_steps(m[kind], gm)
            df = (df.rename(columns={"player": "series"})[["step", "series", "value"]]
                  if len(df) else pd.DataFrame(columns=["step", "series", "value"]))
            colors = {k: v for k, v in agents.items() if k in set(df["series"])} or agents
            dashed = set()
        df = df.dropna(subset=["value"]).assign(label=lambda d: d["step"].map(labels))
        out[kind] = (df, colors, dashed)
    return out


STRIP_TITLES = {"first_order": "1st-order accuracy per agent",
                "crowd": "Crowd Mafia recall · dashed: each Mafioso hid",
                "second_order": "2nd-order consistency per agent"}


def metrics_strip(m: dict[str, Any], gm: GameModel, step: int) -> int | None:
    """The three step-indexed panels as one chart (app/strip_chart.py): its spec and line data are built once per
    game, a step moves the cursor; returns a step clicked on it (or None)."""
    from .strip_chart import cursor_rows, strip_spec

    ck = (gm.game_id, file_sig(gm.dir), bridge.current_mode().name)
    if ck not in _STRIP_SPECS:
        spec, offsets = strip_spec(_strip_frames(m, gm), STRIP_TITLES, len(gm.steps) - 1)
        _STRIP_SPECS[ck] = (spec, offsets)
        if len(_STRIP_SPECS) > 100:
            _STRIP_SPECS.pop(next(iter(_STRIP_SPECS)))
    spec, offsets = _STRIP_SPECS[ck]
    if not offsets:
        st.caption("Metrics strip: no data")
        return None
    key = f"ms_strip_{gm.game_id}"
    spec = {**spec, "datasets": {"cursor": cursor_rows(step, offsets)}}
    ev = vega_data.chart(spec, key=key, on_select="rerun", selection_mode=STEP_PARAM, width="stretch")
    return _pick(ev, key)


# ----------------------------------------------------------------------------- calibration


def reliability(bins: pd.DataFrame, title: str = "", height: int = 330) -> alt.LayerChart:
    """bins: lo, hi, n, acc, ci_lo, ci_hi (accuracy in 0-1); n < 10 dimmed; overconfident hatched colour."""
    df = bins.copy()
    df[["ci_lo", "ci_hi"]] = df[["ci_lo", "ci_hi"]].clip(0.0, 1.0)  # whiskers end at 0 % and 100 %
    df["mid"] = (df["lo"] + df["hi"]) / 2.0
    df["conf_mid"] = df["mid"] / 100.0
    df["over"] = df["acc"] < df["conf_mid"] - 0.001
    df["status"] = df.apply(lambda r: ("overconfident" if r["over"] else "within / under") if pd.notna(r["acc"]) else "empty", axis=1)
    df["low_n"] = df["n"] < 10
    df["alpha"] = df["low_n"].map({True: 0.35, False: 0.95})
    df["bin"] = df["lo"].astype(int).astype(str) + "–" + df["hi"].astype(int).astype(str)
    x = alt.X("lo:Q", title="stated confidence (%)", scale=alt.Scale(domain=[0, 100]))
    # the y scale runs to 110 %: the band above 100 % holds the n labels, where no whisker, bar or diagonal reaches
    y_scale = alt.Scale(domain=[0, N_ROW + 0.05], nice=False)
    bars = alt.Chart(df).mark_bar(stroke="#333333", strokeWidth=0.6).encode(
        x=x, x2="hi:Q", y=alt.Y("acc:Q", title="accuracy", scale=y_scale,
                                axis=alt.Axis(format="%", values=[0, 0.2, 0.4, 0.6, 0.8, 1.0])),
        y2=alt.datum(0),
        color=alt.Color("status:N", scale=alt.Scale(domain=["overconfident", "within / under"], range=[ROLE_COLORS["Mafia"], ROLE_COLORS["Villager"]]),
                        legend=alt.Legend(orient="bottom", title=None)),
        opacity=alt.Opacity("alpha:Q", scale=None),
        tooltip=["bin:N", "n:Q", alt.Tooltip("acc:Q", format=".1%"), alt.Tooltip("ci_lo:Q", format=".1%", title="Wilson lo"),
                 alt.Tooltip("ci_hi:Q", format=".1%", title="Wilson hi"), "status:N"])
    pattern = alt.Chart(df[df["over"] & df["acc"].notna()]).mark_text(text="╱╱╱", fontSize=14, color="#ffffff").encode(
        x=alt.X("mid:Q"), y=alt.Y("acc:Q"), yOffset=alt.value(12))
    whisk = alt.Chart(df.dropna(subset=["ci_lo"])).mark_rule(strokeWidth=2, color=CI_COLOR).encode(  # grey: visible on both themes
        x="mid:Q", y="ci_lo:Q", y2="ci_hi:Q")
    diag = alt.Chart(pd.DataFrame({"c": [0, 100], "a": [0, 1]})).mark_line(strokeDash=[4, 4], color="#888888").encode(x="c:Q", y="a:Q")
    from .graph import mid_text

    # theme-neutral ink, no halo (a light halo smeared on the dark theme); above the plot, so no whisker crosses it
    ntext = mid_text(alt.Chart(df).transform_calculate(ntext="'n=' + datum.n", row=str(N_ROW)), fontSize=11,
                     x="mid:Q", y=alt.Y("row:Q", scale=y_scale), text="ntext:N")
    ch = alt.layer(bars, pattern, whisk, diag, ntext).properties(height=height)
    if title:
        ch = ch.properties(title=alt.TitleParams(title, anchor="start", fontSize=13))
    return ch
