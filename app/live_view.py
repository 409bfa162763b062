"""Live Game page building blocks: live tail, human seat, inspector (the launch form: launch_form.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import streamlit as st

from mafiascope.logs import GAME_FILE
from mafiascope.logs.game_facts import planned_probes

from . import charts, graph, launcher
from . import state as S
from . import widgets as W
from .data import file_sig
from .gamemodel import (PROBE_ROLE, PROBE_SOCIAL, PROBE_SUSPICION, GameModel, assessment, battery_has, personality_guesses,
                        probe_gap, suspicion)
from .text import md_escape, plural
from .transcript import render as render_transcript


# ----------------------------------------------------------------------------- live tail


def is_live(gm: GameModel) -> bool:
    item = launcher.registry().get(gm.game_id)
    if item is not None:
        return item.running
    if gm.winner:
        return False
    try:
        mtime = max(Path(gm.dir, f).stat().st_mtime for f in (GAME_FILE,) if Path(gm.dir, f).exists())
    except ValueError:
        return False
    return time.time() - mtime < 60


def _moves_sig(gm: GameModel) -> tuple[str, ...]:
    """Request ids of the game's open human moves: the engine waits on one without writing to the log."""
    item = launcher.registry().get(gm.game_id)
    logs = item.logs if item else str(Path(gm.dir).parent)
    return tuple(sorted(str(r.get("request_id")) for r in launcher.pending_moves(logs, gm.game_id)))


def live_banner(gm: GameModel) -> None:
    """While the game runs: a fragment polls the log (and the human seat's open moves) every 1.5 s and reruns
    the page when either changed."""
    item = launcher.registry().get(gm.game_id)
    if not is_live(gm):
        if S.get("ms_follow_game") == gm.game_id:
            # followed to the end (or it ended before this page saw it running): land on the last step once
            S.put("ms_follow_game", None)
            if S.get("ms_follow", True):
                S.put(S.K_STEP, 10**9)
        if item is not None and item.returncode not in (None, 0):
            st.error(f"The game process exited with code {item.returncode}.")
            st.code(item.tail(30) or "(no output)", language="text")
        return
    st.session_state["w_follow"] = bool(S.get("ms_follow", True))
    follow = st.toggle("Follow the latest step", key="w_follow", on_change=lambda: S.put("ms_follow", st.session_state["w_follow"]),
                       help="Keep the timeline on the newest step while the game runs (moving the timeline turns this off).")
    if follow:
        S.put(S.K_STEP, 10**9)  # clamped to the last step by the timeline
        S.put("ms_follow_game", gm.game_id)
    sig0 = (file_sig(gm.dir), _moves_sig(gm))

    @st.fragment(run_every=1.5)
    def _tail() -> None:
        sig = (file_sig(gm.dir), _moves_sig(gm))
        it = launcher.registry().get(gm.game_id)
        st.caption(f"🔴 live · {plural(len(gm.steps), 'step')} so far · log {sig[0][0][0] / 1024:.0f} KB"
                   + (f" · process {'running' if it.running else 'finished'}" if it else ""))
        if sig != sig0 or (it is not None and not it.running):
            st.rerun(scope="app")

    _tail()


def human_panel(gm: GameModel) -> None:
    item = launcher.registry().get(gm.game_id)
    logs = item.logs if item else str(Path(gm.dir).parent)
    if not launcher.plays_here(gm.game_id):  # another visitor's game (public mode): nothing to answer or announce
        return
    pend = launcher.pending_moves(logs, gm.game_id)
    if not pend:
        seat = (item.human_seat if item is not None else None) or human_seat(gm)
        if seat is None or (item is None and not is_live(gm)):  # a finished game played elsewhere: nobody to tell
            return
        gone = eliminated(gm, seat)
        if gone:
            st.warning(f"You played **{md_escape(seat)}** and were {md_escape(gone)}. "
                       + ("The game goes on without you: watch it here." if is_live(gm) else "The game is over."),
                       icon=":material/person_off:")
        elif is_live(gm):
            st.info(f"You play **{md_escape(seat)}**. Waiting for your turn ...", icon="🧑")
        return
    for req in pend:
        _move_form(gm, logs, req)


def eliminated(gm: GameModel, seat: str) -> str | None:
    """How ``seat`` left the game ("voted out in round 2", "killed in night 1"), or None while it plays."""
    from mafiascope.logs import kinds

    for e in gm.events:
        if kinds.death_of(e) == seat:
            return f"voted out in round {e.get('round')}" if kinds.of(e) == kinds.DAY_ELIMINATE else f"killed in night {e.get('round')}"
    return None


def move_targets(gm: GameModel, req: dict[str, Any]) -> list[str]:
    """The targets a human's open move may name: the engine's list (a Mafia's kill never offers its partners), else
    (a request written before the engine listed them) the living others."""
    seat = str(req.get("seat"))
    listed = req.get("targets")
    if isinstance(listed, list) and listed:
        return [str(n) for n in listed]
    alive = sorted(gm.steps[-1].alive) if gm.steps else gm.names
    return [n for n in alive if n != seat]


_ROLE_LINE = re.compile(r"(?:secret role|Your role|Ваша роль|Твоя роль)\s*[:：]\s*([^\n.]+)", re.IGNORECASE)


def _move_form(gm: GameModel, logs: str, req: dict[str, Any]) -> None:
    seat = str(req.get("seat"))
    rid = str(req.get("request_id"))
    msgs = req.get("messages") or []
    system = str(msgs[0].get("content") or "") if msgs and isinstance(msgs[0], dict) and msgs[0].get("role") == "system" else ""
    m = _ROLE_LINE.search(system)
    role = f" · your role: **{md_escape(m.group(1).strip())}**" if m else ""
    with st.container(border=True):
        st.markdown(f"#### 🧑 Your move as **{md_escape(seat)}** · {md_escape(req.get('purpose') or req.get('kind') or '')}{role}")
        if system:
            with st.expander("Your secret briefing (role, partners, rules)"):
                st.text(system)
        st.text(str(req.get("instruction") or ""))
        fmt = req.get("format")
        proto = str(fmt).split("<")[0] if fmt and "<" in str(fmt) else None
        target = None
        if fmt:
            st.caption(f"End your reply with a line like: {md_escape(fmt)}")
            if proto:
                # no form: a callback writes the closing line into the text box before it is drawn again
                target = st.selectbox("Target (writes the closing line into your reply)", ["—"] + move_targets(gm, req),
                                      key=f"hp_tgt_{rid}", on_change=_fill_target, args=(rid, proto))
        text = st.text_area("Your reply", key=f"hp_text_{rid}", height=120,
                            placeholder="Write what your character says, then Send")
        sent = st.button("Send", type="primary", icon=":material/send:", key=f"hp_send_{rid}")
        if sent:
            reply = (text or "").strip()
            if proto and target and target != "—" and proto.strip().rstrip(":").lower() not in reply.lower():
                reply = (reply + f"\n{proto}{target}").strip()
            if not reply:
                st.error("Write a reply first.")
                return
            launcher.answer(logs, gm.game_id, seat, rid, reply)
            st.success("Sent. Waiting for the others ...")
            time.sleep(0.3)
            st.rerun()


def with_closing_line(text: str, proto: str, target: str | None) -> str:
    """``text`` with its closing line (``VOTE: <name>``, ``ACTION: Kill <name>``) set to ``target``: an earlier line
    of the same kind is replaced, none is written for no target."""
    head = proto.strip().split(":")[0].lower() + ":"
    lines = [ln for ln in (text or "").rstrip().splitlines() if not ln.strip().lower().startswith(head)]
    if target and target != "—":
        lines.append(f"{proto}{target}")
    return "\n".join(lines).strip()


def _fill_target(rid: str, proto: str) -> None:
    ss = st.session_state
    ss[f"hp_text_{rid}"] = with_closing_line(str(ss.get(f"hp_text_{rid}") or ""), proto, ss.get(f"hp_tgt_{rid}"))


# ----------------------------------------------------------------------------- inspector


@st.fragment
def inspector(gm: GameModel, mode: str | None, share: Any) -> None:
    """Everything that depends on the timeline's step, as a fragment: a step change reruns (and re-sends to the
    browser) only this part, not the sidebar, header and banners. ``gm`` and ``share`` (the share link's slot,
    :func:`app.widgets.take_share_slot`) come from the page's last full run; the step goes to the URL each run."""
    step = W.timeline(gm)
    human = human_seat(gm)
    roles = masked_roles(gm, human) if human else None
    spoiler_free = bool(human) and not gm.winner and st.toggle(
        f"Spoiler-free: see only what {human} knows", True, key="lg_spoiler",
        help="You play a seat in this running game: hide the true roles, the other agents' beliefs and the metrics.")
    metrics = metrics_for(gm) if not spoiler_free else None
    left, right = st.columns([5, 4])
    with left:
        clicked = ground_truth(gm, step, metrics, roles=roles if spoiler_free else None)
    with right:
        transcript(gm, step, agent=human if spoiler_free else None, roles=roles if spoiler_free else None)
    if spoiler_free:
        W.finish(gm, step=step, share=share)
        return
    if gm.probes_total == 0:
        st.info("No probe answers yet: the agents' beliefs and the metrics appear after the first probed message."
                if planned_probes(gm.setup) and not gm.winner else
                "Transcript-only game: no probe answers, so there are no per-agent beliefs or metrics to show.")
        raw_records(gm, step)
        W.finish(gm, step=step, mode=mode, share=share)
        if clicked:
            go_impersonate(gm, clicked, step)
        return
    with st.expander("📈 Metrics strip — click a point to move the timeline", expanded=True):
        picked_step = metrics_strip(gm, step, metrics)
    st.markdown("#### Each agent's view")
    threshold = st.slider("Suspicion edges at or above (score /10)", 0, 10, 6, key="thr", bind="query-params",
                          help="Edges show the agent's suspicion_ranking scores; hover for its verbatim reason.")
    agent_clicked = agent_panels(gm, step, threshold)
    raw_records(gm, step)
    W.finish(gm, step=step, mode=mode, share=share)
    if picked_step is not None and picked_step != step:
        S.put(S.K_STEP, picked_step)
        rerun_here()
    target = clicked or agent_clicked
    if target:
        go_impersonate(gm, target, step)


def rerun_here() -> None:
    """Rerun the running fragment alone when this is a fragment rerun, else the app (a fragment-scoped rerun is
    not allowed while a fragment runs inside a full run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    st.rerun(scope="fragment" if ctx is not None and ctx.fragment_ids_this_run else "app")


def human_seat(gm: GameModel) -> str | None:
    """The seat played by a person in this game (backend type human), if any."""
    for p in gm.players:
        if str(p.get("backend")) == "app_human" or str(p.get("model")) == "human":
            return str(p["name"])
    return None


def masked_roles(gm: GameModel, viewer: str) -> dict[str, str]:
    """Roles as ``viewer`` knows them: its own, and its partners' when it is Mafia."""
    from mafiascope.logs.schema import MAFIA_ROLES

    mine = gm.roles.get(viewer)
    return {n: (r if n == viewer or (mine in MAFIA_ROLES and r in MAFIA_ROLES) else "Unknown") for n, r in gm.roles.items()}


def ground_truth(gm: GameModel, step: int, metrics: Any, *, roles: dict[str, str] | None = None) -> str | None:
    s = gm.steps[step]
    dec = charts.deception_at(metrics, s.label) if metrics is not None and roles is None else None
    pers = {p["name"]: p.get("personality") or {} for p in gm.players} if roles is None else {}
    if st.session_state.get("sb_renderer") == "vis.js (streamlit-agraph)":
        st.markdown("**Ground truth** (vis.js renderer) · dashed = Mafia partners")
        return graph.render_agraph(gm.names, roles or gm.roles, gm.alive_at(step), s.speaker)
    chart = graph.ground_truth(gm.names, roles or gm.roles, gm.models, gm.alive_at(step), s.speaker, dec, pers)
    st.markdown("**Ground truth** · ▲ Mafia ◆ Don ✚ Doctor ■ Sheriff ● Villager · dashed = Mafia partners · ring = “hid N%”")
    clicked = graph.render(chart, key=f"gt_{gm.game_id}")
    if dec is None and roles is None:
        st.caption("Deception rings appear once the analytics layer provides per-step viewer metrics.")
    return clicked


def agent_panels(gm: GameModel, step: int, threshold: float, per_row: int = 4) -> str | None:
    """Every agent's belief graph at ``step``, drawn as one chart (:func:`app.graph.belief_panels`); returns a node
    clicked in any of them (once per click)."""
    s = gm.steps[step]
    alive_now = gm.alive_at(step)
    names = gm.names
    role_less = bool(gm.probes_total) and not battery_has(gm, PROBE_ROLE)
    if role_less:
        st.caption(md_escape(probe_gap(gm, PROBE_ROLE)) + (" The graphs show suspicion edges only; nodes are not coloured by a guessed role."
                               if PROBE_SUSPICION in gm.probes_by_id else ""))
    panels = []
    for name in names:
        ass, carried = assessment(gm, name, step)
        sus, _ = suspicion(gm, name, step)
        dead = name not in alive_now
        head = f"{name} · {gm.roles.get(name, '?')}" + (" · 🗣️" if name == s.speaker else "")
        status = ["ELIMINATED"] if dead else []
        if not ass and not sus:
            note = "No suspicion_ranking answer up to this step." if role_less else "No role assessment up to this step."
            panels.append(graph.BeliefPanel(head=head, note=" · ".join([*status, note])))
            continue
        nodes, edges = graph.belief_rows(name, names, ass, sus, alive_now, threshold=threshold, carried=carried,
                                         speaker=s.speaker, personality=personality_guesses(gm, name, step), true_roles=gm.roles)
        if carried:
            status.append("carried forward from an earlier step")
        panels.append(graph.BeliefPanel(head=head, note=" · ".join(status), nodes=nodes, edges=edges))
    return graph.render(graph.belief_panels(panels, truth=True, per_row=per_row), key=f"ag_{gm.game_id}")


def go_impersonate(gm: GameModel, agent: str, step: int) -> None:
    st.switch_page("pages/impersonate.py", query_params={"game": gm.game_id, "step": str(step), "agent": agent})


def transcript(gm: GameModel, step: int, agent: str | None = None, roles: dict[str, str] | None = None) -> None:
    st.markdown("**Transcript** (newest first)" + (f" · what {md_escape(agent)} can see" if agent else ""))
    render_transcript(gm, step, height=430, agent=agent, roles=roles, show_plans=roles is None)


def metrics_for(gm: GameModel) -> dict[str, Any]:
    """The game's per-step viewer metrics (analytics.viewer.step_metrics as long tables)."""
    return charts.viewer_metrics(gm.dir)


def metrics_strip(gm: GameModel, step: int, metrics: dict[str, Any]) -> int | None:
    """Draw the strip; return a step clicked on a chart (or None)."""
    gaps = strip_gaps(gm)
    if gaps:
        st.caption(md_escape(gaps))
    picked = charts.metrics_strip(metrics, gm, step)
    charts.custom_strip(gm, step)  # numeric fields of custom probes, when the game has any
    return picked


def strip_gaps(gm: GameModel) -> str:
    """Why some strip charts will be empty: the game's battery lacks the probes they are computed from."""
    out = []
    if not gm.probes_total:
        return ""
    if not battery_has(gm, PROBE_ROLE):
        out.append("1st-order accuracy, crowd recall and deception need role_assessment answers")
    if not battery_has(gm, PROBE_SOCIAL):
        out.append("2nd-order consistency needs social_map answers")
    if not out:
        return ""
    asked = ", ".join(sorted(gm.probes_by_id)) or "none"
    return f"This game's probe battery asked only {asked}: " + "; ".join(out) + " (launch with the standard battery to get them)."


K_RAW_OPEN = "ms_raw_open"
RAW_LABEL = "Raw records of this step (message and probe calls, verbatim)"


def raw_records(gm: GameModel, step: int) -> None:
    """The step's own log records, verbatim: the message and every probe call (question, raw and parsed answer)."""
    from .data import load_raw

    s = gm.steps[step]
    # drawn only while open (opening it reruns the fragment): closed, a step sends none of its records. Its label is
    # the same at every step, so a step keeps the browser's expander (a label naming the step made a new widget, and
    # the browser mounted a new expander, on every step); whether it is open is also kept in ms_raw_open
    box = st.expander(RAW_LABEL, expanded=bool(S.get(K_RAW_OPEN, False)), key="lg_raw",
                      on_change=lambda: S.put(K_RAW_OPEN, bool(st.session_state.get("lg_raw"))))
    if not box.open:
        return
    with box:
        st.caption(f"Step {md_escape(s.label)}")
        if s.event_idx is not None:
            st.caption("game.jsonl record")
            st.json(gm.events[s.event_idx], expanded=False)
        probes = [p for p in load_raw(gm.dir).probes
                  if p.get("round") == s.round and p.get("public_msg_seq") == s.seq]
        if not probes:
            st.caption("No probe calls at this step.")
            return
        agents = sorted({str(p.get("player_name")) for p in probes}, key=lambda n: gm.names.index(n) if n in gm.names else 99)
        who = st.selectbox("Agent", agents, key="raw_agent")
        for p in sorted((p for p in probes if str(p.get("player_name")) == who), key=lambda p: p.get("probe_seq", 0)):
            ok = "parsed" if p.get("answer_parse_ok") else "NOT parsed"
            meta = f"{p.get('latency_ms')} ms" if p.get("latency_ms") is not None else ""
            st.markdown(f"**{md_escape(p.get('probe_id'))}** · {ok} · {md_escape(meta)}"
                        + (f" · :red[error: {md_escape(p.get('error'))}]" if p.get("error") else ""))
            q, a = st.columns(2)
            q.caption("question")
            q.text(str(p.get("question") or ""))
            a.caption("raw answer")
            a.text(str(p.get("answer_raw") or ""))
