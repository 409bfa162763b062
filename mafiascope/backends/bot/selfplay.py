"""A tiny self-play driver for bot tests and benchmarks (NOT the game engine).

It renders contexts exactly as docs/architecture.md describes (system prompt, observation
lines + instruction per user message, probe = copy of the context + one user message) with
the prompt packs, so the bots can be exercised end to end before and independently of
:mod:`mafiascope.engine.runner`. Seven seats, classic rules, optional Sheriff.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from mafiascope.engine import prompts

from ..base import CompletionRequest
from .backend import BotBackend

PROBE_MARKER = "[PRIVATE PROBE - answer honestly]"

# probe questions in the revised battery's answer formats (wording is ours)
QUESTIONS = {
    "en": {
        "role_assessment": 'You are {me}. For every alive player ({players}), including yourself, give the role you believe they have, '
        'your certainty (0-100) and a short reason. Answer ONLY as JSON: [{{"player": "...", "guessed_role": "{roles}", "confidence": N, "reason": "..."}}, ...]',
        "suspicion_ranking": 'Order the alive players ({players}) from most to least suspicious. Answer ONLY as JSON: [{{"player": "...", "score": N}}, ...]',
        "social_map": 'You are {me}. How does each alive player ({players}) feel about YOU right now? Answer ONLY as JSON: '
        '{{"toward_me": [{{"player": "...", "attitude": "trusts|neutral|suspects", "confidence": N, "reason": "..."}}, ...]}}',
        "personality_profile": 'You are {me}. Estimate the Big Five (0-100) of each alive player ({players}) except yourself. '
        'Answer ONLY as JSON: [{{"player": "...", "O": N, "C": N, "E": N, "A": N, "N": N, "summary": "..."}}, ...]',
        "planned_action": 'You are {me}. What do you plan to do next and why? Answer ONLY as JSON: {{"action": "...", "target": "...", "reasoning": "..."}}',
    },
    "ru": {
        "role_assessment": 'Ты — {me}. Для каждого живого игрока ({players}), включая себя, назови его роль, уверенность (0-100) и короткую '
        'причину. Отвечай ТОЛЬКО JSON: [{{"player": "...", "guessed_role": "{roles}", "confidence": N, "reason": "..."}}, ...]',
        "suspicion_ranking": 'Упорядочь живых игроков ({players}) от самого подозрительного к наименее. Отвечай ТОЛЬКО JSON: [{{"player": "...", "score": N}}, ...]',
        "social_map": 'Ты — {me}. Как каждый живой игрок ({players}) относится к ТЕБЕ сейчас? Отвечай ТОЛЬКО JSON: '
        '{{"toward_me": [{{"player": "...", "attitude": "trusts|neutral|suspects", "confidence": N, "reason": "..."}}, ...]}}',
        "personality_profile": 'Ты — {me}. Оцени Большую пятёрку (0-100) каждого живого игрока ({players}), кроме себя. '
        'Отвечай ТОЛЬКО JSON: [{{"player": "...", "O": N, "C": N, "E": N, "A": N, "N": N, "summary": "..."}}, ...]',
        "planned_action": 'Ты — {me}. Что ты собираешься сделать дальше и почему? Отвечай ТОЛЬКО JSON: {{"action": "...", "target": "...", "reasoning": "..."}}',
    },
}


@dataclass
class Seat:
    name: str
    role: str
    backend: BotBackend
    personality: dict[str, int]
    messages: list[dict[str, str]] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    alive: bool = True


@dataclass
class Result:
    winner: str
    rounds: int
    roles: dict[str, str]
    events: list[dict[str, Any]]
    probes: list[dict[str, Any]]
    act_calls: int = 0
    probe_calls: int = 0


def _target(text: str, word: str, names: list[str]) -> str | None:
    m = None
    for m in re.finditer(rf"{re.escape(word)}\s*:\s*(?:\S+\s+)?([^\s.!]+)\s*$", text, re.M):
        pass
    if m and m.group(1) in names:
        return m.group(1)
    return None


class SelfPlay:
    def __init__(self, seed: int = 0, language: str = "en", presets: list[str] | None = None, sheriff: bool = False,
                 probes: bool = True, reveal_roles: bool = True, n_seats: int = 7, max_rounds: int = 6):
        self.rng = random.Random(seed)
        self.act_rng = random.Random(seed * 7919 + 1)
        self.probe_rng = random.Random(seed * 104729 + 2)
        self.pack = prompts.pack(language)
        self.lang = language
        self.probes_on = probes
        self.reveal = reveal_roles
        self.max_rounds = max_rounds
        names = self.rng.sample(list(prompts.NAME_POOL), n_seats)
        n_maf = max(1, round(n_seats * 2 / 7))
        roles = ["Mafia"] * n_maf + ["Doctor"] + (["Sheriff"] if sheriff else [])
        roles += ["Villager"] * (n_seats - len(roles))
        self.rng.shuffle(roles)
        presets = presets or ["balanced"]
        backends: dict[str, BotBackend] = {}
        self.seats: list[Seat] = []
        for i, (n, r) in enumerate(zip(names, roles)):
            preset = presets[i % len(presets)]
            be = backends.setdefault(preset, BotBackend(f"bot-{preset}", preset=preset))
            pers = {t: self.rng.choice((15, 30, 50, 70, 85)) for t in prompts.TRAITS}
            self.seats.append(Seat(n, r, be, pers))
        for s in self.seats:
            partners = [o.name for o in self.seats if o.role == "Mafia" and s.role == "Mafia" and o is not s]
            s.messages = [{"role": "system", "content": prompts.system_prompt(self.pack, name=s.name, role=s.role, partners=partners, personality=s.personality)}]
        self.events: list[dict[str, Any]] = []
        self.probe_log: list[dict[str, Any]] = []
        self.act_calls = self.probe_calls = 0

    # ---------------------------------------------------------------- plumbing
    def alive(self) -> list[Seat]:
        return [s for s in self.seats if s.alive]

    def names(self) -> list[str]:
        return [s.name for s in self.alive()]

    def tell(self, line: str, to: list[Seat] | None = None, exclude: Seat | None = None) -> None:
        for s in (to if to is not None else self.alive()):
            if s is not exclude:
                s.pending.append(line)

    def act(self, s: Seat, instruction: str, purpose: str) -> str:
        content = ("\n".join(s.pending) + "\n\n" if s.pending else "") + instruction
        s.pending = []
        s.messages.append({"role": "user", "content": content})
        req = CompletionRequest(messages=list(s.messages), kind="act", seat=s.name, purpose=purpose, seed=self.act_rng.randrange(2**31))
        text = s.backend.reply(req.messages, req.seed, "act")[0]
        self.act_calls += 1
        s.messages.append({"role": "assistant", "content": text})
        self.events.append({"kind": purpose, "player": s.name, "response": text})
        return text

    def probe_all(self, speaker: Seat | None) -> None:
        if not self.probes_on:
            return
        players = ", ".join(self.names())
        roles = "Mafia|Villager|Doctor|Unknown"
        for s in self.alive():
            for pid, q in QUESTIONS[self.lang].items():
                if pid == "planned_action" and s is not speaker:
                    continue
                question = q.format(me=s.name, players=players, roles=roles)
                content = ("\n".join(s.pending) + "\n\n" if s.pending else "") + PROBE_MARKER + "\n" + question
                msgs = s.messages + [{"role": "user", "content": content}]
                text = s.backend.reply(msgs, self.probe_rng.randrange(2**31), "probe")[0]
                self.probe_calls += 1
                self.probe_log.append({"player": s.name, "role": s.role, "probe_id": pid, "answer": text, "question": question})

    def winner(self) -> str | None:
        m = sum(1 for s in self.alive() if s.role == "Mafia")
        t = len(self.alive()) - m
        return "Villagers" if m == 0 else "Mafia" if m >= t else None

    # ---------------------------------------------------------------- game
    def run(self) -> Result:
        p = self.pack
        for s in self.seats:
            text = self.act(s, p.intro.format(players=", ".join(self.names())), "intro")
            self.tell(p.obs_intro.format(name=s.name, text=text), exclude=s)
            self.probe_all(s)
        rnd = 0
        win = None
        while win is None and rnd < self.max_rounds:
            rnd += 1
            self.night(rnd)
            win = self.winner()
            if win:
                break
            self.day(rnd)
            win = self.winner()
        return Result(win or "Draw", rnd, {s.name: s.role for s in self.seats}, self.events, self.probe_log, self.act_calls, self.probe_calls)

    def night(self, rnd: int) -> None:
        p = self.pack
        players = ", ".join(self.names())
        choices: list[str] = []
        mafia = [s for s in self.alive() if s.role == "Mafia"]
        for s in mafia:
            allies = "".join(p.obs_ally_choice.format(name=n, target=t) + "\n" for n, t in choices)
            text = self.act(s, p.night_mafia.format(round=rnd, players=players, allies_choices=allies), "night_mafia")
            t = _target(text, p.action_word, self.names())
            if t:
                choices.append((s.name, t))
            self.probe_all(s)
        protected = None
        for s in self.alive():
            if s.role == "Doctor":
                protected = _target(self.act(s, p.night_doctor.format(round=rnd, players=players), "night_doctor"), p.action_word, self.names())
                self.probe_all(s)
            if s.role == "Sheriff":
                checks = getattr(self, "_checks", {}).get(s.name, [])
                text = self.act(s, p.night_sheriff.format(round=rnd, players=players, checks=", ".join(checks) or p.no_checks), "night_sheriff")
                t = _target(text, p.action_word, self.names())
                if t:
                    verdict = p.verdict_mafia if next(o for o in self.seats if o.name == t).role == "Mafia" else p.verdict_not_mafia
                    s.pending.append(p.obs_check.format(target=t, verdict=verdict))
                    self.__dict__.setdefault("_checks", {}).setdefault(s.name, []).append(f"{t}: {verdict}")
                    self.events.append({"kind": "check", "player": s.name, "target": t, "verdict": verdict})
                self.probe_all(s)
        victim = choices[-1][1] if choices else None
        if victim and victim == protected:
            result = p.save_result.format(saved=victim)
        elif victim:
            result = p.kill_result.format(victim=victim)
            next(s for s in self.seats if s.name == victim).alive = False
        else:
            result = p.no_kill_result
        self.events.append({"kind": "night_result", "result": result, "victim": victim, "protected": protected})
        self.tell(p.obs_night_result.format(result=result), to=self.seats)
        self.probe_all(None)

    def day(self, rnd: int) -> None:
        p = self.pack
        for s in self.alive():
            text = self.act(s, p.discuss.format(round=rnd, players=", ".join(self.names())), "day_discuss")
            self.tell(p.obs_said.format(name=s.name, text=text), exclude=s)
            self.probe_all(s)
        votes: dict[str, str] = {}
        for s in self.alive():
            text = self.act(s, p.vote.format(round=rnd, players=", ".join(self.names())), "day_vote")
            t = _target(text, p.vote_word, self.names())
            if t:
                votes[s.name] = t
            self.tell(p.obs_voted.format(name=s.name, text=text), exclude=s)
            self.probe_all(s)
        tally: dict[str, int] = {}
        for t in votes.values():
            tally[t] = tally.get(t, 0) + 1
        self.events.append({"kind": "vote_tally", "votes": votes, "round": rnd})
        top = sorted(tally.items(), key=lambda kv: -kv[1])
        if top and (len(top) == 1 or top[0][1] > top[1][1]):
            out = next(s for s in self.seats if s.name == top[0][0])
            out.alive = False
            line = (p.obs_eliminated_role.format(name=out.name, role=p.role_names[out.role]) if self.reveal
                    else p.obs_eliminated.format(name=out.name))
            self.events.append({"kind": "eliminate", "player": out.name, "role": out.role})
        else:
            line = p.obs_no_elimination.format(reason=p.reasons["tie"])
        self.tell(line, to=self.seats)
        self.tell(p.obs_round_start.format(round=rnd + 1), to=self.seats)
        self.probe_all(None)
