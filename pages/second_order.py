"""Second-Order: do agents know how others see them? (F3, the over-prediction of suspicion)."""

from app.frame import page_guard

page_guard()

import altair as alt
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import analysis as A
from app import analysis_view as AV
from app import state as S
from app import widgets as W
from app.sidebar import context
from app.text import plural
from mafiascope.lexicon import glossary

dirs = AV.page_intro("Second-order beliefs",
                     "A pair = agent A's stated belief about how B sees A (social_map.toward_me) matched with B's latest role "
                     "assessment of A, turned into an attitude with the confidence threshold τ. Mafia–Mafia pairs are excluded.")
tau = st.slider("Confidence threshold τ (%)", 30, 70, 50, step=5, key="tau", bind="query-params",  # ?tau= reproduces it
                help=glossary.tip("tau"))
pairs = A.f3_pairs(dirs, tau)  # first: the F3 summary then reuses these memoised pairs instead of matching again
res = A.f3(dirs, tau)
if not res.get("m"):
    st.info("No probed games in the selection.")
    st.stop()

if not (res.get("canonical") or {}).get("n"):
    st.info(f"No second-order pairs in the {plural(res['m'], 'probed game')} of this selection. A pair needs an agent's "
            "social_map answer (toward_me) and the counterpart's role_assessment; batteries without them (the "
            "suspicion-only ten-seat configs) contribute none. Widen the selection in the sidebar.", icon="👈")
    st.stop()

rows = []
for key, lab in (("canonical", "all predictors"), ("innocent_predictors", "town predictors"), ("mafia_predictors", "Mafia predictors")):
    r = res.get(key) or {}
    rows.append({"predictors": lab, "pairs": r.get("n"), "over-prediction ratio": r.get("suspects_ratio"),
                 "ratio CI95": AV.ci_range(r.get("ratio_ci95"), "{:.2f}"), "accuracy": r.get("accuracy"),
                 "accuracy CI95": AV.ci_range(r.get("acc_ci95"), "{:.2f}"),
                 "majority baseline": r.get("majority_baseline"), "majority class": r.get("majority_class"),
                 "accuracy − baseline": r.get("diff"), "diff CI95": AV.ci_range(r.get("diff_ci95"), "{:+.2f}")})
can = res.get("canonical") or {}
c1, c2, c3 = st.columns(3)
AV.metric_ci(c1, "Over-prediction ratio", can.get("suspects_ratio"), can.get("ratio_ci95"), "{:.2f}", games=res["m"],
             help=glossary.tip("spotlight ratio"))
AV.metric_ci(c2, "Accuracy", can.get("accuracy"), can.get("acc_ci95"), "{:.2f}", games=res["m"])
AV.metric_ci(c3, "vs majority baseline", can.get("diff"), can.get("diff_ci95"), "{:+.2f}", games=res["m"],
             help=glossary.tip("majority baseline") + f" Here the most common actual attitude is {can.get('majority_class')}.")
tbl = pd.DataFrame(rows)
# on screen each figure beside its interval (ten columns ran past the page's edge); the CSV keeps them apart
shown_tbl = pd.DataFrame([{
    "predictors": r["predictors"], "pairs": r["pairs"],
    "over-prediction ratio [95% CI]": AV.ci_text(x.get("suspects_ratio"), x.get("ratio_ci95"), "{:.2f}"),
    "accuracy [95% CI]": AV.ci_text(x.get("accuracy"), x.get("acc_ci95"), "{:.2f}"),
    "majority baseline": "–" if x.get("majority_baseline") is None else f"{x['majority_baseline']:.2f} ({x.get('majority_class')})",
    "accuracy − baseline [95% CI]": AV.ci_text(x.get("diff"), x.get("diff_ci95"), "{:+.2f}")}
    for r, x in zip(rows, (res.get(k) or {} for k in ("canonical", "innocent_predictors", "mafia_predictors")))])
st.dataframe(shown_tbl, hide_index=True, width="stretch", column_config={
    "over-prediction ratio [95% CI]": st.column_config.Column(help=glossary.tip("spotlight ratio")),
    "majority baseline": st.column_config.Column(help=glossary.tip("majority baseline"))})
W.download_csv(tbl, f"second_order_tau{tau}", key="dl_so")

st.markdown("#### Predicted × actual attitude")
split = st.radio("Predictor's true side", ["all", "town", "Mafia"], horizontal=True, key="side", bind="query-params")
from mafiascope.logs.schema import MAFIA_ROLES  # noqa: E402

sub = pairs
if split == "town":
    sub = pairs[~pairs["predictor_role"].isin(MAFIA_ROLES)]
elif split == "Mafia":
    sub = pairs[pairs["predictor_role"].isin(MAFIA_ROLES)]
order = ["trusts", "neutral", "suspects"]
mat = (sub.groupby(["predicted", "actual"]).size().rename("n").reset_index()) if len(sub) else pd.DataFrame(columns=["predicted", "actual", "n"])
mat = AV.with_cell_colours(mat, "n")
heat = alt.Chart(mat).mark_rect().encode(
    x=alt.X("actual:N", sort=order, title="actual (B's assessment of A)", axis=alt.Axis(labelAngle=0)),
    y=alt.Y("predicted:N", sort=order, title="predicted by A"),
    color=alt.Color("fill:N", scale=None, legend=None), tooltip=["predicted", "actual", "n"])
# the count's colour follows its cell's luminance (black on the darkest orange was unreadable)
txt = alt.Chart(mat).mark_text(fontSize=14).encode(x=alt.X("actual:N", sort=order), y=alt.Y("predicted:N", sort=order), text="n:Q",
                                                   color=alt.Color("ink:N", scale=None, legend=None))
mc1, mc2 = st.columns([1, 1])
with mc1:
    ch = (heat + txt).properties(height=260)
    st.altair_chart(ch, width="stretch", key="so_heat")
    W.download_chart(ch, f"second_order_matrix_tau{tau}", key="ex_so")
with mc2:
    st.markdown("**Drill down** — filter the pairs, then open one in Impersonate")
    # bound to the URL (?predicted=suspects&actual=trusts&mismatches=true): a link reproduces the drill-down
    f_pred = st.multiselect("predicted", order, key="predicted", bind="query-params")
    f_act = st.multiselect("actual", order, key="actual", bind="query-params")
    only_bad = st.toggle("mismatches only", False, key="mismatches", bind="query-params")
view = sub
if f_pred:
    view = view[view["predicted"].isin(f_pred)]
if f_act:
    view = view[view["actual"].isin(f_act)]
if only_bad:
    view = view[~view["match"]]
view = view.reset_index(drop=True)
view = view.assign(open=["impersonate?" + urlencode({"game": g, "step": s, "agent": a}) for g, s, a in zip(view["game_id"], view["step"], view["predictor"])])
st.caption(f"{plural(len(view), 'pair')} · click a row to open that agent's Impersonate view at the step, or use the link column")
ev = st.dataframe(view, hide_index=True, width="stretch", height=360, on_select="rerun", selection_mode="single-row", key="so_pairs",
                  # the link first and the step instead of its round and message number: every column fits the page
                  column_order=["open", "game_id", "step", "predictor", "predictor_role", "about", "about_role", "predicted",
                                "actual", "their_guess_conf", "match"],
                  column_config={"open": st.column_config.LinkColumn("open", display_text="Impersonate ↗"),
                                 "game_id": st.column_config.TextColumn("game", width="small"),
                                 "predictor_role": "predictor's role", "about_role": st.column_config.TextColumn(
                                     "their role", help="the true role of the player the prediction is about"),
                                 "their_guess_conf": st.column_config.NumberColumn(
                                     "their confidence", help="How sure that player's own guess about the predictor was "
                                     "(0-100); below τ its attitude counts as neutral."),
                                 "seq": "message", "match": st.column_config.CheckboxColumn(
                                     "match", help="The predicted attitude is the counterpart's actual one.")})
W.download_csv(view.drop(columns=["open"]), f"second_order_pairs_tau{tau}", key="dl_so_pairs")
sel = getattr(getattr(ev, "selection", None), "rows", None) or []
if sel:
    r = view.iloc[sel[0]]
    st.switch_page("pages/impersonate.py", query_params={"game": r["game_id"], "step": r["step"], "agent": r["predictor"]})
S.sync_url(game=context().game["game_id"] if context().game is not None else None)
