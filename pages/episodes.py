"""Suspicion Episodes: collective shifts of the agents' top suspects between discussion steps."""

from app.frame import page_guard

page_guard()

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import analysis as A
from app import analysis_view as AV
from app import widgets as W
from app.sidebar import context
from app.text import md_escape
from mafiascope.lexicon import glossary

dirs = AV.page_intro("Suspicion episodes",
                     "Between consecutive discussion steps with the same living roster, q(j) = share of agents whose top "
                     "suspect is j. D = total-variation distance between the two distributions, K = agents whose top suspect "
                     "changed. Candidates are ranked by D, then K.")
gap = st.slider("Merge candidates at most this many messages apart into one window", 0, 6, 2, key="gap", bind="query-params")
res = A.episodes(dirs, gap)
cands = res.get("candidates") or []
c1, c2, c3, c4 = st.columns(4)
c1.metric("Comparisons", res.get("comparisons", 0), help="Consecutive discussion-step pairs in one round")
c2.metric("Complete", res.get("complete", 0), help="Same roster and every living agent has one unique top suspect at both steps")
c3.metric("Shifts (D > 0)", res.get("d_positive", 0))
c4.metric("Windows", len(res.get("windows") or []))
if not cands:
    st.info(AV.no_episodes_reason(res, len(dirs)), icon="🔎")
    st.stop()
df = pd.DataFrame(cands)
df = df.sort_values(["D", "K"], ascending=False, kind="stable").reset_index(drop=True)
only = st.toggle("Only the sidebar's game", False, key="only", bind="query-params")
if only and context().game is not None:
    df = df[df["game_id"] == context().game["game_id"]].reset_index(drop=True)
if df.empty:
    st.info(f"No candidate in the sidebar's game {md_escape(context().game['game_id'])} (the other selected games have "
            f"{len(cands)}). Turn the switch off, or pick another game in the sidebar.", icon="🔎")
    st.stop()
df["switching agents"] = df["switching"].apply(lambda xs: ", ".join(xs))
df["before ↗"] = ["live?" + urlencode({"game": g, "step": s}) for g, s in zip(df["game_id"], df["before"])]
df["after ↗"] = ["live?" + urlencode({"game": g, "step": s}) for g, s in zip(df["game_id"], df["after"])]
show = df[["game_id", "round", "before", "after", "speaker", "D", "K", "switching agents", "before ↗", "after ↗"]]
ev = st.dataframe(show, hide_index=True, width="stretch", height=380, on_select="rerun", selection_mode="single-row",
                  key="ep_table", column_config={
                      "D": st.column_config.ProgressColumn("D", min_value=0, max_value=1, format="%.2f", help=glossary.tip("D")),
                      "K": st.column_config.NumberColumn("K", help=glossary.tip("K")),
                      "before ↗": st.column_config.LinkColumn("before", display_text="Live Game ↗"),
                      "after ↗": st.column_config.LinkColumn("after", display_text="Live Game ↗"),
                      "game_id": st.column_config.TextColumn("game", width="small")})
W.download_csv(show.drop(columns=["before ↗", "after ↗"]), "suspicion_episodes", key="dl_ep")
rows = getattr(getattr(ev, "selection", None), "rows", None) or []
if rows:
    r = df.iloc[rows[0]]
    st.markdown(f"#### {md_escape(W.short_id(r['game_id']))} · {md_escape(r['before'])} → {md_escape(r['after'])} · speaker {md_escape(r['speaker'])} · D = {r['D']:.2f}, K = {r['K']}")
    tb = pd.DataFrame({"agent": list(r["top_before"]), "top suspect before": list(r["top_before"].values()),
                       "top suspect after": [r["top_after"].get(a) for a in r["top_before"]]})
    tb["switched"] = tb["top suspect before"] != tb["top suspect after"]
    st.dataframe(tb, hide_index=True, width="stretch")
    b1, b2 = st.columns(2)
    b1.page_link("pages/live.py", label=f"Live Game at {md_escape(r['before'])} (before)", icon=":material/arrow_back:",
                 query_params={"game": r["game_id"], "step": r["before"]})
    b2.page_link("pages/live.py", label=f"Live Game at {md_escape(r['after'])} (after)", icon=":material/arrow_forward:",
                 query_params={"game": r["game_id"], "step": r["after"]})
    st.markdown("**Each switching agent's view:**")
    cols = st.columns(max(1, len(r["switching"])))
    for c, a in zip(cols, r["switching"]):
        c.page_link("pages/impersonate.py", label=f"{md_escape(a)} at {md_escape(r['after'])}", icon=":material/theater_comedy:",
                    query_params={"game": r["game_id"], "step": r["after"], "agent": a})
else:
    st.caption("Select a row to see who switched, with links to the steps and to each switching agent's view.")
