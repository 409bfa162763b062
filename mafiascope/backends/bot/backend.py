"""BotBackend: the offline player behind the Backend protocol.

A reply is a pure function of (messages, seed, preset). The bot rebuilds its identity
from the system prompt and its beliefs by replaying every user message (observation
lines, then an instruction) and its own assistant replies. States are cached per message
prefix (bounded LRU keyed by a hash of the prefix), so a replay only processes what is new.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections import OrderedDict
from typing import Any

import mafiascope
from mafiascope.engine.parsing import parse_target

from ..base import Completion, CompletionRequest, estimate_tokens
from . import instructions, policy, probes, speech, ten
from .presets import BotParams, get_preset
from .reader import PROBE_MARKER, parse_observations, read_identity, split_names
from .state import BotState, ten_list

CACHE_SIZE = 4096


def _protocol_target(text: str, action: str | None, players: tuple[str, ...]) -> str | None:
    """Target named in the closing protocol line of one of this seat's own replies (read as the engine reads it)."""
    if not action:
        return None
    got = parse_target(text, action, list(players))
    return got.target if got.valid else None


class BotBackend:
    type = "bot"

    def __init__(self, name: str, preset: str = "balanced", model_label: str | None = None, params: BotParams | None = None):
        self.name = name
        self.preset = preset
        self.params = params or get_preset(preset)
        self.model_label = model_label or f"bot-{preset}"
        self._cache: OrderedDict[bytes, BotState] = OrderedDict()
        self.calls = 0
        self._lock = threading.Lock()  # probes may run on their own thread (mixed line-ups)

    # ------------------------------------------------------------------ protocol
    def describe(self) -> dict[str, Any]:
        return {
            "type": "bot",
            "name": self.name,
            "model": self.model_label,
            "preset": self.preset,
            "params": self.params.as_dict(),
            "library_version": mafiascope.__version__,
        }

    async def aclose(self) -> None:
        self._cache.clear()

    async def complete(self, request: CompletionRequest) -> Completion:
        t0 = time.perf_counter()
        try:
            with self._lock:
                text, meta = self.reply(request.messages, request.seed, request.kind)
        except Exception as exc:  # a bot bug must not crash the game: report it as a failed call
            return Completion(text="", ok=False, error=f"bot error: {type(exc).__name__}: {exc}")
        prompt_chars = sum(len(m.get("content", "")) for m in request.messages)
        return Completion(
            text=text,
            ok=True,
            latency_ms=int((time.perf_counter() - t0) * 1000),
            prompt_tokens=max(1, prompt_chars // 4),
            completion_tokens=estimate_tokens(text),
            tokens_estimated=True,
            served_model=self.model_label,
            finish_reason="stop",
            meta=meta,
        )

    # ------------------------------------------------------------------ core
    def reply(self, messages: list[dict[str, str]], seed: int | None, kind: str = "act") -> tuple[str, dict[str, Any]]:
        """The reply text for a context (sync; deterministic in messages, seed and preset)."""
        self.calls += 1
        rng = random.Random(0 if seed is None else seed)
        if not messages:
            return "", {"instruction": None}
        last = messages[-1]
        prefix = messages[:-1] if last.get("role") == "user" else messages
        st, h = self._fold(prefix)
        if last.get("role") != "user":
            return speech.plain(st, rng), {"instruction": None}
        content = last.get("content", "")
        pm = PROBE_MARKER.search(content)
        if pm or kind == "probe":
            obs_text, question = (content[: pm.start()], content[pm.end() :]) if pm else ("", content)
            st = self._state_after(st, h, obs_text, None)
            text, pid = probes.answer(st, question, rng)
            return text, {"probe": pid}
        inst = instructions.detect(content, st.ident.language)
        st = self._state_after(st, h, content[: inst.start] if inst else content, inst)
        return self._act(st, inst, rng), {"instruction": inst.kind if inst else None}

    def _fold(self, msgs: list[dict[str, str]]) -> tuple[BotState, Any]:
        """State after ``msgs`` (system + alternating user/assistant), using the prefix cache."""
        hashes = []
        h = hashlib.sha1(self.preset.encode())
        for m in msgs:
            h.update(b"\x00" + m.get("role", "").encode() + b"\x01" + m.get("content", "").encode("utf-8", "surrogatepass"))
            hashes.append(h.copy())
        start, st = 0, None
        for i in range(len(msgs) - 1, -1, -1):
            hit = self._cache.get(hashes[i].digest())
            if hit is not None:
                self._cache.move_to_end(hashes[i].digest())
                start, st = i + 1, hit
                break
        if st is None:
            system = msgs[0]["content"] if msgs and msgs[0].get("role") == "system" else ""
            st = BotState(read_identity(system), self.params)
            start = 1 if msgs and msgs[0].get("role") == "system" else 0
        if start < len(msgs):
            st = st.clone()
            for i in range(start, len(msgs)):
                m = msgs[i]
                if m.get("role") == "user":
                    content = m.get("content", "")
                    if PROBE_MARKER.search(content):  # never part of an acting context; ignore defensively
                        continue
                    inst = instructions.detect(content, st.ident.language)
                    self._apply_user(st, content[: inst.start] if inst else content, inst)
                elif m.get("role") == "assistant":
                    self._apply_assistant(st, m.get("content", ""))
                self._put(hashes[i].digest(), st.clone() if i < len(msgs) - 1 else st)
        return st, (hashes[-1] if hashes else h)

    def _state_after(self, st: BotState, h: Any, obs_text: str, inst: instructions.Instruction | None) -> BotState:
        if not obs_text.strip() and inst is None:
            return st
        key_h = h.copy()
        key_h.update(b"\x02" + obs_text.encode("utf-8", "surrogatepass") + b"\x03" + (inst.kind.encode() if inst else b""))
        key = key_h.digest()
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        st = st.clone()
        self._apply_user(st, obs_text, inst)
        self._put(key, st)
        return st

    def _put(self, key: bytes, st: BotState) -> None:
        self._cache[key] = st
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    def _apply_user(self, st: BotState, obs_text: str, inst: instructions.Instruction | None) -> None:
        lang = st.ident.language
        if inst is not None and "players" in inst.groups:
            st.add_players(split_names(inst.groups["players"]), alive=True)
        if inst is not None and inst.groups.get("allies", "").strip():
            obs_text = obs_text + "\n" + inst.groups["allies"]
        if obs_text.strip():
            for ob in parse_observations(obs_text, lang, st.players):
                st.apply(ob)
        if inst is not None:
            if "round" in inst.groups:
                st.new_round(int(inst.groups["round"]))
            _ten_instruction(st, inst)
            if inst.kind == "reask":
                act = instructions.reask_action(inst.groups.get("fmt", ""), lang)
                st.phase = {"vote": "vote", "kill": "night_mafia", "protect": "night_doctor", "check": "night_sheriff"}.get(
                    act or "", st.phase
                )
            else:
                st.phase = inst.kind

    def _apply_assistant(self, st: BotState, text: str) -> None:
        action = {"vote": "vote", "night_mafia": "kill", "night_doctor": "protect", "night_sheriff": "check",
                  "night_don": "check", "remove_all": None}.get(st.phase)  # fmt: skip
        if st.phase == "nominate":
            noms = ten_list(text, "nominate", st.players)
            st.apply_own("discuss", text, None)
            if noms:
                st.my_noms.append((st.round, noms[0]))
            return
        if st.phase in ("open_floor", "defence", "last_words"):
            st.apply_own("discuss", text, None)  # my own public words, like a discussion speech
            return
        if st.phase == "order":
            order = ten_list(text, "order", st.players)
            if order:
                st.shot_order, st.don_name = order, st.me
            return
        st.apply_own(st.phase, text, _protocol_target(text, action, st.players))

    # ------------------------------------------------------------------ acting
    def _act(self, st: BotState, inst: instructions.Instruction | None, rng: random.Random) -> str:
        if inst is None:
            return speech.plain(st, rng)
        kind = inst.kind
        if kind == "reask":
            kind = st.phase
        if kind == "intro":
            return speech.intro(st, rng)
        if kind == "discuss":
            return speech.discussion(st, policy.day_plan(st, rng, voting=False), rng)
        if kind == "vote" and (st.ident.variant is not None or "nominees" in inst.groups):
            return ten.on_vote(st, inst if inst.kind != "reask" else None, rng)
        if kind == "vote":
            return speech.vote(st, policy.day_plan(st, rng, voting=True), rng)
        if kind == "night_mafia" and st.ident.variant is not None:
            return ten.on_shot(st, inst, rng)
        night = {"night_mafia": ("kill", policy.kill_target), "night_doctor": ("protect", policy.protect_target),
                 "night_sheriff": ("check", policy.check_target)}  # fmt: skip
        if kind in night:
            action, fn = night[kind]
            target = fn(st, rng) or (st.others()[0] if st.others() else st.me)
            return speech.night(st, action, target, rng)
        handler = EXTRA_HANDLERS.get(kind)
        if handler is not None:
            return handler(st, inst if inst.kind != "reask" else None, rng)
        return speech.plain(st, rng)


def _ten_instruction(st: BotState, inst: instructions.Instruction) -> None:
    """What a ten-seat instruction itself tells: the shot order shown, the vote's candidates, night or day."""
    g = inst.groups
    if inst.kind == "night_mafia" and "order" in g:
        st.shot_view = [n for n in split_names(g["order"]) if n in st.players]
    if inst.kind in ("vote", "remove_all"):
        st.vote_cands = [n for n in split_names(g.get("nominees", "")) if n in st.players]
    if inst.kind in ("mafia_talk", "order", "night_mafia", "night_don", "night_sheriff", "night_doctor"):
        st.night_talk = True
    elif inst.kind != "reask":
        st.night_talk = False


# kind -> handler(state, instruction or None on a re-ask, rng) -> reply; the ten-seat rules fill it
EXTRA_HANDLERS: dict[str, Any] = dict(ten.HANDLERS)
