"""Cross-Game Dashboard: corpus tiles, F1 by round per model, calibration per model, F3/F4 with
intervals, belief dynamics and the Mafia-vs-town model matchup table."""

from app.frame import page_guard

page_guard()

import streamlit as st

from app.boot import first_imports

with first_imports("app.dashboard_view", freeze=False):
    from app import analysis as A
    from app import analysis_view as AV
    from app import bridge
    from app import dashboard_view as D
    from app import state as S
    from app.sidebar import context

st.markdown("### Cross-game dashboard")
S.report_url_errors()
sel = context().selection
dirs = A.selection_dirs()
if not dirs:
    st.info("No root games in the selection (sidebar corpora and filters). Branch games are counted but not analysed here.",
            icon="👈")
    st.stop()
D.build_progress(dirs, sel)  # a cold cache: a progress bar and the index's tiles, not a blank page
rep = A.report_summary(dirs)  # the whole report (F2's per-agent rows too) only for the JSON download
if not rep.get("n_games"):
    st.info(f"None of the {len(dirs)} selected root games is left to analyse (sidebar filters). Add corpora in the "
            "sidebar (Corpora, Search games) or launch games.", icon="👈")
    st.stop()
probed = int(rep.get("n_games_probed") or 0)
if not probed:
    st.info(f"None of the {rep['n_games']} selected root games has probe answers: outcomes, votes and matchups only. "
            "Add probed corpora in the sidebar (Corpora, Search games) or launch games with probes on.", icon="👈")
st.caption(f"Every figure is over the {AV.games_scope(probed, len(sel), int(rep['n_games']))} · metric mode "
           f"**{bridge.current_mode().name}** · bootstrap B = {bridge.current_mode().boot}")
D.tiles(rep, sel)
tabs = st.tabs(["First-order by round", "Calibration per model", "F3 · F4", "Belief dynamics", "Matchups",
                "Compare models"], key="tab", bind="query-params")
# only the open tab runs (the tabs are bound to the URL, so switching tabs reruns the page): the first view
# draws one chart and its table instead of every tab's figures
draw = [lambda: D.f1_per_model(dirs, rep), lambda: D.calibration_per_model(dirs), lambda: D.f3_f4(rep),
        lambda: D.dynamics(dirs), lambda: D.matchups(A.outcomes(dirs)), lambda: D.compare_view(dirs)]
for tab, fill in zip(tabs, draw):
    if tab.open is not False:  # None: a Streamlit that does not track the open tab draws them all
        with tab:
            fill()
# read and serialised only when clicked (a large corpus's report takes most of a second to dump)
st.download_button("⬇ Full report (JSON)", A.report_json(dirs), file_name="mafiascope_report.json",
                   mime="application/json", key="dl_report")
