"""Ten-seat (tournament) Mafia: one state machine for the sport, open-table and imbalanced variants.

Three Mafia (one the Don) against seven town (one the Sheriff). A round is a day followed
by its night: day r, then night r, whose result is announced on the morning of day r+1
(sport games open with night 0, the Mafia's only meeting). The variants differ only in
``RuleSet.option`` values (see ``engine/rules.py``); nothing here branches on a variant name.

Stages (``state.pending.stage``; starred stages are settled by the engine, the others ask seats)::

    begin* -> [night_zero] -> morning* -> [words] -> speech -> [floor] -> day_end*
      -> [defence] -> vote -> tally* -> [vote again] -> [words] -> after_words*
      -> [mafia_talk] -> night_mafia -> [night_don] -> [night_sheriff] -> night_resolve*
      -> round_end* -> morning* ...

Information isolation lives in ``visible_to``: Mafia talk and vote-rule shots reach the
living Mafia; a sport shot reaches only its shooter; a check and its result reach only the
checker; ``night_shots`` (the engine's record of a sport night) reaches no seat.

The host only narrates: its lines are ``host`` events from templates, retold by an LLM
backend when ``options.host == "llm"`` and ``options.host_backend`` names one (see
:meth:`TournamentPhases.narrate`). Every count, shot and check is settled here.
"""

from __future__ import annotations

import re
from typing import Any

from ...backends.base import CompletionRequest
from ...logs.schema import (MAFIA_ROLES, DayEliminate, DonResult, HostLine, NightAnalysis, NightKill, NightNoKill, NightShots,
                            Nomination, NoElimination, SheriffResult, ShotOrder, VoteTally)
from .. import prompts
from ..markers import PROTOCOL_MARKERS, ActionMarker, Markers
from ..parsing import match_name, parse_list, strip_think
from ..records import event
from ..state import GameState
from .base import Ask, Outcome, ProbeStep, Reply, Resolve, game_over_event, plurality, round_end, utterance_event, win_check

RESOLVES = ("begin", "morning", "day_end", "tally", "after_words", "night_resolve", "round_end")
NIGHT_STAGES = ("mafia_talk", "night_mafia", "night_don", "night_sheriff")


def _csv(names: list[str]) -> str:
    return ", ".join(names)


def _host(state: GameState, key: str, **kw: Any) -> dict[str, Any]:
    p = prompts.pack(state.language)
    text = p.ten[key].format(**kw)
    return event(HostLine, state.game_id, round=state.round, text=text, template=key, host="template")


def mentioned(text: str, names: list[str]) -> list[str]:
    """Players named in a speech (whole-word, case-insensitive; Russian inflections via the parser)."""
    out: list[str] = []
    for tok in re.findall(r"[\w’']+", text or ""):
        if len(tok) < 3:
            continue
        name, note = match_name(tok, names)
        if name and note in ("exact", "russian inflection") and name not in out:
            out.append(name)
    return out


# the ten-seat protocol lines: the shared ones plus nominations, the best move and the Don's order
MARKERS: Markers = PROTOCOL_MARKERS.with_actions(
    nominate=ActionMarker(heads=("NOMINATE", "ВЫСТАВЛЯЮ")),
    suspects=ActionMarker(heads=("SUSPECTS", "ПОДОЗРЕВАЮ")),
    order=ActionMarker(heads=("ORDER", "ПОРЯДОК")),
)


def parse_order(text: str, names: list[str]) -> list[str]:
    """The Don's ``ORDER: A, B, C`` line (last one wins), resolved among ``names``."""
    return parse_list(text, "order", names, limit=len(names), markers=MARKERS)


def is_pass(text: str, word: str) -> bool:
    t = re.sub(r"[*_`.!\s]+", " ", text or "").strip().upper()
    return t in (word.upper(), "PASS") or (len(t) <= 24 and t.split(" ")[0] in (word.upper(), "PASS"))


class TournamentPhases:
    markers: Markers = MARKERS  # the protocol lines this family's seats write

    # ================================================================ helpers
    @staticmethod
    def _d(state: GameState) -> dict[str, Any]:
        return state.pending.data

    @staticmethod
    def _opt(state: GameState, key: str, default: Any = None) -> Any:
        return state.rules.option(key, default)

    @staticmethod
    def _seat_order(state: GameState, rotate: int = 0) -> list[str]:
        alive = state.alive_names()  # seat order (seats are stored by index)
        if not alive:
            return []
        k = rotate % len(alive)
        return alive[k:] + alive[:k]

    def _set(self, state: GameState, stage: str, remaining: list[str] | None = None) -> None:
        state.pending.stage = stage
        state.pending.remaining = list(remaining or [])

    # ================================================================ set-up
    def start(self, state: GameState) -> None:
        d = self._d(state)
        d.update(order=[], first_shot=None, night_victim=None, shots={}, leaving=[], after_words=None,
                 nominees=[], nominated_by={}, candidates=[], vote_stage=None, tied=[], turns={},
                 floor_queue=[], passed=[], named_by={}, last_speaker=None, talk_round=0)  # fmt: skip
        state.round, state.msg_seq, state.phase = 0, 0, "begin"
        self._set(state, "begin")

    # ================================================================ decisions
    def next(self, state: GameState) -> Ask | Resolve:
        st = state.pending.stage
        if st in RESOLVES:
            return Resolve(st)
        if st == "floor" and not state.pending.remaining:
            return Resolve("day_end")
        name = state.pending.remaining[0]
        seat = state.seat(name)
        p = prompts.pack(seat.language)
        t = p.ten
        alive = state.alive_names()
        players = _csv(alive)
        d = self._d(state)
        rnd = state.round
        if st == "night_zero":
            key = "night_zero_don" if seat.role == "Don" else "night_zero"
            return Ask(name, "mafia_talk", t[key].format(players=players), visible_to=state.mafia_names())
        if st == "mafia_talk":
            turns = int(self._opt(state, "night_talk_turns", 1))
            instr = t["mafia_talk"].format(round=rnd, players=players, turn=d["talk_round"] + 1, turns=turns)
            return Ask(name, "mafia_talk", instr, visible_to=state.mafia_names())
        if st == "night_mafia":
            cands = [n for n in alive if not state.seat(n).is_mafia]
            if self._opt(state, "mafia_shot") == "unanimous":
                order = [n for n in d["order"] if n in cands]
                instr = t["night_shot"].format(round=rnd, players=players, order=_csv(order) or t["no_order"])
                return Ask(name, "night_mafia", instr, "kill", cands, visible_to=[name])
            instr = p.night_mafia.format(round=rnd, players=players, allies_choices="")
            return Ask(name, "night_mafia", instr, "kill", cands, visible_to=state.mafia_names())
        if st == "night_don":
            done = state.don_checks.get(name, {})
            checks = "; ".join(f"{k}: {t['verdict_sheriff'] if v == 'Sheriff' else t['verdict_not_sheriff']}" for k, v in done.items())
            instr = t["night_don"].format(round=rnd, players=players, checks=checks or p.no_checks)
            return Ask(name, "night_don", instr, "check", [n for n in alive if n != name], visible_to=[name])
        if st == "night_sheriff":
            done = state.sheriff_checks.get(name, {})
            checks = "; ".join(f"{k}: {p.verdict_mafia if v == 'Mafia' else p.verdict_not_mafia}" for k, v in done.items())
            instr = p.night_sheriff.format(round=rnd, players=players, checks=checks or p.no_checks)
            return Ask(name, "night_sheriff", instr, "check", [n for n in alive if n != name], visible_to=[name])
        if st == "words":
            how = dict(d["leaving"]).get(name, "vote")
            if how == "shot" and d["first_shot"] == name and not d.get("best_move_done"):
                instr = t["best_move"].format(players=players)
                return Ask(name, "best_move", instr, "suspects", [n for n in alive if n != name], optional_target=True)
            instr = t["last_words"].format(players=players, how=t["how_" + how])
            return Ask(name, "last_words", instr)
        if st == "speech":
            if self._opt(state, "nominations"):
                noms = [n for n in d["nominees"] if n in alive]
                instr = t["speech_nominate"].format(round=rnd, players=players, nominees=_csv(noms) or t["none"])
                return Ask(name, "day_discuss", instr, "nominate", [n for n in alive if n != name], optional_target=True)
            return Ask(name, "day_discuss", p.discuss.format(round=rnd, players=players))
        if st == "floor":
            by = [n for n in d["named_by"].get(name, []) if n != name]
            cue = t["cue_named"].format(names=_csv(by)) if by else ""
            turns = int(self._opt(state, "day_turns", 3))
            instr = t["open_floor"].format(round=rnd, players=players, cue=cue, turn=d["turns"].get(name, 0) + 1, turns=turns)
            return Ask(name, "day_discuss", instr)
        if st == "defence":
            return Ask(name, "defence", t["defence"].format(round=rnd, players=players, nominees=_csv(d["tied"])))
        if st == "vote":
            vs = d["vote_stage"]
            cands = list(d["candidates"])
            if vs == "remove_all":
                instr = t["remove_all"].format(round=rnd, players=players, nominees=_csv(d["tied"]))
                return Ask(name, "day_vote", instr, "vote", [t["yes"], t["no"]])
            if vs in ("revote", "runoff"):
                instr = t["revote"].format(round=rnd, players=players, nominees=_csv(cands))
            elif self._opt(state, "nominations"):
                instr = t["vote_nominees"].format(round=rnd, players=players, nominees=_csv(cands))
            else:
                instr = p.vote.format(round=rnd, players=players)
            return Ask(name, "day_vote", instr, "vote", cands)
        raise RuntimeError(f"tournament rules: unknown stage {st!r}")

    # ================================================================ replies
    def apply_reply(self, state: GameState, ask: Ask, reply: Reply) -> Outcome:
        ev = utterance_event(state, ask, reply)
        pend = state.pending
        d = self._d(state)
        st = pend.stage
        p = prompts.pack(state.language)
        events: list[dict[str, Any]] = [ev]
        pend.remaining = pend.remaining[1:]
        private = ask.visible_to is not None
        if st == "night_zero":
            if state.seat(ask.seat).role == "Don":
                town = [n for n in state.alive_names() if not state.seat(n).is_mafia]
                d["order"] = parse_order(reply.text, town)
                ev["order"] = list(d["order"])
                events.append(event(ShotOrder, state.game_id, round=state.round, don=ask.seat, order=list(d["order"]),
                                    visible_to=state.mafia_names()))  # fmt: skip
            if not pend.remaining:
                self._begin_day(state, 1)
        elif st == "mafia_talk":
            if not pend.remaining:
                d["talk_round"] += 1
                if d["talk_round"] < int(self._opt(state, "night_talk_turns", 1)):
                    pend.remaining = [s.name for s in state.alive_with_role(*MAFIA_ROLES)]
                else:
                    self._night_stage(state, "night_mafia")
        elif st == "night_mafia":
            ok = bool(reply.target_valid and reply.target)
            if self._opt(state, "mafia_shot") == "unanimous":
                d["shots"][ask.seat] = reply.target if ok else None
            elif ok:
                pend.mafia_targets.append(f"{ask.seat}>{reply.target}")
            if not pend.remaining:
                self._night_stage(state, "night_don")
        elif st in ("night_don", "night_sheriff"):
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
        elif st == "words":
            if ask.kind == "best_move":
                d["best_move_done"] = True
                ev["suspects"] = list(reply.targets or [])
            if not pend.remaining:
                d["leaving"] = []
                self._set(state, "after_words")
        elif st == "speech":
            state.phase = "day_discuss"
            for n in self._note_mentions(state, ask.seat, reply.text):
                if n not in d["floor_queue"]:
                    d["floor_queue"].append(n)  # named players may answer first on an open floor
            if ask.action == "nominate":
                nominee = (reply.targets or [None])[0]
                if nominee and nominee not in d["nominees"]:
                    d["nominees"].append(nominee)
                    d["nominated_by"][nominee] = ask.seat
                    ev["nominations"] = [nominee]
                    events.append(event(Nomination, state.game_id, round=state.round, nominator=ask.seat, nominee=nominee))
                elif nominee:
                    ev["nominations"] = []
                    ev["nomination_note"] = "already nominated"
            d["turns"][ask.seat] = d["turns"].get(ask.seat, 0) + 1
            if not pend.remaining:
                if self._opt(state, "open_floor"):
                    events.append(_host(state, "host_open_floor"))
                    self._set(state, "floor")
                    self._pick_floor(state)
                else:
                    self._set(state, "day_end")
        elif st == "floor":
            state.phase = "day_discuss"
            if reply.fault or is_pass(reply.text, p.ten["pass_word"]):
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
        elif st == "defence":
            if not pend.remaining:
                self._start_vote(state, "runoff", list(d["tied"]))
        elif st == "vote":
            state.phase = "day_vote"
            ev["ballot"] = d["vote_stage"]
            if reply.target_valid and reply.target:
                pend.votes[ask.seat] = reply.target
            else:
                pend.invalid[ask.seat] = reply.parse_note or (reply.fault or {}).get("fallback", "invalid")
            if not pend.remaining:
                self._set(state, "tally")
        else:
            raise RuntimeError(f"tournament rules: reply in stage {st!r}")
        if private:
            probe = ProbeStep(state.round, state.msg_seq, "night", [ask.seat], speaker=ask.seat)
        else:
            probe = ProbeStep(state.round, state.msg_seq, ask.kind, state.alive_names(), speaker=ask.seat)
        return Outcome(events, probe)

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

    # ================================================================ stage entry
    def _begin_day(self, state: GameState, rnd: int) -> None:
        state.round, state.msg_seq, state.phase = rnd, 0, "day"
        self._set(state, "morning")

    def _start_speeches(self, state: GameState) -> None:
        d = self._d(state)
        d.update(nominees=[], nominated_by={}, turns={}, floor_queue=[], passed=[], named_by={}, last_speaker=None)
        state.phase = "day_discuss"
        self._set(state, "speech", self._seat_order(state, state.round - 1))

    def _start_vote(self, state: GameState, stage: str, candidates: list[str]) -> None:
        d = self._d(state)
        d["vote_stage"], d["candidates"] = stage, candidates
        state.pending.votes, state.pending.invalid = {}, {}
        state.phase = "day_vote"
        self._set(state, "vote", self._seat_order(state, state.round - 1))

    def _begin_night(self, state: GameState) -> list[dict[str, Any]]:
        d = self._d(state)
        state.phase = "night"
        state.night_result = None
        state.pending.mafia_targets, d["shots"], d["talk_round"], d["night_victim"] = [], {}, 0, None
        first = "mafia_talk" if self._opt(state, "mafia_night_talk") else "night_mafia"
        self._night_stage(state, first)
        return [_host(state, "host_night", round=state.round)]

    def _night_stage(self, state: GameState, stage: str) -> None:
        if stage not in NIGHT_STAGES:
            self._set(state, "night_resolve")
            return
        mafia = [s.name for s in state.alive_with_role(*MAFIA_ROLES)]
        for st in NIGHT_STAGES[NIGHT_STAGES.index(stage):]:
            if st == "mafia_talk":
                actors = mafia if len(mafia) > 1 else []
            elif st == "night_mafia":
                actors = mafia
            elif st == "night_don":
                actors = [s.name for s in state.alive_with_role("Don")]
            else:
                actors = [s.name for s in state.alive_with_role("Sheriff")]
            if actors:
                self._set(state, st, actors)
                return
        self._set(state, "night_resolve")

    def _leave(self, state: GameState, names: list[str], how: str, after: str) -> None:
        d = self._d(state)
        d["leaving"] = [[n, how] for n in names]
        d["after_words"] = after
        state.phase = "last_words"
        self._set(state, "words", names)

    # ================================================================ resolutions
    def resolve(self, state: GameState, decision: Resolve) -> Outcome:
        return getattr(self, "_r_" + decision.name)(state)

    def _r_begin(self, state: GameState) -> Outcome:
        if self._opt(state, "night_zero_meeting"):
            state.phase = "night_zero"
            mafia = [s for s in state.seats if s.alive and s.is_mafia]
            order = [s.name for s in mafia if s.role != "Don"] + [s.name for s in mafia if s.role == "Don"]
            self._set(state, "night_zero", order)
            return Outcome([_host(state, "host_night_zero")], None, snapshot=False)
        self._begin_day(state, 1)
        return Outcome([], None, snapshot=False)

    def _r_morning(self, state: GameState) -> Outcome:
        d = self._d(state)
        p = prompts.pack(state.language)
        events = [_host(state, "host_day", round=state.round)]
        probe = None
        if state.round >= 2:
            victim = d["night_victim"]
            result = p.kill_result.format(victim=victim) if victim else p.no_kill_result
            state.night_result = result
            state.msg_seq += 1
            state.phase = "night_analysis"
            events.append(event(NightAnalysis, state.game_id, round=state.round, msg_seq=state.msg_seq, night_result=result))
            events.append(_host(state, "host_killed", victim=victim) if victim else _host(state, "host_missed"))
            probe = ProbeStep(state.round, state.msg_seq, "night_analysis", state.alive_names())
            if victim:
                self._leave(state, [victim], "shot", "speeches")
                return Outcome(events, probe)
        self._start_speeches(state)
        return Outcome(events, probe)

    def _r_after_words(self, state: GameState) -> Outcome:
        d = self._d(state)
        if d["after_words"] == "speeches":
            self._start_speeches(state)
            return Outcome([], None, snapshot=False)
        won = win_check(state)
        if won:
            return self._game_over(state, *won)
        return Outcome(self._begin_night(state), None, snapshot=False)

    def _r_day_end(self, state: GameState) -> Outcome:
        d = self._d(state)
        rnd = state.round
        alive = state.alive_names()
        day1 = self._opt(state, "day1_vote", "always")
        events: list[dict[str, Any]] = []

        def no_vote(reason: str) -> Outcome:
            events.append(event(NoElimination, state.game_id, round=rnd, reason=reason))
            events.append(_host(state, "host_no_vote"))
            return Outcome(events + self._begin_night(state), None, snapshot=False)

        if rnd == 1 and day1 == "never":
            return no_vote("no_vote_day")
        if self._opt(state, "nominations"):
            noms = [n for n in d["nominees"] if n in alive]
            if noms:
                events.append(_host(state, "host_nominees", nominees=_csv(noms)))
            if rnd == 1 and day1 == "if_two_nominees" and len(noms) < 2:
                return no_vote("too_few_nominees")
            if not noms:
                return no_vote("no_nominees")
            if len(noms) == 1 and self._opt(state, "lone_nominee_leaves") and rnd > 1:
                out = noms[0]
                events += self._eliminate(state, out, 0, "lone_nominee")
                events.append(_host(state, "host_lone", name=out))
                self._leave(state, [out], "lone", "night")
                return Outcome(events, None, snapshot=False)
            self._start_vote(state, "vote", noms)
        else:
            self._start_vote(state, "vote", alive)
        return Outcome(events, None, snapshot=False)

    def _eliminate(self, state: GameState, name: str, votes: int, reason: str) -> list[dict[str, Any]]:
        seat = state.seat(name)
        seat.alive = False
        return [event(DayEliminate, state.game_id, round=state.round, eliminated=name, role=seat.role, votes=votes,
                      revealed=False, reason=reason, visible_to=None)]  # fmt: skip

    def _r_tally(self, state: GameState) -> Outcome:
        pend = state.pending
        d = self._d(state)
        p = prompts.pack(state.language)
        rnd = state.round
        vs = d["vote_stage"]
        votes = dict(pend.votes)
        tally: dict[str, int] = {}
        for t in votes.values():
            tally[t] = tally.get(t, 0) + 1
        events: list[dict[str, Any]] = [event(VoteTally, state.game_id, round=rnd, tally=tally, votes=votes,
                                              invalid=dict(pend.invalid), stage=vs, candidates=list(d["candidates"]))]  # fmt: skip
        pend.votes, pend.invalid = {}, {}
        tie = self._opt(state, "tie", "none")
        if vs == "remove_all":
            yes = sum(1 for v in votes.values() if v == p.ten["yes"])
            tied = list(d["tied"])
            if yes * 2 > len(state.alive_names()):
                for n in tied:
                    events += self._eliminate(state, n, yes, "remove_all")
                events.append(_host(state, "host_remove_all", nominees=_csv(tied)))
                self._leave(state, tied, "remove_all", "night")
                return Outcome(events, None, snapshot=False)
            events.append(event(NoElimination, state.game_id, round=rnd, reason="remove_all_rejected", tied=tied))
            events.append(_host(state, "host_kept", nominees=_csv(tied)))
            return Outcome(events + self._begin_night(state), None, snapshot=False)
        top, count = plurality(list(votes.values()))
        if not top:
            events.append(event(NoElimination, state.game_id, round=rnd, reason="no_valid_votes"))
            return Outcome(events + self._begin_night(state), None, snapshot=False)
        if len(top) == 1:
            out = top[0]
            events += self._eliminate(state, out, count, vs)
            events.append(_host(state, "host_eliminated", name=out))
            self._leave(state, [out], "vote", "night")
            return Outcome(events, None, snapshot=False)
        # a tie
        d["tied"] = list(top)
        events.append(_host(state, "host_tie", nominees=_csv(top)))
        if vs == "vote" and tie in ("revote_then_remove_all", "runoff"):
            self._start_vote(state, "revote", list(top))
            return Outcome(events, None, snapshot=False)
        if vs == "vote" and tie == "defence_runoff":
            state.phase = "defence"
            self._set(state, "defence", [n for n in state.alive_names() if n in top])
            return Outcome(events, None, snapshot=False)
        if vs == "revote" and tie == "revote_then_remove_all":
            self._start_vote(state, "remove_all", [p.ten["yes"], p.ten["no"]])
            return Outcome(events, None, snapshot=False)
        reason = "tie" if vs == "vote" else "second_tie"
        events.append(event(NoElimination, state.game_id, round=rnd, reason=reason, tied=list(top)))
        return Outcome(events + self._begin_night(state), None, snapshot=False)

    def _r_night_resolve(self, state: GameState) -> Outcome:
        pend = state.pending
        d = self._d(state)
        rnd = state.round
        events: list[dict[str, Any]] = []
        victim: str | None = None
        mafia = [s.name for s in state.alive_with_role(*MAFIA_ROLES)]
        if self._opt(state, "mafia_shot") == "unanimous":
            shots = {m: d["shots"].get(m) for m in mafia}
            picked = set(shots.values())
            landed = len(picked) == 1 and None not in picked
            victim = next(iter(picked)) if landed else None
            events.append(event(NightShots, state.game_id, round=rnd, shots=shots, landed=landed, visible_to=[]))
            if not landed:
                reason = "no_target" if all(v is None for v in shots.values()) else "split_shot"
                events.append(event(NightNoKill, state.game_id, round=rnd, reason=reason, missed=reason == "split_shot"))
        else:
            targets = [x.split(">", 1)[1] for x in pend.mafia_targets]
            if targets:
                top, _ = plurality(targets)
                don_pick = [x.split(">", 1)[1] for x in pend.mafia_targets if state.seat(x.split(">", 1)[0]).role == "Don"]
                if len(top) == 1:
                    victim = top[0]
                elif don_pick and don_pick[0] in top:
                    victim = don_pick[0]
                else:
                    victim = top[0] if state.rules.mafia_kill_tie == "first_listed" else state.engine_choice(top)
            else:
                events.append(event(NightNoKill, state.game_id, round=rnd, reason="no_target"))
        if victim:
            state.seat(victim).alive = False
            events.append(event(NightKill, state.game_id, round=rnd, victim=victim))
            d["night_victim"] = victim
            if d["first_shot"] is None:
                d["first_shot"] = victim
                events[-1]["first_shot"] = True
        won = win_check(state)
        if won:
            p = prompts.pack(state.language)
            events.append(_host(state, "host_killed", victim=victim) if victim else _host(state, "host_missed"))
            state.night_result = p.kill_result.format(victim=victim) if victim else p.no_kill_result
            out = self._game_over(state, *won)
            out.events[:0] = events
            return out
        self._set(state, "round_end")
        return Outcome(events, None, snapshot=False)

    def _r_round_end(self, state: GameState) -> Outcome:
        return round_end(state, self._begin_day, self._game_over)

    def _game_over(self, state: GameState, winner: str, reason: str) -> Outcome:
        p = prompts.pack(state.language)
        host = _host(state, "host_game_over", winner=p.ten.get(f"winner_{winner}", winner))
        return Outcome([host, game_over_event(state, winner, reason)], None, snapshot=False)

    # ================================================================ the host
    async def narrate(self, state: GameState, outcome: Outcome, backends: dict[str, Any], cfg: Any = None) -> None:
        """Retell template host lines through an LLM backend (options host=llm, host_backend=NAME).

        The host sees only the public template line it retells; a failed call keeps the template.
        """
        if self._opt(state, "host") != "llm":
            return
        backend = backends.get(str(self._opt(state, "host_backend", "")))
        if backend is None:
            return
        p = prompts.pack(state.language)
        for ev in outcome.events:
            if ev.get("kind") != "host" or ev.get("visible_to") is not None:
                continue
            messages = [{"role": "system", "content": p.ten["host_system"]}, {"role": "user", "content": ev["text"]}]
            req = CompletionRequest(messages, 120, "act", "host", "host", state.derive_seed("host", state.round, ev["text"]),
                                    game_id=state.game_id)  # fmt: skip
            try:
                c = await backend.complete(req)
            except Exception as exc:  # the host never stops a game
                ev["host_error"] = str(exc)[:200]
                continue
            text = strip_think(c.text) if c.ok else ""
            if text:
                ev["template_text"], ev["text"], ev["host"] = ev["text"], text, getattr(backend, "model_label", "llm")
            else:
                ev["host_error"] = (c.error or "empty reply")[:200]
