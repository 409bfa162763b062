"""Replay page: the forms that launch experiments and validations as background jobs, their progress,
and the links from results to the branch games (app/experiment_jobs.py starts the jobs)."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from mafiascope.replay.source import ParentGame

from . import experiment_jobs as EJ
from . import jobs
from .replay_jobs import page_error
from .replay_view import live_link, step_label, utterance_label
from .text import md_escape

PROBES = ["suspicion", "full", "none"]


def _started(job: EJ.ExperimentJob) -> None:
    st.success(f"Started {job.kind.replace('_', ' ')} {job.job_id} in the background; its progress is shown above the tabs.")


def _fail(exc: Exception) -> None:
    st.error(page_error(str(exc)), icon=":material/error:")


def utterance_steps(parent: ParentGame, keys: list[tuple[int, int]]) -> list[str]:
    """The steps (``R.S``) among ``keys`` that are a seat's message (what attribution and bifurcation act on)."""
    return [f"{r}.{q}" for r, q in keys if parent.utterance((r, q)) is not None]


def experiment_forms(gm: Any, parent: ParentGame, step_key: tuple[int, int]) -> None:
    """Launch an attribution (PRE/POST rerolls) or a bifurcation (alternative utterances) of this game."""
    steps = utterance_steps(parent, [(s.round, s.seq) for s in gm.steps])
    if not steps:
        st.caption("This game has no seat messages to experiment on.")
        return
    here = f"{step_key[0]}.{step_key[1]}"
    speaker_of = {k: (parent.utterance(tuple(int(x) for x in k.split("."))) or {}).get("player") for k in steps}
    fmt = lambda k: f"{step_label([int(x) for x in k.split('.')])} · {speaker_of.get(k) or '?'}"  # noqa: E731
    a, b = st.columns(2)
    with a.container(border=True):
        st.markdown("**Attribution**: does this message change the outcome?")
        st.caption("Each message is rerolled n times from just before it (PRE) and from just after it (POST).")
        utts = st.multiselect("Messages", steps, default=[here] if here in steps else steps[:1], key="ex_utts", format_func=fmt)
        c1, c2 = st.columns(2)
        n = c1.number_input("Rerolls per arm (n)", 1, 50, 3, key="ex_n")
        probes = c2.selectbox("Probes", PROBES, key="ex_probes")
        target = st.selectbox("Target (elimination counted)", [None, *gm.names], key="ex_target",
                              format_func=lambda x: "none" if x is None else x)  # fmt: skip
        why = _why(EJ.experiment_work("attribution", 2 * int(n) * max(1, len(utts))))
        if st.button("Run attribution", icon=":material/science:", key="ex_attr_go", disabled=not utts or bool(why), help=why):
            try:
                _started(EJ.start_attribution(gm.game_id, str(gm.dir), list(utts), int(n), target=target, probes=probes))
            except ValueError as exc:  # ReplayError (bad input) or JobRefused (a quota)
                _fail(exc)
    with b.container(border=True):
        st.markdown("**Bifurcation**: what else could this seat have said?")
        st.caption("Alternative messages are sampled, a diverse set is selected and each is continued to the end.")
        at = st.selectbox("Message", steps, index=steps.index(here) if here in steps else 0, key="ex_bif_at", format_func=fmt)
        c1, c2, c3 = st.columns(3)
        samples = c1.number_input("Samples", 1, 200, 12, key="ex_samples")
        select = c2.number_input("Variants", 1, 20, 4, key="ex_select")
        conts = c3.number_input("Continuations", 1, 10, 1, key="ex_conts")
        why = _why(EJ.experiment_work("bifurcation", int(select) * int(conts)))
        if st.button("Run bifurcation", icon=":material/alt_route:", key="ex_bif_go", disabled=bool(why), help=why):
            try:
                _started(EJ.start_bifurcation(gm.game_id, str(gm.dir), at, speaker_of.get(at), samples=int(samples),
                                              select=int(select), continuations=int(conts)))  # fmt: skip
            except ValueError as exc:  # ReplayError (bad input) or JobRefused (a quota)
                _fail(exc)


def _why(work: Any) -> str | None:
    """Why a Run button is disabled (the quotas, app/jobs.py), said under it too."""
    why = jobs.refusal(work)
    if why:
        st.caption(md_escape(why))
    return why


def validation_forms(gm: Any) -> None:
    """Launch an A/B validation on this game's set-up or a repeatability check on the games next to it."""
    a, b = st.columns(2)
    with a.container(border=True):
        st.markdown("**A/B**: does probing change the games?")
        st.caption("Pairs of games on this game's set-up, one probed and one not, with the same seed.")
        games = st.number_input("Games per arm", 1, 200, 3, key="va_games")
        why = _why(EJ.experiment_work("validate_ab", 2 * int(games)))
        if st.button("Run A/B", icon=":material/compare_arrows:", key="va_go", disabled=bool(why), help=why):
            try:
                _started(EJ.start_ab(gm.game_id, str(gm.dir), int(games)))
            except ValueError as exc:  # ReplayError (bad input) or JobRefused (a quota)
                _fail(exc)
    with b.container(border=True):
        st.markdown("**Repeatability**: do probes give the same answer twice?")
        st.caption("Saved states of the games in this game's directory are re-asked the probe battery.")
        c1, c2 = st.columns(2)
        states = c1.number_input("States", 1, 200, 3, key="vr_states")
        repeats = c2.number_input("Repeats", 2, 20, 3, key="vr_repeats")
        why = _why(EJ.experiment_work("validate_repeat", int(states)))
        if st.button("Run repeatability", icon=":material/repeat:", key="vr_go", disabled=bool(why), help=why):
            try:
                _started(EJ.start_repeat(gm.game_id, str(gm.dir), int(states), int(repeats)))
            except ValueError as exc:  # ReplayError (bad input) or JobRefused (a quota)
                _fail(exc)


def job_progress(game_id: str) -> list[EJ.ExperimentJob]:
    """Progress bars of this game's running or failed experiment jobs; returns the ones that just finished."""
    jobs = EJ.for_game(game_id)
    seen = st.session_state.setdefault("ex_finished_seen", {j.job_id for j in jobs if not j.running})
    for j in jobs[:6]:
        p = j.progress()
        if p.finished and j.job_id in seen:
            continue
        frac = min(1.0, p.done / p.total) if p.total else 0.0
        st.progress(frac, text=j.label() + (" (starting…)" if j.running and not p.done else ""))
        if not j.running and not p.finished:
            st.error(f"{j.kind.replace('_', ' ')} {j.job_id} stopped before it finished. Last lines of its log:")
            st.code(j.tail(8) or "(empty)", language=None)
    done = [j for j in jobs if j.job_id not in seen and not j.running]
    seen.update(j.job_id for j in done)
    return done


# ----------------------------------------------------------------------------- results: charts and links


def attribution_games(res: dict[str, Any]) -> pd.DataFrame:
    """One row per reroll of an attribution: the message, the arm, the branch game (a link) and its outcome."""
    rows = []
    for u in res.get("utterances", []):
        for arm in ("pre", "post"):
            for r in (u.get(arm) or {}).get("replicas", []):
                gid = r.get("game_id")
                rows.append({"message": utterance_label(u["utterance"]), "arm": arm.upper(),
                             "game": live_link(gid) if gid else None, "winner": r.get("winner") or "unfinished",
                             "error": r.get("error")})  # fmt: skip
    df = pd.DataFrame(rows, columns=["message", "arm", "game", "winner", "error"])
    return df.drop(columns=["error"]) if df["error"].isna().all() else df.fillna({"error": ""})


def game_link_column(title: str = "branch game") -> Any:
    return st.column_config.LinkColumn(title, display_text=r"game=([^&]+)")


def arms_chart(rows: list[dict[str, Any]], *, x: str, y_title: str) -> alt.LayerChart:
    """Bars of a share per arm with their 95% intervals and k/n labels (``rows``: {x, p, lo, hi, k/n})."""
    df = pd.DataFrame(rows)
    enc_x = alt.X(f"{x}:N", title=None, sort=None, axis=alt.Axis(labelAngle=0))
    bars = alt.Chart(df).mark_bar(width=36).encode(x=enc_x, y=alt.Y("p:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
                                                   color=alt.Color(f"{x}:N", legend=None, sort=None), tooltip=[x, "k/n", "p", "lo", "hi"])  # fmt: skip
    rules = alt.Chart(df).mark_rule(color="#888").encode(x=enc_x, y="lo:Q", y2="hi:Q")
    label = alt.Chart(df).mark_text(dy=-8, color="#888").encode(x=enc_x, y="hi:Q", text="k/n:N")  # readable in both themes
    return alt.layer(bars, rules, label).properties(height=220, width=alt.Step(80))


def _share(name: str, v: dict[str, Any]) -> dict[str, Any]:
    ci = v.get("ci95") or [None, None]
    return {"arm": name, "p": v.get("p"), "lo": ci[0], "hi": ci[1], "k/n": f"{v.get('k')}/{v.get('n')}"}


def ab_result(res: dict[str, Any]) -> None:
    """A/B arms: Mafia win share with intervals and n, then every game of both arms as a link."""
    m = res["mafia_wins"]
    st.altair_chart(arms_chart([_share("probed", m["probed"]), _share("unprobed", m["unprobed"])], x="arm",
                               y_title="P(Mafia wins), 95% CI"), width="content")  # fmt: skip
    games = [{"arm": arm, "pair": g.get("pair"), "game": live_link(g["game_id"]), "winner": g.get("winner"), "rounds": g.get("rounds"),
              "messages": g.get("messages")} for arm in ("probed", "unprobed") for g in (res.get("games") or {}).get(arm, [])]  # fmt: skip
    if games:
        st.dataframe(pd.DataFrame(games), hide_index=True, width="stretch", column_config={"game": game_link_column("game")})


def attribution_arms(res: dict[str, Any]) -> None:
    """P(Mafia wins) PRE vs POST per message, with intervals and n, and the rerolls as links."""
    rows = []
    for u in res.get("utterances", []):
        w = u["delta_post_minus_pre"]["p_mafia_win"]
        for arm in ("pre", "post"):
            rows.append({**_share(arm.upper(), w[arm]), "arm": f"{utterance_label(u['utterance']).split()[0]} {arm.upper()}"})
    if rows:
        st.altair_chart(arms_chart(rows, x="arm", y_title="P(Mafia wins), 95% CI"), width="content")
    st.dataframe(attribution_games(res), hide_index=True, width="stretch", column_config={"game": game_link_column()})


def repeat_points(res: dict[str, Any]) -> None:
    """The re-asked states, each linked to its game at that step."""
    def at(step: str) -> str | None:
        return step_label([int(x) for x in step.split(".")]) if "." in step else None

    pts = [{"game": live_link(p["game_id"], at(str(p["step"]))), "step": p["step"],
            "phase": p.get("phase"), "disagreements": p.get("disagreements"), "pairs": p.get("pairs")}
           for p in res.get("points", [])]  # fmt: skip
    if pts:
        st.dataframe(pd.DataFrame(pts), hide_index=True, width="stretch", column_config={"game": game_link_column("game")})
