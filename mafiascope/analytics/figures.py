"""The corpus figures as Altair charts built from report data (no Streamlit): the Cross-Game
Dashboard draws these very charts and ``mafiascope report`` saves them as SVG and PNG
(vl-convert: Vega's own renderer, no browser).

Frames first (``*_frame``: report dict -> tidy DataFrame, also written as CSV), then chart
builders (DataFrame -> ``alt.Chart``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from .metric import Direction
from .metrics import statistics
from .pvalues import format_p
from .stats import round_or_none, wilson

ROLE_COLORS = {  # Okabe-Ito (colour-blind safe); app/palette.py re-exports these
    "Mafia": "#D55E00",
    "Don": "#8F3F00",
    "Doctor": "#009E73",
    "Sheriff": "#CC79A7",
    "Villager": "#56B4E9",
    "Unknown": "#8A8F98",
}
AGENT_PALETTE = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000",
                 "#999933", "#882255", "#44AA99", "#117733"]
CI_COLOR = "#8a8f98"  # interval whiskers: a mid grey reads on the light and the dark theme
AGGREGATE_COLOR = "#6e7681"  # "all" / "non-Mafia" are not roles: neutral grey
BIN_ORDER = ["0-19", "20-39", "40-59", "60-79", "80-99"]
DYN_MEASURES = {  # measure -> (axis title with its unit, tick format)
    "volatility": ("suspicion volatility (mean L1 shift, 0–2)", ".2f"),
    "flip_rate": ("top-suspect flip rate", "%"),
    "return_rate": ("return rate", "%"),
}


# models: ten colours, any two at least 16 degrees of hue or 20 points of lightness (CIE L*) apart, none grey, none
# too dark for the dark theme. The agent palette (Okabe-Ito) has an orange and a vermillion (15 degrees, 16 L*) that
# looked alike for two models side by side.
MODEL_PALETTE = ["#4E79A7", "#F28E2B", "#59A14F", "#E15759", "#8E6BB8", "#2CA6A4", "#EDC948", "#D45FB0", "#8A5A3C",
                 "#7FC7E8"]


def model_color_map(models: Any) -> dict[str, str]:
    """A colour per model, stable per model: each name has a preferred slot (a hash of the name), taken in sorted
    order, a taken slot passing to the next free one; so a model keeps its colour when others join or leave the
    selection (unless two collide), and no two of up to ten models share one."""
    import zlib

    dom = sorted({str(m) for m in models})
    n = len(MODEL_PALETTE)
    taken: dict[int, str] = {}
    out: dict[str, str] = {}
    for m in dom:
        slot = zlib.crc32(m.encode("utf-8")) % n
        if len(taken) < n:
            while slot in taken:
                slot = (slot + 1) % n
            taken[slot] = m
        out[m] = MODEL_PALETTE[slot]
    return out


def model_colors(models: Any) -> alt.Scale:
    """One model -> colour mapping for every per-model chart: the domain is all models (sorted), so a
    model keeps its colour across charts whichever have data for it."""
    cmap = model_color_map(models)
    dom = list(cmap)
    return alt.Scale(domain=dom, range=[cmap[m] for m in dom] or MODEL_PALETTE[:1])


# ----------------------------------------------------------------------------- frames


def f1_frame(per_model: dict[str, Any]) -> pd.DataFrame:
    """Per model and round: accuracy with its interval, n, chance, Mafia recall, Unknown rate."""
    rows = []
    for mdl, v in per_model.items():
        for rnd, r in (v.get("f1_by_round") or {}).items():
            ci = r.get("acc_ci95") or [None, None]
            rows.append({"model": mdl, "round": int(rnd), "accuracy": r.get("acc"), "ci_lo": ci[0], "ci_hi": ci[1],
                         "n": r.get("acc_n"), "chance": r.get("acc_chance"), "mafia_recall": r.get("recall"),
                         "unknown_rate": r.get("unk")})
    return pd.DataFrame(rows, columns=["model", "round", "accuracy", "ci_lo", "ci_hi", "n", "chance", "mafia_recall",
                                       "unknown_rate"])


def calibration_frames(per_model: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(bins: model, bin, n, accuracy with its 95% Wilson interval (guesses as independent), mean_conf, dim;
    summary: model, games, guesses, ECE/Brier with intervals)."""
    rows, summ = [], []
    for mdl, v in per_model.items():
        f2 = v.get("f2") or {}
        e_ci, b_ci = f2.get("ece_ci95") or [None, None], f2.get("brier_ci95") or [None, None]
        summ.append({"model": mdl, "games": v.get("games"), "guesses": f2.get("n"), "ECE": f2.get("ece"),
                     "ECE_lo": e_ci[0], "ECE_hi": e_ci[1], "Brier": f2.get("brier"), "Brier_lo": b_ci[0], "Brier_hi": b_ci[1]})
        for b, e in (f2.get("bins") or {}).items():
            n, acc = e.get("n") or 0, e.get("acc")
            lo, hi = wilson(acc * n, n) if acc is not None and n else (None, None)
            rows.append({"model": mdl, "bin": b, "n": e.get("n"), "accuracy": acc, "wilson_lo": round_or_none(lo),
                         "wilson_hi": round_or_none(hi), "mean_conf": e.get("mean_conf"), "dim": n < 10})
    return (pd.DataFrame(rows, columns=["model", "bin", "n", "accuracy", "wilson_lo", "wilson_hi", "mean_conf", "dim"]),
            pd.DataFrame(summ, columns=["model", "games", "guesses", "ECE", "ECE_lo", "ECE_hi", "Brier", "Brier_lo", "Brier_hi"]))


def dynamics_frame(rep: dict[str, Any]) -> pd.DataFrame:
    groups = ((rep.get("dynamics") or {}).get("groups")) or {}
    rows = []
    for grp, v in groups.items():
        for metric, r in (v or {}).items():
            if isinstance(r, dict) and "point" in r:
                ci = r.get("ci") or [None, None]
                rows.append({"group": grp, "measure": metric, "value": r.get("point"), "ci_lo": ci[0], "ci_hi": ci[1],
                             "n": r.get("n")})
    return pd.DataFrame(rows, columns=["group", "measure", "value", "ci_lo", "ci_hi", "n"])


def metrics_frame(by_model: dict[str, Any]) -> pd.DataFrame:
    """Long table: model, metric, value, ci_lo, ci_hi, n, games, fragile (from ``by_model``'s seat-level metrics;
    ``fragile``: why the figure is too thin to read, else empty)."""
    rows = []
    for mdl, e in by_model.items():
        for key, x in (e.get("metrics") or {}).items():
            ci = x.get("ci95") or [None, None]
            rows.append({"model": mdl, "metric": key, "value": x.get("point"), "ci_lo": ci[0], "ci_hi": ci[1],
                         "n": x.get("n"), "games": x.get("games"), "fragile": x.get("fragile")})
    return pd.DataFrame(rows, columns=["model", "metric", "value", "ci_lo", "ci_hi", "n", "games", "fragile"])


def model_role_frame(by_model_role: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for mdl, roles in by_model_role.items():
        for role, e in roles.items():
            for key, x in (e.get("metrics") or {}).items():
                ci = x.get("ci95") or [None, None]
                rows.append({"model": mdl, "role": role, "seats": e.get("seats"), "metric": key, "value": x.get("point"),
                             "ci_lo": ci[0], "ci_hi": ci[1], "n": x.get("n"), "fragile": x.get("fragile")})
    return pd.DataFrame(rows, columns=["model", "role", "seats", "metric", "value", "ci_lo", "ci_hi", "n", "fragile"])


def comparison_frame(cmps: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (model pair, metric): a, b, diff with its interval, p and Holm-adjusted p, each
    adjusted p beside the size of its Holm family (``holm_family_size``: the pair's metrics with a p;
    ``holm_all_family_size``: every test of every pair, present only for a report's comparisons)."""
    rows = []
    for cmp in cmps:
        fam = (cmp.get("p_holm_family") or {}).get("size")
        fam_all = (cmp.get("p_holm_all_family") or {}).get("size")
        for r in cmp["rows"]:
            ci = r.get("diff_ci95") or [None, None]
            rows.append({"model_a": cmp["a"], "model_b": cmp["b"], "metric": r["metric"], "label": r["label"],
                         "a": r["a"], "b": r["b"], "n_a": r["n_a"], "n_b": r["n_b"], "diff": r["diff"],
                         "diff_lo": ci[0], "diff_hi": ci[1], "p": r["p"], "p_holm": r["p_holm"],
                         "holm_family_size": fam, "p_holm_all": r.get("p_holm_all"), "holm_all_family_size": fam_all})
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


CUSTOM_COLUMNS = ["field", "kind", "model", "answer", "count", "share", "n", "mean", "mean_chars"]


def custom_frame(cp: dict[str, Any]) -> pd.DataFrame:
    """One custom probe's fields per model (``custom_probes.<id>``): a categorical field's answer counts and
    shares, a numeric field's mean, a free-text field's answer count and mean length; ``n`` is the model's
    answers to the field (answers a bot marked not meaningful are not among them)."""
    rows: list[dict[str, Any]] = []
    for field, e in (cp.get("fields") or {}).items():
        kind = e.get("kind")
        if kind == "numeric":
            for mdl, mean in (e.get("mean_by_model") or {}).items():
                rows.append({"field": field, "kind": kind, "model": mdl, "n": (e.get("n_by_model") or {}).get(mdl),
                             "mean": mean})
        elif kind == "text":
            for mdl, x in (e.get("by_model") or {}).items():
                rows.append({"field": field, "kind": kind, "model": mdl, "n": x.get("n"), "mean_chars": x.get("mean_chars")})
        else:
            for mdl, counts in (e.get("by_model") or {}).items():
                total = sum(counts.values())
                for answer, k in counts.items():
                    rows.append({"field": field, "kind": kind, "model": mdl, "answer": answer, "count": int(k),
                                 "share": round(k / total, 6) if total else None, "n": total})
    df = pd.DataFrame(rows, columns=CUSTOM_COLUMNS)
    for col in ("count", "n"):
        df[col] = df[col].astype("Int64")
    return df


COMPARISON_COLUMNS = ["model_a", "model_b", "metric", "label", "a", "b", "n_a", "n_b", "diff", "diff_lo", "diff_hi", "p",
                      "p_holm", "holm_family_size", "p_holm_all", "holm_all_family_size"]
P_COLUMNS = ("p", "p_holm", "p_holm_all")


# ----------------------------------------------------------------------------- charts


def f1_per_model_chart(df: pd.DataFrame, models: Any = None) -> alt.LayerChart:
    """Committed accuracy per round and model with interval whiskers; dashed: permutation chance."""
    df = df.copy()
    df[["ci_lo", "ci_hi"]] = df[["ci_lo", "ci_hi"]].clip(0.0, 1.0)  # an accuracy interval ends at 0 % and 100 %
    models = sorted(df["model"].unique()) if models is None else sorted({str(m) for m in models})
    colors = model_colors(models)
    # models side by side within a round, so their interval whiskers do not hide each other
    step = min(0.08, 0.6 / max(1, len(models)))
    offset = {m: (i - (len(models) - 1) / 2) * step for i, m in enumerate(models)}
    df["x"] = df["round"] + df["model"].map(offset)
    rounds = sorted(df["round"].unique().tolist()) or [0]
    x_axis = alt.X("x:Q", title="round", scale=alt.Scale(domain=[rounds[0] - 0.5, rounds[-1] + 0.5], nice=False),
                   axis=alt.Axis(values=rounds, format="d", grid=False))
    base = alt.Chart(df).encode(x=x_axis, color=alt.Color("model:N", scale=colors))
    band = base.mark_rule(strokeWidth=2, opacity=0.7).encode(  # an accuracy axis runs from 0 % to 100 %, never beyond
        y=alt.Y("ci_lo:Q", title="first-order accuracy", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1], nice=False)),
        y2="ci_hi:Q")
    line = base.mark_line(point=True).encode(y="accuracy:Q", tooltip=["model", "round", alt.Tooltip("accuracy:Q", format=".1%"),
                                                                       "n:Q", alt.Tooltip("chance:Q", format=".1%")])
    chance = base.mark_line(strokeDash=[3, 3], opacity=0.6).encode(y="chance:Q")
    return (band + line + chance).properties(height=300, title="Committed accuracy per round (dashed: permutation chance)")


def calibration_per_model_chart(df: pd.DataFrame, models: Any = None, width: int = 180) -> alt.FacetChart:
    """A reliability diagram per model: accuracy against the bin's mean stated confidence, with its 95% Wilson
    interval and the bin's n written above it; the diagonal is perfect calibration; faded: n < 10."""
    df = df.copy()
    scale = model_colors(df["model"].unique() if models is None else models)
    df["conf"] = pd.to_numeric(df["mean_conf"], errors="coerce") / 100.0
    df["n_text"] = [f"n={int(n)}" if n == n else "" for n in df["n"]]
    tip = ["model", "bin", alt.Tooltip("n:Q", title="n (guesses)"), alt.Tooltip("accuracy:Q", format=".1%"),
           alt.Tooltip("wilson_lo:Q", format=".1%", title="95% Wilson low"),
           alt.Tooltip("wilson_hi:Q", format=".1%", title="95% Wilson high"),
           alt.Tooltip("mean_conf:Q", format=".1f", title="mean stated confidence (%)")]
    unit = alt.Scale(domain=[0, 1], nice=False)
    x = alt.X("conf:Q", title="mean stated confidence", scale=unit, axis=alt.Axis(format="%", tickCount=5))
    base = alt.Chart(df).encode(x=x, color=alt.Color("model:N", scale=scale, legend=None), tooltip=tip)
    diagonal = base.mark_rule(strokeDash=[3, 3], color=CI_COLOR).encode(
        x=alt.datum(0.0), y=alt.datum(0.0), x2=alt.datum(1.0), y2=alt.datum(1.0), color=alt.value(CI_COLOR))
    whisk = base.mark_rule(strokeWidth=1.5).encode(
        y=alt.Y("wilson_lo:Q", title="accuracy", scale=unit, axis=alt.Axis(format="%", tickCount=5)), y2="wilson_hi:Q",
        opacity=alt.condition("datum.dim", alt.value(0.35), alt.value(0.9)))
    pts = base.mark_point(filled=True, size=36).encode(y="accuracy:Q", opacity=alt.condition("datum.dim", alt.value(0.35),
                                                                                             alt.value(1.0)))
    counts = base.mark_text(dy=-7, fontSize=7).encode(y="wilson_hi:Q", text="n_text:N", color=alt.value("#444444"))
    n_models = max(1, df["model"].nunique())
    return alt.layer(diagonal, whisk, pts, counts).properties(width=width, height=width).facet(
        facet=alt.Facet("model:N", title=None, header=alt.Header(labelLimit=width, labelFontSize=9)),
        columns=min(3, n_models)).properties(title="Calibration per model (95% Wilson intervals, n per bin; dashed: "
                                                  "perfect calibration; faded: n < 10)")


def dynamics_chart(df: pd.DataFrame) -> alt.HConcatChart:
    """One panel per measure (own axis title, unit and format), groups coloured like the roles."""
    groups = list(dict.fromkeys(df["group"]))
    order = list(dict.fromkeys([g for g in ("all", "Mafia", "non-Mafia", *ROLE_COLORS) if g in groups] + groups))
    colors = alt.Scale(domain=order, range=[AGGREGATE_COLOR if g in ("all", "non-Mafia")
                                            else ROLE_COLORS.get(g, ROLE_COLORS["Unknown"]) for g in order])
    panels = []
    measures = [m for m in DYN_MEASURES if m in set(df["measure"])] + [m for m in dict.fromkeys(df["measure"]) if m not in DYN_MEASURES]
    for i, m in enumerate(measures):
        title, fmt = DYN_MEASURES.get(m, (m, ".3f"))
        sub = df[df["measure"] == m]
        if fmt == "%":  # a rate's interval ends at 0 % and 100 %
            sub = sub.assign(ci_lo=sub["ci_lo"].clip(0.0, 1.0), ci_hi=sub["ci_hi"].clip(0.0, 1.0))
        base = alt.Chart(sub).encode(
            y=alt.Y("group:N", sort=order, title=None, scale=alt.Scale(domain=order), axis=alt.Axis() if i == 0 else None),
            color=alt.Color("group:N", legend=None, scale=colors))
        x = alt.X("value:Q", title=title, axis=alt.Axis(format=fmt))
        tip = ["group", alt.Tooltip("value:Q", format=".3f", title=m), alt.Tooltip("ci_lo:Q", format=".3f", title="95% low"),
               alt.Tooltip("ci_hi:Q", format=".3f", title="95% high"), alt.Tooltip("n:Q", title="n")]
        pts = base.mark_point(filled=True, size=70).encode(x=x, tooltip=tip)
        bars = base.mark_rule(strokeWidth=2).encode(x=alt.X("ci_lo:Q", title=title), x2="ci_hi:Q", tooltip=tip)
        panels.append((bars + pts).properties(width=240, height=alt.Step(24)))
    return alt.hconcat(*panels, spacing=18).properties(autosize=alt.AutoSizeParams(type="pad", contains="padding"))


BETTER = {Direction.HIGHER: "higher better", Direction.LOWER: "lower better", Direction.NEUTRAL: ""}


def comparison_chart(df: pd.DataFrame, a: str, b: str, width: int = 420) -> alt.VConcatChart:
    """Forest plot of ``a - b`` per metric with its 95% cluster-bootstrap interval; filled: Holm p < 0.05
    (Holm over the pair's metrics: the family size is in the title). Each label says which way is better (the
    registry's direction) and the point's colour which model the difference favours.
    Rates and the unbounded metrics (ratio, trait errors) get separate panels with their own axes."""
    df = df[df["diff"].notna()].copy()
    df["significant"] = df["p_holm"].fillna(1.0) < 0.05
    ways = {st.key: st.direction for _, st in statistics()}
    way = [ways.get(k, Direction.NEUTRAL) for k in df["metric"]]
    df["label"] = [f"{lab} ({BETTER[w]})" if BETTER[w] else lab for lab, w in zip(df["label"], way)]
    sign = [(1 if w == Direction.HIGHER else -1 if w == Direction.LOWER else 0) * (1 if d > 0 else -1 if d < 0 else 0)
            for w, d in zip(way, df["diff"])]
    df["favours"] = [f"favours {a}" if x > 0 else f"favours {b}" if x < 0 else
                     ("no better direction" if w == Direction.NEUTRAL else "no difference") for x, w in zip(sign, way)]
    for col in P_COLUMNS:
        if col in df:
            df[f"{col}_text"] = [format_p(x) for x in df[col]]
    family = df["holm_family_size"].dropna() if "holm_family_size" in df else pd.Series(dtype=float)
    holm_title = f"Holm p ({int(family.iloc[0])} metrics)" if len(family) else "Holm p"
    tip = ["label", alt.Tooltip("a:Q", format=".3f", title=a), alt.Tooltip("b:Q", format=".3f", title=b),
           alt.Tooltip("diff:Q", format="+.3f"), alt.Tooltip("diff_lo:Q", format="+.3f", title="95% low"),
           alt.Tooltip("diff_hi:Q", format="+.3f", title="95% high"), alt.Tooltip("p_text:N", title="p"),
           alt.Tooltip("p_holm_text:N", title=holm_title)]
    order = [f"favours {a}", f"favours {b}", "no better direction", "no difference"]
    favours = alt.Scale(domain=order, range=[AGENT_PALETTE[4], AGENT_PALETTE[5], AGGREGATE_COLOR, "#bbbbbb"])
    panels = []
    unbounded = [st.key for _, st in statistics() if not st.format.bounded]  # not on a 0-1 scale
    for name, sub in (("rates", df[~df["metric"].isin(unbounded)]), ("ratio and trait errors", df[df["metric"].isin(unbounded)])):
        if sub.empty:
            continue
        # the metrics' names in full (Vega-Lite cuts axis labels at 180 px: "F1 committed acc…")
        base = alt.Chart(sub).encode(y=alt.Y("label:N", sort=sub["label"].tolist(), title=None, axis=alt.Axis(labelLimit=400)))
        whisk = base.mark_rule(strokeWidth=2, color=CI_COLOR).encode(
            x=alt.X("diff_lo:Q", title=f"{a} − {b} ({name})"), x2="diff_hi:Q", tooltip=tip)
        pts = base.mark_point(size=70, filled=False, strokeWidth=2).encode(
            x="diff:Q", color=alt.Color("favours:N", scale=favours, title=None, legend=alt.Legend(orient="bottom")),
            fill=alt.condition("datum.significant", alt.Color("favours:N", scale=favours, legend=None), alt.value("white")),
            tooltip=tip)
        zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(strokeDash=[4, 4], color="#888888").encode(x="x:Q")
        panels.append((whisk + pts + zero).properties(width=width, height=alt.Step(18)))
    if not panels:
        panels.append(alt.Chart(pd.DataFrame({"t": ["no metric with data for both models"]})).mark_text().encode(text="t:N"))
    over = f" over the pair's {int(family.iloc[0])} metrics" if len(family) else ""
    return alt.vconcat(*panels, spacing=14).properties(
        title=f"{a} − {b} per metric (95% cluster-bootstrap CI; filled: Holm p < 0.05{over})")


# ----------------------------------------------------------------------------- export


def chart_svg(chart: alt.TopLevelMixin) -> str:
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart.to_dict())


def chart_png(chart: alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart.to_dict(), scale=scale)


FIGURE_FORMATS = (".svg", ".png", ".pdf")


def save_chart(chart: alt.TopLevelMixin, base: Path) -> list[Path]:
    """Write ``base.svg``, ``base.png`` (2x) and ``base.pdf`` (vector, fonts embedded) from one rendering of
    the chart (vl-convert draws the SVG once and converts it); returns the paths."""
    import vl_convert as vlc

    svg = chart_svg(chart)
    paths = [base.parent / (base.name + x) for x in FIGURE_FORMATS]
    paths[0].write_text(svg, encoding="utf-8")
    paths[1].write_bytes(vlc.svg_to_png(svg, scale=2.0))
    paths[2].write_bytes(vlc.svg_to_pdf(svg))
    return paths
