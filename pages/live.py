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
L.inspector(gm, None if mode == "inspect" else mode, W.take_share_slot())
