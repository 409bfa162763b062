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
:func:`mafiascope.engine.phases.ten_text.narrate`). Every count, shot and check is settled here.
"""

from __future__ import annotations

from typing import Any

from ...logs.schema import MAFIA_ROLES, DayEliminate, NightAnalysis, NightKill, NightNoKill, NightShots, NoElimination, VoteTally
from .. import prompts
from ..markers import Markers
from ..records import event
from ..state import GameState
from .base import Ask, Outcome, ProbeStep, Resolve, game_over_event, plurality, round_end, win_check
from .ten_replies import TenSeatReplies
from .ten_text import MARKERS, host_line, names_csv, narrate

__all__ = ["MARKERS", "TournamentPhases"]

RESOLVES = ("begin", "morning", "day_end", "tally", "after_words", "night_resolve", "round_end")
NIGHT_STAGES = ("mafia_talk", "night_mafia", "night_don", "night_sheriff")


class TournamentPhases(TenSeatReplies):
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
        players = names_csv(alive)
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
                instr = t["night_shot"].format(round=rnd, players=players, order=names_csv(order) or t["no_order"])
                return Ask(name, "night_mafia", instr, "kill", cands, visible_to=[name])
            instr = p.night_mafia.format(round=rnd, players=players, allies_choices="")
            return Ask(name, "night_mafia", instr, "kill", cands, visible_to=state.mafia_names())
        if st == "night_don":
            done = state.don_checks.get(name, {})
            checks = "; ".join(
                f"{k}: {t['verdict_sheriff'] if v == 'Sheriff' else t['verdict_not_sheriff']}" for k, v in done.items()
            )
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
                instr = t["speech_nominate"].format(round=rnd, players=players, nominees=names_csv(noms) or t["none"])
                return Ask(name, "day_discuss", instr, "nominate", [n for n in alive if n != name], optional_target=True)
            return Ask(name, "day_discuss", p.discuss.format(round=rnd, players=players))
        if st == "floor":
            by = [n for n in d["named_by"].get(name, []) if n != name]
            cue = t["cue_named"].format(names=names_csv(by)) if by else ""
            turns = int(self._opt(state, "day_turns", 3))
            instr = t["open_floor"].format(round=rnd, players=players, cue=cue, turn=d["turns"].get(name, 0) + 1, turns=turns)
            return Ask(name, "day_discuss", instr)
        if st == "defence":
            return Ask(name, "defence", t["defence"].format(round=rnd, players=players, nominees=names_csv(d["tied"])))
        if st == "vote":
            vs = d["vote_stage"]
            cands = list(d["candidates"])
            if vs == "remove_all":
                instr = t["remove_all"].format(round=rnd, players=players, nominees=names_csv(d["tied"]))
                return Ask(name, "day_vote", instr, "vote", [t["yes"], t["no"]])
            if vs in ("revote", "runoff"):
                instr = t["revote"].format(round=rnd, players=players, nominees=names_csv(cands))
            elif self._opt(state, "nominations"):
                instr = t["vote_nominees"].format(round=rnd, players=players, nominees=names_csv(cands))
            else:
                instr = p.vote.format(round=rnd, players=players)
            return Ask(name, "day_vote", instr, "vote", cands)
        raise RuntimeError(f"tournament rules: unknown stage {st!r}")

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
        return [host_line(state, "host_night", round=state.round)]

    def _night_stage(self, state: GameState, stage: str) -> None:
        if stage not in NIGHT_STAGES:
            self._set(state, "night_resolve")
            return
        mafia = [s.name for s in state.alive_with_role(*MAFIA_ROLES)]
        for st in NIGHT_STAGES[NIGHT_STAGES.index(stage) :]:
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
            return Outcome([host_line(state, "host_night_zero")], None, snapshot=False)
        self._begin_day(state, 1)
        return Outcome([], None, snapshot=False)

    def _r_morning(self, state: GameState) -> Outcome:
        d = self._d(state)
        p = prompts.pack(state.language)
        events = [host_line(state, "host_day", round=state.round)]
        probe = None
        if state.round >= 2:
            victim = d["night_victim"]
            result = p.kill_result.format(victim=victim) if victim else p.no_kill_result
            state.night_result = result
            state.msg_seq += 1
            state.phase = "night_analysis"
            events.append(event(NightAnalysis, state.game_id, round=state.round, msg_seq=state.msg_seq, night_result=result))
            events.append(host_line(state, "host_killed", victim=victim) if victim else host_line(state, "host_missed"))
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
            events.append(host_line(state, "host_no_vote"))
            return Outcome(events + self._begin_night(state), None, snapshot=False)

        if rnd == 1 and day1 == "never":
            return no_vote("no_vote_day")
        if self._opt(state, "nominations"):
            noms = [n for n in d["nominees"] if n in alive]
            if noms:
                events.append(host_line(state, "host_nominees", nominees=names_csv(noms)))
            if rnd == 1 and day1 == "if_two_nominees" and len(noms) < 2:
                return no_vote("too_few_nominees")
            if not noms:
                return no_vote("no_nominees")
            if len(noms) == 1 and self._opt(state, "lone_nominee_leaves") and rnd > 1:
                out = noms[0]
                events += self._eliminate(state, out, 0, "lone_nominee")
                events.append(host_line(state, "host_lone", name=out))
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
                events.append(host_line(state, "host_remove_all", nominees=names_csv(tied)))
                self._leave(state, tied, "remove_all", "night")
                return Outcome(events, None, snapshot=False)
            events.append(event(NoElimination, state.game_id, round=rnd, reason="remove_all_rejected", tied=tied))
            events.append(host_line(state, "host_kept", nominees=names_csv(tied)))
            return Outcome(events + self._begin_night(state), None, snapshot=False)
        top, count = plurality(list(votes.values()))
        if not top:
            events.append(event(NoElimination, state.game_id, round=rnd, reason="no_valid_votes"))
            return Outcome(events + self._begin_night(state), None, snapshot=False)
        if len(top) == 1:
            out = top[0]
            events += self._eliminate(state, out, count, vs)
            events.append(host_line(state, "host_eliminated", name=out))
            self._leave(state, [out], "vote", "night")
            return Outcome(events, None, snapshot=False)
        # a tie
        d["tied"] = list(top)
        events.append(host_line(state, "host_tie", nominees=names_csv(top)))
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
            events.append(host_line(state, "host_killed", victim=victim) if victim else host_line(state, "host_missed"))
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
        host = host_line(state, "host_game_over", winner=p.ten.get(f"winner_{winner}", winner))
        return Outcome([host, game_over_event(state, winner, reason)], None, snapshot=False)

    # ================================================================ the host
    async def narrate(self, state: GameState, outcome: Outcome, backends: dict[str, Any], cfg: Any = None) -> None:
        """Retell the outcome's host lines through the host backend, when the rules ask for one (ten_text.narrate)."""
        await narrate(state, outcome, backends)
