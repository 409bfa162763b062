"""Replay (placeholder): forks and counterfactual replays — coming with the Replay issue."""

from app.frame import page_guard

page_guard()

import streamlit as st

st.markdown("### ⑂ Replay")
st.info("Coming with the Replay issue: fork a game at any step, intervene (edit an utterance, inject a belief, override "
        "a night action) and compare the branches. Branch games already appear in the sidebar picker (marked ⑂).", icon="🚧")
