"""The ten-seat family's replies: what each stage does with a seat's reply (a mixin of
:class:`~mafiascope.engine.phases.tournament.TournamentPhases`, whose helpers and stage
entries it uses: ``_d``, ``_opt``, ``_set``, ``_begin_day``, ``_night_stage``, ``_start_vote``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...logs.schema import MAFIA_ROLES, DonResult, Nomination, SheriffResult, ShotOrder
from .. import prompts
from ..records import event
from ..state import GameState
from .base import Ask, Outcome, ProbeStep, Reply, utterance_event
from .ten_text import host_line, is_pass, mentioned, parse_order


class TenSeatReplies:
    if TYPE_CHECKING:  # TournamentPhases' helpers and stage entries this mixin calls

        @staticmethod
        def _d(state: GameState) -> dict[str, Any]: ...

        @staticmethod
        def _opt(state: GameState, key: str, default: Any = None) -> Any: ...

        def _set(self, state: GameState, stage: str, remaining: list[str] | None = None) -> None: ...

        def _begin_day(self, state: GameState, rnd: int) -> None: ...

        def _start_vote(self, state: GameState, stage: str, candidates: list[str]) -> None: ...

        def _night_stage(self, state: GameState, stage: str) -> None: ...

    def apply_reply(self, state: GameState, ask: Ask, reply: Reply) -> Outcome:
        ev = utterance_event(state, ask, reply)
        st = state.pending.stage
        state.pending.remaining = state.pending.remaining[1:]
        handler = self._REPLY_HANDLERS.get(st)
        if handler is None:
            raise RuntimeError(f"tournament rules: reply in stage {st!r}")
        events = [ev, *handler(self, state, ask, reply, ev)]
        if ask.visible_to is not None:  # a private reply: only its author is probed
            probe = ProbeStep(state.round, state.msg_seq, "night", [ask.seat], speaker=ask.seat)
        else:
            probe = ProbeStep(state.round, state.msg_seq, ask.kind, state.alive_names(), speaker=ask.seat)
        return Outcome(events, probe)

    # Each reply handler updates the state for the reply of its stage (``ev``: the reply's event,
    # which it may annotate) and returns the further events the reply causes.
    def _on_night_zero(self, state: GameState, ask: Ask, reply: Reply, ev: dict[str, Any]) -> list[dict[str, Any]]:
        d, events = self._d(state), []
        if state.seat(ask.seat).role == "Don":
            town = [n for n in state.alive_names() if not state.seat(n).is_mafia]
            d["order"] = parse_order(reply.text, town)
            ev["order"] = list(d["order"])
            events.append(event(ShotOrder, state.game_id, round=state.round, don=ask.seat, order=list(d["order"]),
                                visible_to=state.mafia_names()))  # fmt: skip
        if not state.pending.remaining:
            self._begin_day(state, 1)
        return events

    def _on_mafia_talk(self, state: GameState, ask: Ask, reply: Reply, ev: dict[str, Any]) -> list[dict[str, Any]]:
        d, pend = self._d(state), state.pending
        if not pend.remaining:
            d["talk_round"] += 1
            if d["talk_round"] < int(self._opt(state, "night_talk_turns", 1)):
                pend.remaining = [s.name for s in state.alive_with_role(*MAFIA_ROLES)]
            else:
                self._night_stage(state, "night_mafia")
        return []

    def _on_night_mafia(self, state: GameState, ask: Ask, reply: Reply, ev: dict[str, Any]) -> list[dict[str, Any]]:
        d, pend = self._d(state), state.pending
        ok = bool(reply.target_valid and reply.target)
        if self._opt(state, "mafia_shot") == "unanimous":
            d["shots"][ask.seat] = reply.target if ok else None
        elif ok:
            pend.mafia_targets.append(f"{ask.seat}>{reply.target}")
        if not pend.remaining:
            self._night_stage(state, "night_don")
        return []

    def _on_check(self, state: GameState, ask: Ask, reply: Reply, ev: dict[str, Any]) -> list[dict[str, Any]]:
        """The Don's check for the Sheriff, or the Sheriff's for Mafia: the result reaches only the checker."""
        st, events = state.pending.stage, []
        if reply.target_valid and reply.target:
            target = state.seat(reply.target)
            if st == "night_don":
                verdict = "Sheriff" if target.role == "Sheriff" else "Not Sheriff"
                state.don_checks.setdefault(ask.seat, {})[reply.target] = verdict
                events.append(event(DonResult, state.game_id, round=state.round, don=ask.seat,
                                    checked=reply.target, result=verdict, visible_to=[ask.seat]))  # fmt: skip
            else:
                verdict = "Mafia" if target.is_mafia else "Not Mafia"
                state.sheriff_checks.setdefault(ask.seat, {})[reply.target] = verdict
                events.append(event(SheriffResult, state.game_id, round=state.round, sheriff=ask.seat,
                                    checked=reply.target, result=verdict, visible_to=[ask.seat]))  # fmt: skip
        self._night_stage(state, "night_sheriff" if st == "night_don" else "night_resolve")
        return events

    def _on_words(self, state: GameState, ask: Ask, reply: Reply, ev: dict[str, Any]) -> list[dict[str, Any]]:
        d = self._d(state)
        if ask.kind == "best_move":
            d["best_move_done"] = True
            ev["suspects"] = list(reply.targets or [])
        if not state.pending.remaining:
            d["leaving"] = []
            self._set(state, "after_words")
        return []

    def _on_speech(self, state: GameState, ask: Ask, reply: Reply, ev: dict[str, Any]) -> list[dict[str, Any]]:
        d, events = self._d(state), []
        state.phase = "day_discuss"
        for n in self._note_mentions(state, ask.seat, reply.text):
            if n not in d["floor_queue"]:
                d["floor_queue"].append(n)  # named players may answer first on an open floor
        if ask.action == "nominate":
            nominee = reply.targets[0] if reply.targets else None
            if nominee and nominee not in d["nominees"]:
                d["nominees"].append(nominee)
                d["nominated_by"][nominee] = ask.seat
                ev["nominations"] = [nominee]
                events.append(event(Nomination, state.game_id, round=state.round, nominator=ask.seat, nominee=nominee))
            elif nominee:
                ev["nominations"] = []
                ev["nomination_note"] = "already nominated"
        d["turns"][ask.seat] = d["turns"].get(ask.seat, 0) + 1
        if not state.pending.remaining:
            if self._opt(state, "open_floor"):
                events.append(host_line(state, "host_open_floor"))
                self._set(state, "floor")
                self._pick_floor(state)
            else:
                self._set(state, "day_end")
        return events

    def _on_floor(self, state: GameState, ask: Ask, reply: Reply, ev: dict[str, Any]) -> list[dict[str, Any]]:
        d = self._d(state)
        state.phase = "day_discuss"
        if reply.fault or is_pass(reply.text, prompts.pack(state.language).ten["pass_word"]):
            ev["passed"] = True
            d["passed"].append(ask.seat)
        else:
            d["turns"][ask.seat] = d["turns"].get(ask.seat, 0) + 1
            d["passed"] = []
            d["last_speaker"] = ask.seat
            d["named_by"].pop(ask.seat, None)
            for n in self._note_mentions(state, ask.seat, reply.text):
                if n not in d["floor_queue"]:
                    d["floor_queue"].append(n)
        d["floor_queue"] = [n for n in d["floor_queue"] if n != ask.seat]
        self._pick_floor(state)
        return []

    def _on_defence(self, state: GameState, ask: Ask, reply: Reply, ev: dict[str, Any]) -> list[dict[str, Any]]:
        if not state.pending.remaining:
            self._start_vote(state, "runoff", list(self._d(state)["tied"]))
        return []

    def _on_vote(self, state: GameState, ask: Ask, reply: Reply, ev: dict[str, Any]) -> list[dict[str, Any]]:
        pend = state.pending
        state.phase = "day_vote"
        ev["ballot"] = self._d(state)["vote_stage"]
        if reply.target_valid and reply.target:
            pend.votes[ask.seat] = reply.target
        else:
            pend.invalid[ask.seat] = reply.parse_note or (reply.fault or {}).get("fallback", "invalid")
        if not pend.remaining:
            self._set(state, "tally")
        return []

    _REPLY_HANDLERS: dict[str, Callable[..., list[dict[str, Any]]]] = {
        "night_zero": _on_night_zero, "mafia_talk": _on_mafia_talk, "night_mafia": _on_night_mafia,
        "night_don": _on_check, "night_sheriff": _on_check, "words": _on_words, "speech": _on_speech,
        "floor": _on_floor, "defence": _on_defence, "vote": _on_vote,
    }  # fmt: skip

    def _note_mentions(self, state: GameState, speaker: str, text: str) -> list[str]:
        named = [n for n in mentioned(text, state.alive_names()) if n != speaker]
        by = self._d(state)["named_by"]
        for n in named:
            by.setdefault(n, [])
            if speaker not in by[n]:
                by[n].append(speaker)
        return named

    def _pick_floor(self, state: GameState) -> None:
        """Next open-floor speaker: a named player first, else the next hand in seat order; none -> day ends."""
        d = self._d(state)
        cap = int(self._opt(state, "day_turns", 3))
        alive = state.alive_names()

        def can(n: str) -> bool:
            return n in alive and d["turns"].get(n, 0) < cap and n not in d["passed"] and n != d["last_speaker"]

        for n in d["floor_queue"]:
            if can(n):
                state.pending.remaining = [n]
                return
        last = d["last_speaker"]
        start = alive.index(last) + 1 if last in alive else 0
        for n in alive[start:] + alive[:start]:
            if can(n):
                state.pending.remaining = [n]
                return
        state.pending.remaining = []  # next() turns an empty floor into day_end
