"""Replay: fork the sidebar's game at a timeline step, follow the background batches, compare branches."""

from app.frame import page_guard

page_guard()

import streamlit as st
from pathlib import Path
from urllib.parse import urlencode

from app import experiment_view as EV
from app import jobs
from app import replay_jobs as J
from app import replay_view as V
from app import widgets as W
from app.paths import public_path
from app.text import md_escape, md_link, plural
from mafiascope.logs import STATE_FILE
from mafiascope.replay.source import ParentGame, ReplayError

gm = W.load_game_or_stop()
W.game_header(gm, title="Replay")
if not gm.steps:
    st.info("This game has no steps yet.")
    W.finish(gm)
    st.stop()
step = W.timeline(gm)
s = gm.steps[step]
key = f"{s.round}.{s.seq}"
dirs = J.read_dirs(gm.dir)
try:
    parent = ParentGame.load(gm.dir)
except ReplayError as exc:
    st.warning(md_escape(f"This game cannot be forked: {exc}"), icon=":material/call_split:")
    forkable = sorted(d.name for d in Path(gm.dir).parent.iterdir() if (d / STATE_FILE).is_file())[:8]
    if forkable:
        st.markdown("Games here that have snapshots: " + " · ".join(md_link(g, "./replay?" + urlencode({"game": g})) for g in forkable))
    parent = None

if parent is not None:
    ok = parent.has((s.round, s.seq))
    ev = parent.utterance((s.round, s.seq))
    with st.container(border=True):
        st.markdown(f"**Branch from {md_escape(s.label)}**"
                    + (f" — {md_escape(ev['player'])}: “{md_escape((ev.get('response') or '')[:160])}”" if ev else ""))
        c1, c2, c3 = st.columns([1, 1, 1])
        n = c1.number_input("Branches (N)", 1, 200, 5, key="rp_n")
        probes = c2.selectbox("Probes", ["suspicion", "full", "none"], key="rp_probes",
                              help="suspicion_ranking only (cheap), the parent's whole battery, or none")  # fmt: skip
        keep = c3.checkbox("Keep the parent's seed", key="rp_keep", help="offline bots then replay the parent exactly")
        replace = st.text_area("Replacement utterance (optional)", key="rp_replace", disabled=ev is None,
                               help="the speaker's message at this step becomes this text; everything after it is replayed")  # fmt: skip
        st.caption(md_escape(V.branch_form_note(parent, (s.round, s.seq), s.label, ev is not None)))
        if ev is None:
            st.caption(f"{md_escape(s.label)} is not a seat's message, so there is nothing to replace here: move the timeline to a "
                       "speech, vote or night action to replace it, or branch from here with a resample or a night override.")  # fmt: skip
        night = None
        actors = J.night_actors(parent, (s.round, s.seq)) if ok else []
        if actors:
            by_seat = {a["seat"]: a for a in actors}
            n1, n2 = st.columns([1, 1])
            who = n1.selectbox("Night override: who acts (optional)", [None, *by_seat], key=f"rp_night_seat:{key}",
                               format_func=lambda x: "no override" if x is None else
                               f"{x} ({by_seat[x]['role']}, {by_seat[x]['action']})",
                               help="a seat whose night action is still to come this night: the Mafia's kill, the "
                                    "Doctor's protection, a Sheriff/Don check; that action is forced in every branch")  # fmt: skip
            whom = n2.selectbox("Night override: target", by_seat[who]["targets"] if who else [], key=f"rp_night_target:{key}:{who}",
                                disabled=who is None, placeholder="pick who acts first",
                                help="the targets the engine accepts for this action at this step (living players)")  # fmt: skip
            night = f"{who}={whom}" if who and whom else None
        elif ok:
            st.caption(md_escape(V.night_override_hint(parent, gm.steps, step)))
        why = jobs.refusal(J.fork_work(int(n)))  # the quotas (app/jobs.py), said next to the button
        go = st.button("Branch", icon=":material/call_split:", type="primary", disabled=not ok or bool(why), key="rp_go", help=why)
        if why:
            st.caption(md_escape(why))
    if not ok:
        st.caption(md_escape(V.no_snapshot_hint(parent, [x.label for x in gm.steps], [(x.round, x.seq) for x in gm.steps], step)))
    if go:
        try:
            job = J.start_fork(gm.game_id, gm.dir, key, int(n), probes, replace=replace.strip() or None,
                               seat=ev["player"] if ev and replace.strip() else None,
                               override_night=night, keep_seed=keep)  # fmt: skip
            st.success(f"Started fork batch {md_escape(job.batch_id)} ({plural(int(n), 'branch', 'branches')}) in the background.")
        except ValueError as exc:  # ReplayError (bad input) or JobRefused (a quota)
            st.error(md_escape(J.page_error(str(exc))), icon=":material/error:")


@st.fragment(run_every=2.0)
def running_jobs() -> None:
    jobs = J.for_game(gm.game_id)
    seen = st.session_state.setdefault("rp_finished_seen", {j.batch_id for j in jobs if not j.running})
    active = [j for j in jobs if j.running or not j.progress()["finished"]]
    for j in active[:5]:
        p = j.progress()
        st.progress(p["done"] / max(1, p["n"]), text=f"batch {j.batch_id}: {p['done']}/{p['n']} branches finished"
                    + (f", {p['errors']} failed" if p["errors"] else "") + (" (starting…)" if j.running and not p["done"] else ""))  # fmt: skip
        if not j.running and not p["finished"]:
            st.error(md_escape(f"batch {j.batch_id} stopped before it finished. Last lines of its log ({public_path(Path(j.log_file))}):"))
            st.code(j.tail(8) or "(empty)", language=None)
    for j in EV.job_progress(gm.game_id):
        st.toast(f"{j.kind.replace('_', ' ')} {j.job_id} " + ("finished" if j.progress().finished else "stopped"), icon=":material/science:")
        st.rerun(scope="app")  # its result is drawn in a tab outside this fragment
    done = J.newly_finished(jobs, seen)
    for j in done:
        p = j.progress()
        st.toast(f"Batch {md_escape(j.batch_id)} finished: {p['done']}/{p['n']} branches" + (f", {p['errors']} failed" if p["errors"] else ""),
                 icon=":material/call_split:")  # fmt: skip
    if done:
        st.rerun(scope="app")  # the branch tree below is outside this fragment


running_jobs()

tab_tree, tab_exp, tab_val = st.tabs(["Branch tree", "Experiments", "Validation"], key="tab", bind="query-params")
with tab_tree:
    V.branch_tree(J.branch_tree_of(gm.dir, gm.game_id), str(gm.dir), gm.winner, made_by=J.experiment_batches(dirs, gm.game_id))
    st.caption("Branches are ordinary games (marked ↳ in the picker); corpus analytics leave them out unless forks are included.")
with tab_exp:
    if parent is not None:
        EV.experiment_forms(gm, parent, (s.round, s.seq))
    exps = [e for d in dirs for e in J.experiments_for(d, gm.game_id)]
    if not exps:
        st.caption("No experiment on this game yet (the CLI's `mafiascope replay attribution` and `replay bifurcate` "
                   "write here too).")  # fmt: skip
    opened = V.open_experiments([str(e.get("experiment_id")) for e in exps])
    for e in exps:
        with W.untrusted_record(f"experiment file {Path(str(e.get('path', '?'))).name}"):
            what = (f" · {plural(len(e.get('utterances') or []), 'message')} · target {e.get('target') or 'none'} · n={e.get('n_per_arm')} per arm"
                    if e["kind"] == "attribution" else f" · {plural(len(e.get('variants') or []), 'variant')}")  # fmt: skip
            with V.experiment_expander(md_escape(f"{e['kind']} {e['experiment_id']}{what}"), e, opened):
                (V.attribution if e["kind"] == "attribution" else V.bifurcation)(e)
                if e["kind"] == "attribution":
                    EV.attribution_arms(e)
with tab_val:
    if parent is not None:
        EV.validation_forms(gm)
    vals = sorted((v for d in dirs for v in J.validations(d)), key=J.newest_first)
    if not vals:
        st.caption("No validation result here yet (the CLI's `mafiascope validate ab` and `validate repeat` write here "
                   "with `--results`).")  # fmt: skip
    for v in vals[:5]:
        with st.container(border=True), W.untrusted_record(f"validation file {Path(str(v.get('path', '?'))).name}"):
            V.validation(v)
            (EV.ab_result if v.get("kind") == "validate_ab" else EV.repeat_points)(v)

W.finish(gm, step=step)
