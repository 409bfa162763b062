"""Impersonate: pick an agent and see the game through its eyes."""

from app.frame import page_guard

page_guard()

import streamlit as st

from app import charts
from app import impersonate_view as I
from app import live_view as L
from app import state as S
from app import widgets as W

gm = W.load_game_or_stop()
W.game_header(gm, title="Impersonate")
if not gm.steps:
    st.info("This game has no steps yet.")
    W.finish(gm)
    st.stop()
c1, c2 = st.columns([1, 3])
with c1:
    agent = W.agent_picker(gm, label="See the game as", allow_none=False)
with c2:
    step = W.timeline(gm)
if agent is None:
    st.info("This game has no players.")
    W.finish(gm, step=step)
    st.stop()
metrics = L.metrics_for(gm)

a, b, c = st.columns(3)
with a:
    clicked = L.ground_truth(gm, step, metrics)
with b:
    world_click = I.world_graph(gm, agent, step, S.bound_int("thr", 0, 10, 6))
with c:
    I.world_table(gm, agent, step)
    st.slider("Suspicion edges at or above", 0, 10, 6, key="thr", bind="query-params",
              help="Edges from the agent to players it rates at least this suspicious (suspicion_ranking, /10).")
    I.plans_log(gm, agent, step)
a, bc = st.columns([1, 2])
with a:
    I.seen_transcript(gm, agent, step)
with bc:
    I.ego_panels(gm, agent, step, metrics)
    charts.custom_strip(gm, step, agent=agent)  # this agent's numeric custom-probe answers per step

W.finish(gm, step=step, agent=agent)
target = clicked or world_click
if target and target != agent:
    S.put(S.K_AGENT, target)
    st.rerun()
