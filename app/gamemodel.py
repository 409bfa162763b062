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

from mafiascope.logs.schema import MAFIA_ROLES, NIGHT_ACTION_KINDS, UTTERANCE_KINDS

from .data import RawGame, file_sig, load_raw

ROUND_END = -1
PHASE_OF_KIND = {
    "intro": "intro",
    "night_mafia": "night",
    "night_doctor": "night",
    "night_sheriff": "night",
    "night_don": "night",
    "mafia_talk": "night",
    "day_discuss": "day_discuss",
    "day_vote": "day_vote",
    "last_words": "day_vote",
    "best_move": "day_discuss",
    "defence": "day_vote",
}
PHASE_ICONS = {"intro": "👋", "night": "🌙", "night_analysis": "🌅", "day_discuss": "💬", "day_vote": "🗳️", "round_end": "⏹"}
PROBE_ROLE = "role_assessment"
PROBE_ROLE_LEGACY = "role_beliefs"
PROBE_SOCIAL = "social_map"
PROBE_SUSPICION = "suspicion_ranking"
PROBE_PLAN = "planned_action"
PROBE_PERSONALITY = "personality_profile"


@dataclass
class Step:
    idx: int
    round: int
    seq: int  # -1 = round end
    label: str
    phase: str
    ts: float
    speaker: str | None = None
    event_idx: int | None = None  # index into GameModel.events of the step's own message
    alive: frozenset[str] = frozenset()


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

    def step_of_label(self, label: str) -> int | None:
        for s in self.steps:
            if s.label == label:
                return s.idx
        return None

    def events_until(self, step: int) -> list[tuple[int, dict[str, Any]]]:
        return [(i, e) for i, e in enumerate(self.events) if self.event_step[i] <= step]

    def alive_at(self, step: int) -> set[str]:
        """Seats alive at a step as the transcript shows it (deaths already listed there count)."""
        last = len(self.steps) - 1
        alive = set(self.steps[step].alive)
        for _, e in self.events_until(step if step < last else 10**9):
            victim = e.get("victim") if e.get("kind") == "night_kill" else e.get("eliminated") if e.get("kind") == "day_eliminate" else None
            alive.discard(victim)
        return alive

    def belief(self, agent: str, step: int, probe_id: str) -> tuple[Any, bool]:
        rows = self.beliefs.get(agent)
        if not rows or step < 0 or step >= len(rows):
            return None, False
        return rows[step].get(probe_id, (None, False))


def _step_label(rnd: int, seq: int) -> str:
    return f"R{rnd} end" if seq == ROUND_END else f"R{rnd}.{seq}"


def _num(v: Any, default: float = math.inf) -> float:
    try:
        f = float(v)
        return default if math.isnan(f) else f
    except (TypeError, ValueError):
        return default


def build_model(raw: RawGame) -> GameModel:
    players = [p for p in (raw.setup.get("players") or []) if isinstance(p, dict) and p.get("name")]
    roles = {p["name"]: str(p.get("role", "")) for p in players}
    models = {p["name"]: str(p.get("model") or p.get("backend") or "") for p in players}
    events = raw.events

    # steps: distinct (round, seq) of probes and message events; round end after the round's messages
    keys: dict[tuple[int, int], dict[str, Any]] = {}
    for i, e in enumerate(events):
        if e.get("kind") in UTTERANCE_KINDS and isinstance(e.get("msg_seq"), int):
            k = (int(e.get("round") or 0), int(e["msg_seq"]))
            d = keys.setdefault(k, {"ts": math.inf, "phase": None, "speaker": None, "event": None})
            d["speaker"], d["event"] = e.get("player"), i
            d["phase"] = PHASE_OF_KIND.get(e["kind"], e["kind"])
            d["msg_ts"] = _num(e.get("ts"))
    probe_ok: dict[str, list[int]] = {}
    for p in raw.probes:
        try:
            k = (int(p.get("round")), int(p.get("public_msg_seq")))
        except (TypeError, ValueError):
            continue
        d = keys.setdefault(k, {"ts": math.inf, "phase": None, "speaker": None, "event": None})
        d["ts"] = min(d["ts"], _num(p.get("timestamp")))
        if not d["phase"] and p.get("phase"):
            d["phase"] = p.get("phase")
        if str(p.get("error") or "").startswith("human seat"):
            continue  # human seats are not probed: not a parse failure
        c = probe_ok.setdefault(str(p.get("probe_id")), [0, 0])
        c[1] += 1
        c[0] += bool(p.get("answer_parse_ok"))
    order = sorted(keys, key=lambda k: (k[0], math.inf if k[1] == ROUND_END else k[1]))
    deaths: dict[str, float] = {}
    for e in events:
        victim = e.get("victim") if e.get("kind") == "night_kill" else e.get("eliminated") if e.get("kind") == "day_eliminate" else None
        if isinstance(victim, str) and victim not in deaths:
            deaths[victim] = _num(e.get("ts"))
    steps: list[Step] = []
    for idx, k in enumerate(order):
        d = keys[k]
        ts = d["ts"] if d["ts"] != math.inf else d.get("msg_ts", math.inf)
        phase = d["phase"] or ("round_end" if k[1] == ROUND_END else "unknown")
        if k[1] == ROUND_END:
            phase = "round_end"
        alive = frozenset(n for n in roles if not (n in deaths and deaths[n] < ts))
        steps.append(Step(idx, k[0], k[1], _step_label(*k), phase, ts, d["speaker"], d["event"], alive))
    key_to_idx = {k: i for i, k in enumerate(order)}

    # event -> first step where it is visible: its own step for messages, else by timestamp
    event_step: list[int] = []
    step_ts = [s.ts for s in steps]
    for i, e in enumerate(events):
        own = None
        if e.get("kind") in UTTERANCE_KINDS and isinstance(e.get("msg_seq"), int):
            own = key_to_idx.get((int(e.get("round") or 0), int(e["msg_seq"])))
        if own is None:
            ts = _num(e.get("ts"))
            own = next((j for j, t in enumerate(step_ts) if t >= ts), len(steps))
            if e.get("kind") == "game_over" and steps:
                own = len(steps) - 1
        event_step.append(own)

    # beliefs: parsed answers at their step, then forward-filled per probe id (carried_forward)
    n = len(steps)
    fresh: dict[str, list[dict[str, Any]]] = {name: [dict() for _ in range(n)] for name in roles}
    for p in raw.probes:
        name = p.get("player_name")
        if name not in fresh or not p.get("answer_parse_ok"):
            continue
        try:
            j = key_to_idx[(int(p.get("round")), int(p.get("public_msg_seq")))]
        except (KeyError, TypeError, ValueError):
            continue
        fresh[name][j][str(p.get("probe_id"))] = p.get("answer_parsed")
    beliefs: dict[str, list[dict[str, tuple[Any, bool]]]] = {}
    for name, rows in fresh.items():
        cur: dict[str, tuple[Any, bool]] = {}
        out = []
        for r in rows:
            cur = {k: (v, True) for k, (v, _) in cur.items()}
            for pid, v in r.items():
                cur[pid] = (v, False)
            out.append(dict(cur))
        beliefs[name] = out
    over = next((e for e in reversed(events) if e.get("kind") == "game_over"), None)
    tot = sum(c[1] for c in probe_ok.values())
    ok = sum(c[0] for c in probe_ok.values())
    return GameModel(raw.game_id, raw.dir, players, roles, models, events, steps, event_step, beliefs,
                     tot, ok, {k: (v[0], v[1]) for k, v in probe_ok.items()},
                     str(over.get("winner")) if over else None, raw.setup)


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
    return e.get("kind") in NIGHT_ACTION_KINDS or e.get("kind") in ("mafia_talk", "night_sheriff_result", "night_don_result")
