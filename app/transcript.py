"""Transcript rendering. Model-written text is always escaped (never raw HTML)."""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from mafiascope.logs import kinds as K
from mafiascope.logs.schema import MAFIA_ROLES, NIGHT_ACTION_KINDS
from mafiascope.logs.timeline import PHASE_OF_KIND

from .gamemodel import PHASE_ICONS, GameModel, plan
from .palette import canonical_role, role_icon
from .text import md_escape, plural

ROLE_MD_COLOR = {"Mafia": "red", "Don": "red", "Doctor": "green", "Sheriff": "violet", "Villager": "blue", "Unknown": "gray"}
_ACTION_LINE = re.compile(r"^\s*\**\s*(ACTION|VOTE|ДЕЙСТВИЕ|ГОЛОС)\s*:.*$", re.IGNORECASE | re.MULTILINE)



def _votes(n: object) -> str:
    """``1 vote``, ``3 votes``; a count the log got wrong is shown as it is."""
    return plural(n, "vote") if isinstance(n, int) and not isinstance(n, bool) else f"{md_escape(n)} votes"

def who(gm: GameModel, name: str | None, roles: dict[str, str] | None = None) -> str:
    if not name:
        return "Host"
    role = canonical_role((roles or gm.roles).get(name))
    return f":{ROLE_MD_COLOR.get(role, 'gray')}[**{role_icon(role)} {md_escape(name)}**]"


def action_line(text: str) -> str | None:
    m = _ACTION_LINE.search(text or "")
    return m.group(0).strip().strip("*").strip() if m else None


def visible_to(gm: GameModel, e: dict[str, Any], agent: str) -> str:
    """'full', 'action' (only the protocol line) or 'hidden' for one event seen by ``agent``."""
    vt = e.get("visible_to")
    kind = K.of(e)
    if isinstance(vt, list):
        if agent not in vt:
            return "hidden"
        if kind in NIGHT_ACTION_KINDS and e.get("player") != agent:
            return "action"
        return "full"
    if kind in NIGHT_ACTION_KINDS or kind == K.MAFIA_TALK:
        actor = e.get("player")
        if actor == agent:
            return "full"
        if kind in (K.NIGHT_MAFIA, K.MAFIA_TALK, K.NIGHT_DON) and gm.roles.get(agent) in MAFIA_ROLES:
            return "action"
        return "hidden"
    if kind == K.NIGHT_SHERIFF_RESULT:
        return "full" if e.get("sheriff") == agent else "hidden"
    if kind == K.NIGHT_DON_RESULT:
        return "full" if e.get("don") == agent else "hidden"
    if kind == K.NIGHT_SAVE:
        return "full" if gm.roles.get(agent) == "Doctor" else "hidden"
    return "full"


def event_line(gm: GameModel, e: dict[str, Any], step_label: str, *, current: bool, reduce_night: bool = True,
               roles: dict[str, str] | None = None) -> str | None:
    kind = K.of(e)
    if "response" in e and e.get("player"):
        phase = PHASE_OF_KIND.get(kind, kind)
        icon = PHASE_ICONS.get(phase, "•")
        text = str(e.get("response") or "")
        if kind in NIGHT_ACTION_KINDS and reduce_night and not current:
            text = action_line(text) or "(night action)"
        extra = ""
        if e.get("fault"):
            extra = f"  \n:orange[⚠ fallback: {md_escape((e.get('fault') or {}).get('fallback'))}]"
        tag = f"`{step_label}`" + (" ◀" if current else "")
        return f"{tag} {icon} {who(gm, e.get('player'), roles)}: {md_escape(text)}{extra}"
    if kind == K.NIGHT_KILL:
        return f"💀 **{md_escape(e.get('victim'))}** was killed in the night"
    if kind == K.NIGHT_SAVE:
        return f"🛡️ the Doctor saved **{md_escape(e.get('saved'))}**"
    if kind == K.NIGHT_NO_KILL:
        return f"🌙 nobody died ({md_escape(e.get('reason') or 'no kill')})"
    if kind == K.NIGHT_ANALYSIS:
        return f"🌅 {md_escape(e.get('night_result'))}"
    if kind == K.NIGHT_SHERIFF_RESULT:
        return f"🔎 {md_escape(e.get('sheriff'))} checked {md_escape(e.get('checked'))}: **{md_escape(e.get('result'))}**"
    if kind == K.NIGHT_DON_RESULT:
        return f"🔎 Don {md_escape(e.get('don'))} checked {md_escape(e.get('checked'))}: **{md_escape(e.get('result'))}**"
    if kind == K.VOTE_TALLY:
        tally = e.get("tally") or {}
        parts = ", ".join(f"{md_escape(k)} {v}" for k, v in sorted(tally.items(), key=lambda kv: -kv[1]))
        inv = e.get("invalid") or {}
        inv_s = f" · invalid: {', '.join(md_escape(k) for k in inv)}" if inv else ""
        return f"🗳️ tally: {parts or 'no valid votes'}{inv_s}"
    if kind == K.DAY_ELIMINATE:
        role = e.get("role") if roles is None or e.get("revealed") else "role hidden"
        return f"⚖️ **{md_escape(e.get('eliminated'))}** was eliminated ({md_escape(role)}, {_votes(e.get('votes'))})"
    if kind == K.NO_ELIMINATION:
        return f"⚖️ no elimination ({md_escape(e.get('reason'))})"
    # ten-seat (sport / open-table) rules: who nominated whom (the host line lists only the nominees), the Mafia's
    # night shots (the kill lands only when every shooter picks the same target) and the Don's shot order
    if kind == K.NOMINATION:
        return f"☝️ **{md_escape(e.get('nominator'))}** nominated **{md_escape(e.get('nominee'))}**"
    if kind == K.NIGHT_SHOTS:
        shots = e.get("shots") or {}
        parts = ", ".join(f"{md_escape(k)} → {md_escape(v)}" for k, v in shots.items()) or "none"
        landed = e.get("landed")
        out = "" if landed is None else (" · landed" if landed else " · missed (no single common target)")
        return f"🔫 Mafia shots: {parts}{out}"
    if kind == K.SHOT_ORDER:
        order = ", ".join(md_escape(n) for n in (e.get("order") or []))
        return f"📋 Don {md_escape(e.get('don'))} set the shot order: {order}"
    if kind == K.HOST:
        return f"📣 {md_escape(e.get('text'))}"
    if kind == K.GAME_OVER:
        reason = f" ({md_escape(e.get('reason'))})" if e.get("reason") else ""
        return f"🏁 **{md_escape(e.get('winner'))} win**{reason}"
    return None


ROWS_KEY = "ms_transcript_rows"  # the inner container whose chunks the CSS below shows in reverse order
CHUNK = 8  # transcript blocks per markdown element
NEWEST_FIRST_CSS = f"<style>.st-key-{ROWS_KEY} {{flex-direction: column-reverse}}</style>"


def render(gm: GameModel, step: int, *, agent: str | None = None, newest_first: bool = True, height: int = 520,
           show_plans: bool = True, roles: dict[str, str] | None = None) -> None:
    """Transcript up to ``step``; with ``agent`` only what that agent could see."""
    last = len(gm.steps) - 1
    blocks: list[list[str]] = []
    for i, e in gm.events_until(step if step < last else 10**9):
        s_idx = min(gm.event_step[i], last)
        label = gm.steps[s_idx].label if gm.steps else ""
        mode = "full"
        if agent is not None:
            mode = visible_to(gm, e, agent)
            if mode == "hidden":
                continue
        cur = gm.event_step[i] == step
        lines: list[str] = []
        blocks.append(lines)
        if mode == "action":
            act = action_line(str(e.get("response") or "")) or "(night action)"
            lines.append(f"`{label}` 🌙 {who(gm, e.get('player'), roles)} *(ally)*: {md_escape(act)}")
        else:
            ln = event_line(gm, e, label, current=cur, roles=roles)
            if ln:
                lines.append(ln)
        if show_plans and cur and e.get("player") and (agent is None or agent == e.get("player")):
            p, carried = plan(gm, str(e.get("player")), step)
            if isinstance(p, dict) and not carried:
                lines.append(f"　:gray[💭 *plan:* {md_escape(p.get('action'))} → {md_escape(p.get('target'))} — "
                             f"{md_escape(p.get('reasoning'))}]")
    blocks = [b for b in blocks if b]
    if not blocks:
        st.caption("Nothing has happened yet at this step.")
        return
    texts = ["  \n".join(b) for b in blocks]
    box = st.container(height=height, border=True)
    if not newest_first:
        with box:
            for t in texts:
                st.markdown(t)
        return
    # The browser re-renders every element of the page on each of a rerun's commits, so the blocks go in chunks of
    # CHUNK blocks per markdown element. The chunks are sent oldest first (Streamlit matches a rerun's elements to
    # the page's by position: a step changes only the last one or two, the browser keeps the others) and shown
    # newest first by CSS; inside a chunk the blocks are written newest first.
    st.html(NEWEST_FIRST_CSS)
    with box.container(key=ROWS_KEY):
        for i in range(0, len(texts), CHUNK):
            st.markdown("\n\n".join(reversed(texts[i:i + CHUNK])))
