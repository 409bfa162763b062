"""Arena (placeholder): model tournaments, rosters and leaderboards — coming with the Arena issue."""

from app.frame import page_guard

page_guard()

import streamlit as st

st.markdown("### 🏟️ Arena")
st.info("Coming with the Arena issue: roster schedules, a ledger of games and leaderboards of Mafia vs town models. "
        "Until then, the Cross-Game Dashboard shows the matchup table of the selected corpus.", icon="🚧")
