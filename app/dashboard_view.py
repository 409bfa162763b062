"""Cross-game dashboard blocks (numbers from analytics; this module only lays them out)."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from . import analysis as A
from . import bridge
from .analysis_view import ci_text
from .charts import CI_COLOR
from .data import models_of
from .palette import AGENT_PALETTE, ROLE_COLORS, role_color
from .text import md_escape
from .widgets import download_chart, download_csv


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def tiles(rep: dict[str, Any], out: dict[str, Any], sel: pd.DataFrame) -> None:
    o = rep.get("outcome") or {}
    p = rep.get("parse") or {}
    w = o.get("mafia_win_rate_wilson95") or [None, None]
    c = st.columns(6)
    c[0].metric("Games", f"{rep.get('n_games', 0):,}", help="Root games of the selection with probes")
    c[1].metric("Mafia win rate", _pct(o.get("mafia_win_rate")),
                help=f"Wilson 95%: {_pct(w[0])}–{_pct(w[1])} over {o.get('completed', 0)} completed games")
    c[1].caption(f"95% CI {_pct(w[0])}–{_pct(w[1])}")
    lr = (o.get("game_length_rounds") or {})
    c[2].metric("Mean rounds", "–" if lr.get("mean") is None else f"{lr['mean']:.1f}", help=f"min {lr.get('min')}, max {lr.get('max')}")
    c[3].metric("Probe parse rate", _pct(p.get("parse_rate")), help=f"{p.get('parsed', 0):,} of {p.get('calls', 0):,} probe "
                f"answers usable after repair; {p.get('repair_recovered', 0):,} needed repair")
    c[4].metric("Branches", int(sel["is_branch"].sum()) if len(sel) else 0, help="Forked games in the sidebar selection")
    used = sel[sel["game_id"].isin(set(rep.get("game_ids") or []))] if len(sel) else sel  # the games the figures use
    models = models_of(used["models"]) if len(used) else []
    c[5].metric("Models", len(models), help="Models seated in the games above: " + md_escape(", ".join(models)))


def model_colors(models: Any) -> alt.Scale:
    """One model → colour mapping for every per-model chart of the dashboard: the domain is all models of the
    selection (sorted), not the ones a chart happens to have data for, so a model keeps its colour across tabs."""
    dom = sorted({str(m) for m in models})
    return alt.Scale(domain=dom, range=(AGENT_PALETTE * (len(dom) // len(AGENT_PALETTE) + 1))[:max(1, len(dom))])


def f1_per_model(dirs: tuple[str, ...], rep: dict[str, Any]) -> None:
    try:
        pm = A.per_model(dirs)
    except bridge.AnalyticsMissing as exc:
        bridge.show_missing(exc, "F1 per model")
        return
    rows = []
    for mdl, v in pm.items():
        for rnd, r in (v.get("f1_by_round") or {}).items():
            ci = r.get("acc_ci95") or [None, None]
            rows.append({"model": mdl, "round": int(rnd), "accuracy": r.get("acc"), "ci_lo": ci[0], "ci_hi": ci[1],
                         "n": r.get("acc_n"), "chance": r.get("acc_chance"), "mafia_recall": r.get("recall"),
                         "unknown_rate": r.get("unk")})
    df = pd.DataFrame(rows)
    if df.empty:
        st.info("No first-order data.")
        return
    models = sorted(df["model"].unique())
    colors = model_colors(pm)
    # models side by side within a round, so their interval whiskers do not hide each other
    step = min(0.08, 0.6 / max(1, len(models)))
    offset = {m: (i - (len(models) - 1) / 2) * step for i, m in enumerate(models)}
    df["x"] = df["round"] + df["model"].map(offset)
    rounds = sorted(df["round"].unique().tolist())
    x_axis = alt.X("x:Q", title="round", scale=alt.Scale(domain=[rounds[0] - 0.5, rounds[-1] + 0.5], nice=False),
                   axis=alt.Axis(values=rounds, format="d", grid=False))
    base = alt.Chart(df).encode(x=x_axis, color=alt.Color("model:N", scale=colors))
    band = base.mark_rule(strokeWidth=2, opacity=0.7).encode(y=alt.Y("ci_lo:Q", title="first-order accuracy", axis=alt.Axis(format="%")), y2="ci_hi:Q")
    line = base.mark_line(point=True).encode(y="accuracy:Q", tooltip=["model", "round", alt.Tooltip("accuracy:Q", format=".1%"),
                                                                       "n:Q", alt.Tooltip("chance:Q", format=".1%")])
    chance = base.mark_line(strokeDash=[3, 3], opacity=0.6).encode(y="chance:Q")
    ch = (band + line + chance).properties(height=300, title="Committed accuracy per round (dashed: permutation chance)")
    st.altair_chart(ch, width="stretch", key="db_f1")
    download_chart(ch, "f1_by_round_per_model", key="ex_f1")
    df = df.drop(columns="x")
    st.dataframe(df, hide_index=True, width="stretch")
    download_csv(df, "f1_by_round_per_model", key="dl_f1")


def calibration_per_model(dirs: tuple[str, ...]) -> None:
    try:
        pm = A.per_model(dirs)
    except bridge.AnalyticsMissing as exc:
        bridge.show_missing(exc, "Calibration per model")
        return
    rows, summ = [], []
    for mdl, v in pm.items():
        f2 = v.get("f2") or {}
        summ.append({"model": mdl, "games": v.get("games"), "guesses": f2.get("n"), "ECE": f2.get("ece"),
                     "ECE CI95": f2.get("ece_ci95"), "Brier": f2.get("brier"), "Brier CI95": f2.get("brier_ci95")})
        for b, e in (f2.get("bins") or {}).items():
            rows.append({"model": mdl, "bin": b, "n": e.get("n"), "accuracy": e.get("acc"), "mean_conf": e.get("mean_conf"),
                         "dim": (e.get("n") or 0) < 10})
    df = pd.DataFrame(rows)
    if df.empty:
        st.info("No calibration data.")
        return
    order = ["0-19", "20-39", "40-59", "60-79", "80-99"]
    df["perfect"] = pd.to_numeric(df["mean_conf"], errors="coerce") / 100.0  # perfect calibration: accuracy = confidence
    tip = ["model", "bin", alt.Tooltip("n:Q", title="n (guesses)"), alt.Tooltip("accuracy:Q", format=".1%"),
           alt.Tooltip("mean_conf:Q", format=".1f", title="mean stated confidence (%)")]
    base = alt.Chart(df).encode(
        x=alt.X("bin:N", sort=order, title="stated confidence bin (%)", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("model:N", scale=alt.Scale(domain=model_colors(pm).domain)),
        color=alt.Color("model:N", scale=model_colors(pm)), tooltip=tip)
    bars = base.mark_bar().encode(
        y=alt.Y("accuracy:Q", title="accuracy", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        opacity=alt.condition("datum.dim", alt.value(0.35), alt.value(0.95)))
    # the metric's reference: a calibrated model's accuracy equals its mean stated confidence in the bin
    ref = base.mark_tick(thickness=2, opacity=1).encode(y=alt.Y("perfect:Q", title="accuracy"), color=alt.value(CI_COLOR))
    ch = (bars + ref).properties(height=300, title="Accuracy per confidence bin and model (grey tick: mean stated "
                                                   "confidence = perfect calibration; faded: n < 10)")
    st.altair_chart(ch, width="stretch", key="db_cal")
    download_chart(ch, "calibration_per_model", key="ex_cal")
    s = pd.DataFrame(summ)
    st.dataframe(s, hide_index=True, width="stretch")
    download_csv(s, "calibration_per_model", key="dl_cal")


def f3_f4(rep: dict[str, Any]) -> None:
    f3 = rep.get("f3") or {}
    st.markdown("**F3 · second-order consistency** (τ = 50)")
    rows = []
    for key, lab in (("canonical", "all predictors"), ("innocent_predictors", "town"), ("mafia_predictors", "Mafia")):
        r = f3.get(key) or {}
        rows.append({"predictors": lab, "pairs": r.get("n"), "over-prediction ratio": ci_text(r.get("suspects_ratio"), r.get("ratio_ci95"), "{:.2f}"),
                     "accuracy": ci_text(r.get("accuracy"), r.get("acc_ci95"), "{:.2f}"),
                     "vs majority": ci_text(r.get("diff"), r.get("diff_ci95"), "{:+.2f}")})
    t = pd.DataFrame(rows)
    st.dataframe(t, hide_index=True, width="stretch")
    download_csv(t, "f3_summary", key="dl_f3")
    st.markdown("**F4 · belief–vote coupling** (pre-vote rule; rate [95% CI] vs chance)")
    rows = []
    for side, v in (rep.get("f4") or {}).items():
        if not isinstance(v, dict):
            continue
        for metric, r in v.items():
            if isinstance(r, dict) and "rate" in r:
                rows.append({"voters": side, "measure": metric, "k": r.get("k"), "n": r.get("n"),
                             "rate": ci_text(r.get("rate"), r.get("ci95"), "{:.2f}"), "chance": r.get("chance")})
    t4 = pd.DataFrame(rows)
    st.dataframe(t4, hide_index=True, width="stretch")
    download_csv(t4, "f4_summary", key="dl_f4")


DYN_MEASURES = {  # measure -> (axis title with its unit, tick format)
    "volatility": ("suspicion volatility (mean L1 shift, 0–2)", ".2f"),
    "flip_rate": ("top-suspect flip rate", "%"),
    "return_rate": ("return rate", "%"),
}
AGGREGATE_COLOR = "#6e7681"  # "all" / "non-Mafia" are not roles: neutral grey


def dynamics_chart(df: pd.DataFrame) -> alt.HConcatChart:
    """One panel per measure (own axis title, unit and format), groups coloured like the roles everywhere else in
    the app (Mafia vermillion, Doctor green, ...; the agent palette painted Mafia green and Doctor amber)."""
    groups = list(dict.fromkeys(df["group"]))
    order = list(dict.fromkeys([g for g in ("all", "Mafia", "non-Mafia", *ROLE_COLORS) if g in groups] + groups))
    colors = alt.Scale(domain=order, range=[AGGREGATE_COLOR if g in ("all", "non-Mafia") else role_color(g) for g in order])
    panels = []
    measures = [m for m in DYN_MEASURES if m in set(df["measure"])] + [m for m in dict.fromkeys(df["measure"]) if m not in DYN_MEASURES]
    for i, m in enumerate(measures):
        title, fmt = DYN_MEASURES.get(m, (m, ".3f"))
        sub = df[df["measure"] == m]
        base = alt.Chart(sub).encode(
            y=alt.Y("group:N", sort=order, title=None, scale=alt.Scale(domain=order), axis=alt.Axis() if i == 0 else None),
            color=alt.Color("group:N", legend=None, scale=colors))
        x = alt.X("value:Q", title=title, axis=alt.Axis(format=fmt))
        tip = ["group", alt.Tooltip("value:Q", format=".3f", title=m), alt.Tooltip("ci_lo:Q", format=".3f", title="95% low"),
               alt.Tooltip("ci_hi:Q", format=".3f", title="95% high"), alt.Tooltip("n:Q", title="n")]
        pts = base.mark_point(filled=True, size=70).encode(x=x, tooltip=tip)
        bars = base.mark_rule(strokeWidth=2).encode(x=alt.X("ci_lo:Q", title=title), x2="ci_hi:Q", tooltip=tip)
        # a height per row: a fixed pixel height squashes the rows once more groups come in
        panels.append((bars + pts).properties(width=240, height=alt.Step(24)))
    # natural size ("pad"): Streamlit's default "fit" does not apply to concatenated views
    return alt.hconcat(*panels, spacing=18).properties(autosize=alt.AutoSizeParams(type="pad", contains="padding"))


def dynamics(rep: dict[str, Any]) -> None:
    groups = ((rep.get("dynamics") or {}).get("groups")) or {}
    rows = []
    for grp, v in groups.items():
        for metric, r in (v or {}).items():
            if isinstance(r, dict) and "point" in r:
                ci = r.get("ci") or [None, None]
                rows.append({"group": grp, "measure": metric, "value": r.get("point"), "ci_lo": ci[0], "ci_hi": ci[1], "n": r.get("n")})
    df = pd.DataFrame(rows)
    if df.empty:
        st.info("No belief-dynamics data.")
        return
    ch = dynamics_chart(df)
    st.altair_chart(ch, key="db_dyn")
    st.caption("Suspicion volatility, top-suspect flip rate (death-forced flips excluded) and return rate, with 95% bootstrap intervals.")
    download_chart(ch, "belief_dynamics", key="ex_dyn")
    st.dataframe(df, hide_index=True, width="stretch")
    download_csv(df, "belief_dynamics", key="dl_dyn")


def matchups(out: dict[str, Any]) -> None:
    g = out.get("games")
    if g is None or g.empty:
        st.info("No games.")
        return
    done = g[g["completed"]]
    t = done.groupby(["mafia_models", "town_models"]).agg(
        games=("game_id", "size"), mafia_wins=("winner", lambda s: int((s == "Mafia").sum())),
        town_wins=("winner", lambda s: int((s == "Villagers").sum())), median_rounds=("rounds", "median")).reset_index()
    t = t.rename(columns={"mafia_models": "Mafia models", "town_models": "town models"})
    st.markdown("**Mafia models ⚔ town models** (completed root games)")
    st.dataframe(t, hide_index=True, width="stretch")
    download_csv(t, "matchups", key="dl_match")
