"""Impersonate: the game through one agent's eyes (what it saw, what it believed, how it
thinks others see it vs how they actually see it)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from mafiascope.logs.schema import MAFIA_ROLES

from . import graph
from .gamemodel import (PROBE_ROLE, PROBE_SOCIAL, GameModel, assessment, battery_has, personality_guesses, plan, probe_gap,
                        suspicion, toward_me)
from .text import md_escape
from .transcript import render as render_transcript


def believed(gm: GameModel, agent: str, step: int) -> tuple[list[dict[str, Any]], bool]:
    """The agent's social_map.toward_me about living others: what it thinks they think of it."""
    alive = gm.steps[step].alive
    tm, carried = toward_me(gm, agent, step)
    items = [{"name": n, **v} for n, v in tm.items() if n != agent and n in alive and v.get("attitude")]
    order = {n: i for i, n in enumerate(gm.names)}
    return sorted(items, key=lambda o: order.get(o["name"], 99)), carried


def actual(gm: GameModel, agent: str, step: int) -> list[dict[str, Any]]:
    """The living others' same-step role assessments of the agent."""
    out = []
    for n in gm.names:
        if n == agent or n not in gm.steps[step].alive:
            continue
        ass, carried = assessment(gm, n, step)
        if agent in ass:
            out.append({"name": n, **ass[agent], "carried": carried})
    return out


def match_from_metrics(metrics: Any, label: str, agent: str) -> dict[str, Any] | None:
    """Per-step match score from analytics (``per_step[label]['match'][agent]``: matched, total, mismatched names);
    None when the agent is not scored at that step (not alive)."""
    if metrics is None:
        return None
    ps = (metrics.get("per_step") or {}).get(label) or {}
    m = (ps.get("match") or {}).get(agent)
    return m if isinstance(m, dict) else None


def match_badge(m: dict[str, Any] | None) -> str:
    if not m or not m.get("total"):
        return ":gray-badge[match: not enough data at this step]"
    share = m["matched"] / m["total"]
    color = "green" if share >= 0.75 else "orange" if share >= 0.5 else "red"
    return f":{color}-badge[match {round(100 * share)}% ({m['matched']}/{m['total']})]"


def world_graph(gm: GameModel, agent: str, step: int, threshold: float) -> str | None:
    s = gm.steps[step]
    alive_now = gm.alive_at(step)
    ass, carried = assessment(gm, agent, step)
    sus, _ = suspicion(gm, agent, step)
    st.markdown(f"**{md_escape(agent)}'s world** · guessed roles (shape/colour = guess, opacity = confidence)")
    if not ass:
        st.caption(md_escape(probe_gap(gm, PROBE_ROLE, agent)))
        if not sus:
            return None
        st.caption("Suspicion edges only (from its suspicion_ranking); nodes carry no guessed role.")
    ch = graph.belief_graph(agent, gm.names, ass, sus, alive_now, threshold=threshold, carried=carried, height=360,
                            speaker=s.speaker, personality=personality_guesses(gm, agent, step), true_roles=gm.roles)
    clicked = graph.render(ch, key=f"imp_world_{gm.game_id}")
    if carried:
        st.caption("These beliefs are carried forward from an earlier step.")
    return clicked


def world_table(gm: GameModel, agent: str, step: int) -> None:
    ass, carried = assessment(gm, agent, step)
    st.markdown(f"**{md_escape(agent)}'s role assessment** at {md_escape(gm.steps[step].label)}" + (" *(carried forward)*" if carried else ""))
    rows = [{"player": md_escape(n), "guess": md_escape(v["role"]), "confidence": v["confidence"], "reason": md_escape(v["reason"])}
            for n, v in ass.items() if n != agent]
    if not rows:
        st.caption(md_escape(probe_gap(gm, PROBE_ROLE, agent)))
        return
    # a static table wraps the reasons, so they are read in full (model text is shown as plain text)
    for r in rows:
        c = r["confidence"]
        r["confidence"] = f"{c:.0f}%" if isinstance(c, (int, float)) and c == c else "-"
    st.table(pd.DataFrame(rows).set_index("player"))


def plans_log(gm: GameModel, agent: str, step: int) -> None:
    rows = []
    for i in range(step + 1):
        p, carried = plan(gm, agent, i)
        if isinstance(p, dict) and not carried:
            rows.append({"step": gm.steps[i].label, "action": str(p.get("action", "")), "target": str(p.get("target", "")),
                         "reasoning": str(p.get("reasoning", ""))})
    with st.expander(f"Plans of {md_escape(agent)} up to this step ({len(rows)})", expanded=False):
        if rows:
            st.dataframe(pd.DataFrame(rows[::-1]), hide_index=True, width="stretch")
        else:
            st.caption("No planned_action answers (the probe is asked on the agent's own turns).")


def ego_panels(gm: GameModel, agent: str, step: int, metrics: Any) -> None:
    label = gm.steps[step].label
    bel, carried = believed(gm, agent, step)
    act = actual(gm, agent, step)
    m = match_from_metrics(metrics, label, agent)
    badge = (match_badge(m) if battery_has(gm, PROBE_SOCIAL) and battery_has(gm, PROBE_ROLE)
             else ":gray-badge[match: needs the social_map and role_assessment probes]")
    st.markdown(f"**How I think they see me** vs **how they actually see me** &nbsp; {badge}")
    mafia_pair = {n for n in gm.names if gm.roles.get(agent) in MAFIA_ROLES and gm.roles.get(n) in MAFIA_ROLES}
    mism = set((m or {}).get("mismatched") or [])
    c1, c2 = st.columns(2)
    with c1:
        st.caption("BELIEVED · from my social_map.toward_me (green trusts, grey neutral, vermillion suspects; dashed < 30%)")
        if bel:
            graph.render(graph.ego_graph(agent, bel, kind="believed", height=300, mismatched=mism), key=f"ego_b_{gm.game_id}",
                         selectable=False)
            if carried:
                st.caption("carried forward from an earlier step")
        else:
            st.caption(md_escape(probe_gap(gm, PROBE_SOCIAL, agent)))
    with c2:
        st.caption("ACTUAL · the others' role assessments of me (colour = the role they guess for me)")
        if act:
            graph.render(graph.ego_graph(agent, act, kind="actual", height=300, mismatched=mism), key=f"ego_a_{gm.game_id}",
                         selectable=False)
        else:
            st.caption("No living player has assessed me up to this step." if battery_has(gm, PROBE_ROLE)
                       else md_escape(probe_gap(gm, PROBE_ROLE)))
    if mafia_pair - {agent}:
        st.caption(f"Mafia allies ({md_escape(', '.join(sorted(mafia_pair - {agent})))}) are excluded from the match score.")
    if m is None and metrics is not None and agent not in gm.steps[step].alive:
        st.caption(f"{md_escape(agent)} is not alive at this step: no match score.")


def seen_transcript(gm: GameModel, agent: str, step: int) -> None:
    st.markdown(f"**What {md_escape(agent)} could see** (newest first; other players' night actions hidden)")
    render_transcript(gm, step, agent=agent, height=460)
