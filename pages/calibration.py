"""Calibration: stated confidence vs accuracy (F2), per corpus, model, game or agent."""

from app.frame import page_guard

page_guard()

import pandas as pd
import streamlit as st

from app import analysis as A
from app import analysis_view as AV
from app import state as S
from app import widgets as W
from app.data import analysed_models, models_of
from app.sidebar import context
from app.text import md_escape, plural

st.markdown("### Calibration")
st.caption("Committed role guesses of town-side observers (F1 items: Unknown and self excluded) binned by stated "
           "confidence; definitions in the metrics spec, section 5. Metric mode and bootstrap size: sidebar.")
SCOPES = ("corpus", "model", "game", "agent")
scope = S.url_mode(SCOPES, "corpus")
picked = st.segmented_control("Scope", SCOPES, default=scope, key="cal_scope",
                              format_func={"corpus": "Whole corpus", "model": "Per model", "game": "Per game",
                                           "agent": "Per agent"}.get)
if picked and picked != scope:
    scope = picked
    S.set_mode(SCOPES, scope)
S.report_url_errors()
dirs = A.selection_dirs()
if not dirs:
    st.info("No games in the selection (sidebar corpora and filters).", icon="👈")
    st.stop()
if scope == "corpus":
    res = A.f2(dirs)
    AV.reliability_block(res, AV.games_scope(res.get("m", 0), len(context().selection)), "corpus")
elif scope == "model":
    models = analysed_models(models_of(context().selection["models"]))
    mdl = st.selectbox("Model", models, key="model", bind="query-params")  # ?model= reproduces the pick
    res = A.f2(dirs, model=mdl)
    AV.reliability_block(res, f"{mdl} · {plural(res.get('m', 0), 'game')}", f"model_{mdl}")
elif scope == "game":
    row = context().game
    if row is None:
        st.info("Pick a game in the sidebar.")
        st.stop()
    st.caption(f"Game {md_escape(row['game_id'])} (the sidebar's game)")
    res = A.f2((str(row["dir"]),))
    AV.reliability_block(res, f"Game {W.short_id(row['game_id'])}", f"game_{W.short_id(row['game_id'])}")
else:
    res = A.f2(dirs)
    agents = res.get("by_agent") or []
    if not agents:
        st.info("No per-agent calibration data.")
        st.stop()
    labels = [f"{a['agent']} · {W.short_id(a['game_id'])}" for a in agents]
    want = S.qp("agent")
    gid = S.get("ms_cal_game") or (context().game["game_id"] if context().game is not None else None)
    idx = next((i for i, a in enumerate(agents) if a["agent"] == want and a["game_id"] == gid), None)
    if idx is None:
        idx = next((i for i, a in enumerate(agents) if a["agent"] == want), None)
    if want and idx is None:
        st.error(md_escape(f"URL parameter agent={S.quoted(want)}: no calibration data for this agent in the selection (only "
                           "town-side observers with committed guesses are scored)."), icon="🔗")
    idx = idx or 0
    i = st.selectbox("Agent (game)", range(len(agents)), index=idx, format_func=lambda i: labels[i], key="cal_agent",
                     on_change=lambda: S.put(S.K_GAME, agents[st.session_state["cal_agent"]]["game_id"]))  # the sidebar follows
    AV.reliability_block(agents[i], labels[i], f"agent_{i}")
    # the agent's own game goes into the URL (an agent name alone is ambiguous across games)
    S.put("ms_cal_game", agents[i]["game_id"])
    S.sync_url(agent=agents[i]["agent"])
if scope in ("corpus", "model") and res.get("by_model") is not None:
    with st.expander("Per-model summary"):
        df = pd.DataFrame([{"model": k, "n": v.get("n"), "ECE": v.get("ece"), "Brier": v.get("brier")}
                           for k, v in (res.get("by_model") or {}).items()])
        st.dataframe(df, hide_index=True, width="stretch")
        W.download_csv(df, "calibration_by_model", key="dl_cal_models")
url_game = S.get("ms_cal_game") if scope == "agent" else None
S.sync_url(mode=scope if scope != "corpus" else None, agent=None if scope != "agent" else S.qp("agent"),
           game=url_game or (context().game["game_id"] if context().game is not None else None))
