"""Live Game: launch a game, play a seat, watch it grow, inspect any step."""

from app.frame import page_guard

page_guard()

import streamlit as st

from app import branch_compare_view as BC
from app import launch_form as LF
from app import live_view as L
from app import state as S
from app import widgets as W
from app.sidebar import context

MODES = ("inspect", "launch")
mode = W.mode_control(MODES, "inspect", key="lg_mode",
                      labels={"inspect": ":material/search: Inspect a game", "launch": ":material/rocket_launch: Launch a new game"})

if mode == "launch":
    S.report_url_errors()
    LF.launch_form()
    W.finish(None, mode=mode)
    st.stop()

gm = W.load_game_or_stop()
W.game_header(gm, title="Live Game")
L.live_banner(gm)
L.human_panel(gm)
BC.branch_section(context().index, context().game)
if not gm.steps:
    st.info("Waiting for the first message ...")
    W.finish(gm, mode=mode)
    st.stop()
step = W.timeline(gm)

human = L.human_seat(gm)
spoiler_free = bool(human) and not gm.winner and st.toggle(
    f"Spoiler-free: see only what {human} knows", True, key="lg_spoiler",
    help="You play a seat in this running game: hide the true roles, the other agents' beliefs and the metrics.")
metrics = L.metrics_for(gm) if not spoiler_free else None
left, right = st.columns([5, 4])
with left:
    clicked = L.ground_truth(gm, step, metrics, roles=L.masked_roles(gm, human) if spoiler_free else None)
with right:
    L.transcript(gm, step, agent=human if spoiler_free else None, roles=L.masked_roles(gm, human) if spoiler_free else None)
if spoiler_free:
    W.finish(gm, step=step)
    st.stop()

if gm.probes_total == 0:
    st.info("Transcript-only game: no probe answers, so there are no per-agent beliefs or metrics to show.")
    L.raw_records(gm, step)
    W.finish(gm, step=step, mode=None if mode == "inspect" else mode)
    if clicked:
        L.go_impersonate(gm, clicked, step)
    st.stop()

with st.expander("📈 Metrics strip — click a point to move the timeline", expanded=True):
    picked_step = L.metrics_strip(gm, step, metrics)

st.markdown("#### Each agent's view")
threshold = st.slider("Suspicion edges at or above (score /10)", 0, 10, 6, key="thr", bind="query-params",
                      help="Edges show the agent's suspicion_ranking scores; hover for its verbatim reason.")
agent_clicked = L.agent_panels(gm, step, threshold)
L.raw_records(gm, step)

W.finish(gm, step=step, mode=None if mode == "inspect" else mode)
if picked_step is not None and picked_step != step:
    S.put(S.K_STEP, picked_step)
    st.rerun()
target = clicked or agent_clicked
if target:
    L.go_impersonate(gm, target, step)
