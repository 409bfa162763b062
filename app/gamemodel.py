"""One game as the pages need it: steps, transcript per step, beliefs per agent and step.

This is presentation plumbing (which records belong to which timeline step, what an agent
said in its probes, who was alive); it computes no metric. Metrics come from
:mod:`mafiascope.analytics` through :mod:`app.bridge`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from mafiascope.logs import Timeline, TimelineStep, kinds
from mafiascope.logs.schema import MAFIA_ROLES

from .data import RawGame, file_sig, load_raw

Step = TimelineStep  # one timeline step (mafiascope.logs.timeline)
PHASE_ICONS = {"intro": "👋", "night": "🌙", "night_analysis": "🌅", "day_discuss": "💬", "day_vote": "🗳️", "round_end": "⏹"}
PROBE_ROLE = "role_assessment"
PROBE_ROLE_LEGACY = "role_beliefs"
PROBE_SOCIAL = "social_map"
PROBE_SUSPICION = "suspicion_ranking"
PROBE_PLAN = "planned_action"
PROBE_PERSONALITY = "personality_profile"


@dataclass
class GameModel:
    game_id: str
    dir: str
    players: list[dict[str, Any]]
    roles: dict[str, str]
    models: dict[str, str]
    events: list[dict[str, Any]]
    steps: list[Step]
    event_step: list[int]  # first step index at which each event is visible
    # beliefs[agent][step] -> {probe_id: (answer, carried_forward)}
    beliefs: dict[str, list[dict[str, tuple[Any, bool]]]] = field(default_factory=dict)
    probes_total: int = 0
    probes_ok: int = 0
    probes_by_id: dict[str, tuple[int, int]] = field(default_factory=dict)
    winner: str | None = None
    setup: dict[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [p["name"] for p in self.players]

    def mafia(self) -> list[str]:
        return [n for n, r in self.roles.items() if r in MAFIA_ROLES]

    @property
    def timeline(self) -> Timeline:
        return Timeline(self.steps, self.event_step, self.beliefs)

    def step_of_label(self, label: str) -> int | None:
        """The step of a label in any form StepKey.parse reads (``R1.5``, ``R1.end``, ``R1 end`` ...)."""
        return self.timeline.index(label)

    def events_until(self, step: int) -> list[tuple[int, dict[str, Any]]]:
        return [(i, e) for i, e in enumerate(self.events) if self.event_step[i] <= step]

    def alive_at(self, step: int) -> set[str]:
        """Seats alive at a step as the transcript shows it (deaths already listed there count)."""
        last = len(self.steps) - 1
        alive = set(self.steps[step].alive)
        for _, e in self.events_until(step if step < last else 10**9):
            alive.discard(kinds.death_of(e))
        return alive

    def belief(self, agent: str, step: int, probe_id: str) -> tuple[Any, bool]:
        return self.timeline.belief(agent, step, probe_id)


def build_model(raw: RawGame) -> GameModel:
    players = [p for p in (raw.setup.get("players") or []) if isinstance(p, dict) and p.get("name")]
    roles = {p["name"]: str(p.get("role", "")) for p in players}
    models = {p["name"]: str(p.get("model") or p.get("backend") or "") for p in players}
    tl = Timeline.build(roles, raw.events, raw.probes)
    probe_ok: dict[str, list[int]] = {}
    for p in raw.probes:
        if not _has_key(p) or str(p.get("error") or "").startswith("human seat"):
            continue  # human seats are not probed: not a parse failure
        c = probe_ok.setdefault(str(p.get("probe_id")), [0, 0])
        c[1] += 1
        c[0] += bool(p.get("answer_parse_ok"))
    over = next((e for e in reversed(raw.events) if kinds.of(e) == kinds.GAME_OVER), None)
    tot = sum(c[1] for c in probe_ok.values())
    ok = sum(c[0] for c in probe_ok.values())
    return GameModel(raw.game_id, raw.dir, players, roles, models, raw.events, tl.steps, tl.event_step, tl.beliefs,
                     tot, ok, {k: (v[0], v[1]) for k, v in probe_ok.items()},
                     str(over.get("winner")) if over else None, raw.setup)


def _has_key(p: dict[str, Any]) -> bool:
    try:
        int(p.get("round")), int(p.get("public_msg_seq"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


@st.cache_data(max_entries=24, show_spinner="Building the timeline ...")
def _model_cached(path: str, sig: tuple) -> GameModel:
    return build_model(load_raw(path))


def load_model(path: str) -> GameModel:
    return _model_cached(str(path), file_sig(path))


# ----------------------------------------------------------------------- belief accessors


def assessment(gm: GameModel, agent: str, step: int) -> tuple[dict[str, dict[str, Any]], bool]:
    """The agent's role assessment at a step: {target: {role, confidence, reason}}, carried flag."""
    val, carried = gm.belief(agent, step, PROBE_ROLE)
    out: dict[str, dict[str, Any]] = {}
    if isinstance(val, list) and val:
        for it in val:
            if isinstance(it, dict) and isinstance(it.get("player"), str):
                out[it["player"]] = {
                    "role": str(it.get("guessed_role") or "Unknown"),
                    "confidence": _conf(it.get("confidence")),
                    "reason": str(it.get("reason") or ""),
                }
        return out, carried
    val, carried = gm.belief(agent, step, PROBE_ROLE_LEGACY)
    if isinstance(val, dict):
        for k, v in val.items():
            if isinstance(v, dict):
                out[str(k)] = {"role": str(v.get("role") or v.get("guessed_role") or "Unknown"),
                               "confidence": _conf(v.get("confidence")), "reason": str(v.get("reason") or "")}
            elif isinstance(v, str):
                out[str(k)] = {"role": v, "confidence": 0.0, "reason": ""}
    return out, carried


def suspicion(gm: GameModel, agent: str, step: int) -> tuple[dict[str, float], bool]:
    val, carried = gm.belief(agent, step, PROBE_SUSPICION)
    out: dict[str, float] = {}
    if isinstance(val, list):
        for it in val:
            if isinstance(it, dict) and isinstance(it.get("player"), str):
                s = _conf(it.get("score"), hi=10.0)
                out[it["player"]] = s
    return out, carried


def toward_me(gm: GameModel, agent: str, step: int) -> tuple[dict[str, dict[str, Any]], bool]:
    val, carried = gm.belief(agent, step, PROBE_SOCIAL)
    out: dict[str, dict[str, Any]] = {}
    items = val.get("toward_me") if isinstance(val, dict) else None
    if isinstance(items, list):
        for it in items:
            if isinstance(it, dict) and isinstance(it.get("player"), str):
                out[it["player"]] = {"attitude": str(it.get("attitude") or ""), "confidence": _conf(it.get("confidence")),
                                     "reason": str(it.get("reason") or "")}
    return out, carried


def personality_guesses(gm: GameModel, agent: str, step: int) -> dict[str, str]:
    """The agent's Big Five estimates of the others as short text: {target: "O55 C50 E40 A60 N45 - summary"}."""
    val, _ = gm.belief(agent, step, PROBE_PERSONALITY)
    out: dict[str, str] = {}
    if isinstance(val, list):
        for it in val:
            if isinstance(it, dict) and isinstance(it.get("player"), str):
                traits = " ".join(f"{k}{it.get(k)}" for k in "OCEAN" if it.get(k) is not None)
                summ = str(it.get("summary") or "")
                out[it["player"]] = (traits + (f" - {summ}" if summ else "")).strip()
    return out


def plan(gm: GameModel, agent: str, step: int) -> tuple[Any, bool]:
    return gm.belief(agent, step, PROBE_PLAN)


def probe_gap(gm: GameModel, probe_id: str, agent: str | None = None) -> str:
    """Why there is no ``probe_id`` answer to show: no probes at all, a battery without that probe,
    or no answer from ``agent`` up to the step (the only case where "yet" is true)."""
    if not gm.probes_total:
        return "Transcript-only game: no probes."
    if not battery_has(gm, probe_id):
        asked = ", ".join(sorted(gm.probes_by_id)) or "none"
        return f"This game's probe battery has no {probe_id} probe (it asked: {asked})."
    return f"No {probe_id} answer from {agent} up to this step." if agent else f"No {probe_id} answer up to this step."


def battery_has(gm: GameModel, probe_id: str) -> bool:
    """Whether the game asked ``probe_id`` at all (the legacy role_beliefs counts as a role assessment)."""
    ids = set(gm.probes_by_id)
    return bool(ids & {PROBE_ROLE, PROBE_ROLE_LEGACY}) if probe_id == PROBE_ROLE else probe_id in ids


def _conf(v: Any, hi: float = 100.0) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(f):
        return 0.0
    return max(0.0, min(hi, f))


def is_night_private(e: dict[str, Any]) -> bool:
    return kinds.of(e) in (*kinds.NIGHT_ACTION_KINDS, kinds.MAFIA_TALK, *kinds.CHECK_RESULT_KINDS)
