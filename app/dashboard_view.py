"""Cross-game dashboard blocks (numbers from analytics; this module only lays them out).

Charts come as stored Vega-Lite dicts (app/dashboard_figures.py): drawing the Dashboard imports
neither Altair nor the metric modules when its results are on disk."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from mafiascope.lexicon import glossary

from . import analysis as A
from . import bridge
from . import dashboard_figures as DF
from . import state as S
from .analysis_view import ci_text
from .index_progress import pct as _pct
from .index_progress import preview_tiles
from .data import analysed_models, models_of
from .text import md_escape, plural
from .widgets import dashes, download_chart, download_csv, shown


def __getattr__(name: str) -> Any:
    """The dashboard's chart builders (mafiascope.analytics.figures), imported on first use: Altair is not
    needed to draw the Dashboard from stored figures."""
    if name in ("dynamics_chart", "model_colors"):
        from mafiascope.analytics import figures

        return getattr(figures, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _show_chart(spec: dict[str, Any], key: str, stretch: bool = True) -> None:
    """Draw a stored Vega-Lite dict (Altair's ``to_dict(validate=False)`` of the figure's chart)."""
    if stretch:
        st.vega_lite_chart(spec=spec, width="stretch", key=key)
    else:
        st.vega_lite_chart(spec=spec, key=key)


def tiles(rep: dict[str, Any], sel: pd.DataFrame) -> None:
    o = rep.get("outcome") or {}
    p = rep.get("parse") or {}
    w = o.get("mafia_win_rate_wilson95") or [None, None]
    c = st.columns(6)
    c[0].metric("Games", f"{rep.get('n_games', 0):,}", help=f"Root games of the selection, {rep.get('n_games_probed') or 0:,} "
                "of them with probe answers (the probe-based figures count those)")
    c[1].metric("Mafia win rate", _pct(o.get("mafia_win_rate")),
                help=f"Wilson 95%: {_pct(w[0])}–{_pct(w[1])} over {o.get('completed', 0)} completed games")
    c[1].caption(f"95% CI {_pct(w[0])}–{_pct(w[1])}")
    lr = (o.get("game_length_rounds") or {})
    c[2].metric("Mean rounds", "–" if lr.get("mean") is None else f"{lr['mean']:.1f}", help=f"min {lr.get('min')}, max {lr.get('max')}")
    c[3].metric("Probe parse rate", _pct(p.get("parse_rate")), help=glossary.tip("parse rate") + f" {p.get('parsed', 0):,} of {p.get('calls', 0):,} probe "
                f"answers usable after repair; {p.get('repair_recovered', 0):,} needed repair")
    c[4].metric("Branches", int(sel["is_branch"].sum()) if len(sel) else 0, help="Forked games in the sidebar selection")
    used = sel[sel["game_id"].isin(set(rep.get("game_ids") or []))] if len(sel) else sel  # the games the figures use
    seated = models_of(used["models"]) if len(used) else []
    models = analysed_models(seated)
    c[5].metric("Models", len(models), help="Models seated in the games above: " + md_escape(", ".join(models))
                + (" (people who played a seat are not counted: human seats are not probed)" if len(models) < len(seated) else ""))


def build_progress(dirs: tuple[str, ...], sel: pd.DataFrame) -> None:
    """Before a cold analysis: parse the games the analytics cache lacks under a progress bar,
    with :func:`preview_tiles` meanwhile, instead of a blank page until every figure is ready."""
    if A.report_stored(dirs):  # figures on disk: nothing to parse before they show
        return
    n = bridge.pending(dirs)
    if not n:
        return
    box = st.empty()
    with box.container():
        st.caption(f"Preparing the analytics cache: {n:,} game{'s' if n != 1 else ''} to parse (once; later visits are quick).")
        preview_tiles(sel[sel["dir"].astype(str).isin(set(dirs))] if len(sel) else sel)
        bar = st.progress(0.0, text=f"Parsing games: 0 of {n:,}")
    bridge.prepare(dirs, lambda k, total: bar.progress(min(1.0, k / max(total, 1)), text=f"Parsing games: {k:,} of {total:,}"))
    box.empty()


F1_MORE = "db_f1_more"  # the F1 tab's expander of its table and downloads (drawn when open)


def f1_per_model(dirs: tuple[str, ...], rep: dict[str, Any]) -> None:
    """The F1 chart; its table and downloads in an expander whose content runs only while it is open: the first
    view of a fresh visit then loads neither the data grid's JavaScript nor six more elements (issue 17 item 4)."""
    fig = DF.figure(dirs, "f1")
    df = fig["table"]
    if df.empty:
        st.info("No first-order data.")
        return
    _show_chart(fig["spec"], "db_f1")
    st.caption(glossary.tip("F1", "chance"))
    more = st.expander("Table and downloads", key=F1_MORE, on_change="rerun")
    if more.open is False:  # the first view: no data grid (its JS chunk) and no export row until asked for
        return
    with more:
        download_chart(DF.chart_builder("f1", df, A.per_model(dirs)), "f1_by_round_per_model", key="ex_f1")
        st.dataframe(shown(df), hide_index=True, width="stretch")
        download_csv(df, "f1_by_round_per_model", key="dl_f1")


def calibration_per_model(dirs: tuple[str, ...]) -> None:
    fig = DF.figure(dirs, "calibration")
    if fig["spec"] is None:
        st.info("No calibration data.")
        return
    s = fig["table"]
    _show_chart(fig["spec"], "db_cal")
    st.caption(glossary.tip("F2", "ECE", "Brier"))
    download_chart(DF.chart_builder("calibration", s, A.per_model(dirs)), "calibration_per_model", key="ex_cal")
    st.dataframe(shown(s), hide_index=True, width="stretch",
                 column_config={"ECE": st.column_config.Column(help=glossary.tip("ECE")),
                                "Brier": st.column_config.Column(help=glossary.tip("Brier"))})
    download_csv(s, "calibration_per_model", key="dl_cal")


def f3_f4(rep: dict[str, Any]) -> None:
    from mafiascope.analytics.metric import MIN_VOTES, few_votes
    from mafiascope.analytics.metrics import marked

    f3 = rep.get("f3") or {}
    st.markdown("**F3 · second-order consistency** (τ = 50)", help=glossary.tip("F3", "tau", "spotlight ratio", "majority baseline"))
    rows = []
    for key, lab in (("canonical", "all predictors"), ("innocent_predictors", "town"), ("mafia_predictors", "Mafia")):
        r = f3.get(key) or {}
        rows.append({"predictors": lab, "pairs": r.get("n"), "over-prediction ratio": ci_text(r.get("suspects_ratio"), r.get("ratio_ci95"), "{:.2f}"),
                     "accuracy": ci_text(r.get("accuracy"), r.get("acc_ci95"), "{:.2f}"),
                     "vs majority": ci_text(r.get("diff"), r.get("diff_ci95"), "{:+.2f}")})
    t = pd.DataFrame(rows)
    st.dataframe(t, hide_index=True, width="stretch")
    download_csv(t, "f3_summary", key="dl_f3")
    st.markdown("**F4 · belief–vote coupling** (pre-vote rule; rate [95% CI] vs chance)",
                help=glossary.tip("F4", "top-1", "committed set", "post-vote", "chance"))
    rows = []
    for side, v in (rep.get("f4") or {}).items():
        if not isinstance(v, dict):
            continue
        for metric, r in v.items():
            if isinstance(r, dict) and "rate" in r:
                fr = few_votes(r.get("n"))
                rows.append({"voters": side, "measure": metric, "k": r.get("k"), "n": r.get("n"),
                             "rate": marked(ci_text(r.get("rate"), r.get("ci95"), "{:.2f}"), fr), "chance": r.get("chance"),
                             "fragile": fr})
    t4 = pd.DataFrame(rows)
    st.dataframe(dashes(t4, 2), hide_index=True, width="stretch")
    st.caption(f"† fragile: fewer than {MIN_VOTES} counted votes.")
    download_csv(t4, "f4_summary", key="dl_f4")


def dynamics(dirs: tuple[str, ...]) -> None:
    fig = DF.figure(dirs, "dynamics")
    df = fig["table"]
    if df.empty:
        st.info("No belief-dynamics data.")
        return
    _show_chart(fig["spec"], "db_dyn", stretch=False)
    st.caption("Suspicion volatility, top-suspect flip rate (death-forced flips excluded) and return rate, with 95% bootstrap "
               "intervals.", help=glossary.tip("volatility", "flip rate", "return rate"))
    download_chart(DF.chart_builder("dynamics", df), "belief_dynamics", key="ex_dyn")
    st.dataframe(shown(df), hide_index=True, width="stretch")
    download_csv(df, "belief_dynamics", key="dl_dyn")


def compare_view(dirs: tuple[str, ...]) -> None:
    """Two models side by side on every seat-level metric, with the difference and its interval."""
    from mafiascope.analytics.comparison_text import design_text, self_play_text
    from mafiascope.analytics.metric import FRAGILE_NOTE, Place
    from mafiascope.analytics.metrics import better, marked, rows_at
    from mafiascope.analytics.pvalues import format_p

    models = analysed_models(A.seat_models(dirs))
    if len(models) < 2:
        st.info("The analysed games seat a single model: nothing to compare.")
        return
    c1, c2 = st.columns(2)
    S.url_choice("a", models, "db_cmp_a")  # ?a=&b= reproduce the picks (app/state.url_choice)
    a = c1.selectbox("Model A", models, key="db_cmp_a")
    S.url_choice("b", [m for m in models if m != a], "db_cmp_b")
    b = c2.selectbox("Model B", [m for m in models if m != a], key="db_cmp_b")
    S.sync_url(a=a, b=b)
    S.report_url_errors()
    res = A.compare(dirs, a, b)
    fig = DF.figure(dirs, "compare", a, b)
    note = self_play_text(res)
    st.caption(f"{plural(res['games_shared'], 'game')} seat{'s' if res['games_shared'] == 1 else ''} both · {plural(res['seats_a'], 'seat')} of A, {res['seats_b']:,} of B · "
               f"**{md_escape(design_text(res))}**. Each row belongs to the seat that produced it; p: two-sided, from "
               f"the bootstrap standard error (t, games − 1 df); Holm p: adjusted over {md_escape(res['p_holm_family']['text'])} "
               f"(n/a: not testable). {md_escape(FRAGILE_NOTE)}." + (f" The {md_escape(note)}." if note else ""))
    df = fig["table"]
    df = df[df["metric"].isin([r["metric"] for r in rows_at(df.to_dict("records"), Place.DASHBOARD)])]
    frag = {r["metric"]: r for r in res["rows"]}
    show = pd.DataFrame({
        "metric": df["label"], "better": [better(m) for m in df["metric"]],
        **{name: [marked(f"{v:.3f}", frag.get(m, {}).get(f"fragile_{k}")) if v == v and v is not None else None
                  for v, m in zip(df[k], df["metric"])] for name, k in ((a, "a"), (b, "b"))},
        "A − B [95% CI]": [ci_text(d if d == d else None, [lo, hi] if lo is not None and lo == lo else None, "{:+.3f}")
                           for d, lo, hi in zip(df["diff"], df["diff_lo"], df["diff_hi"])],
        "p": [format_p(x, "n/a") if d == d else "–" for x, d in zip(df["p"], df["diff"])],
        f"Holm p ({res['p_holm_family']['size']} metrics)": [format_p(x) for x in df["p_holm"]],
        "n A": df["n_a"], "n B": df["n_b"]})
    holm = f"Holm p ({res['p_holm_family']['size']} metrics)"
    st.dataframe(dashes(show), hide_index=True, width="stretch",
                 column_config={"A − B [95% CI]": st.column_config.Column(help=glossary.tip("95% CI")),
                                "p": st.column_config.Column(help=glossary.tip("p")),
                                holm: st.column_config.Column(help=glossary.tip("Holm p"))})
    download_csv(df, f"compare_{a}_vs_{b}", key="dl_cmp")
    if fig["spec"] is not None:
        _show_chart(fig["spec"], "db_cmp_chart", stretch=False)
        download_chart(DF.chart_builder("compare", df, None, a, b), f"compare_{a}_vs_{b}", key="ex_cmp")


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
    st.dataframe(shown(t), hide_index=True, width="stretch")
    download_csv(t, "matchups", key="dl_match")
