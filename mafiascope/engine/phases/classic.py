"""Classic Mafia: optional introductions, night (Mafia, Doctor, Sheriff), day discussion,
sequential public vote, plurality elimination, round end.

Stages (``state.pending.stage``): intro -> night_mafia -> night_doctor -> night_sheriff ->
night_resolve -> day_discuss -> day_vote -> vote_resolve -> round_end -> night_mafia ...
"""

from __future__ import annotations

from typing import Any

from ...logs.schema import DayEliminate, NightAnalysis, NightKill, NightNoKill, NightSave, NoElimination, SheriffResult, VoteTally
from .. import prompts
from ..markers import PROTOCOL_MARKERS, Markers
from ..records import event
from ..state import GameState
from .base import Ask, Outcome, ProbeStep, Reply, Resolve, game_over_event, plurality, round_end, utterance_event, win_check

NIGHT_ORDER = ("night_mafia", "night_doctor", "night_sheriff")
NIGHT_ROLES = {"night_mafia": ("Mafia", "Don"), "night_doctor": ("Doctor",), "night_sheriff": ("Sheriff",)}
NIGHT_ACTION = {"night_mafia": "kill", "night_doctor": "protect", "night_sheriff": "check"}


def _alive_csv(state: GameState) -> str:
    return ", ".join(state.alive_names())


class ClassicPhases:
    markers: Markers = PROTOCOL_MARKERS  # VOTE:, ACTION: Kill/Protect/Check

    # ---------------------------------------------------------------- set-up
    def start(self, state: GameState) -> None:
        if state.rules.intro_round:
            state.round, state.msg_seq, state.phase = 0, 0, "intro"
            state.pending.stage = "intro"
            state.pending.remaining = state.alive_names()
        else:
            self._begin_night(state, 1)

    def _begin_night(self, state: GameState, rnd: int) -> None:
        state.round, state.msg_seq, state.phase = rnd, 0, "night"
        state.night_result = None
        state.pending.mafia_targets, state.pending.protected, state.pending.check = [], None, None
        self._enter_night_stage(state, 0)

    def _enter_night_stage(self, state: GameState, i: int) -> None:
        for stage in NIGHT_ORDER[i:]:
            actors = [s.name for s in state.alive_with_role(*NIGHT_ROLES[stage])]
            if actors:
                state.pending.stage, state.pending.remaining = stage, actors
                return
        state.pending.stage, state.pending.remaining = "night_resolve", []

    def _begin_day(self, state: GameState) -> None:
        state.phase = "day_discuss"
        state.pending.stage, state.pending.remaining = "day_discuss", state.alive_names()

    # ---------------------------------------------------------------- decisions
    def next(self, state: GameState) -> Ask | Resolve:
        st = state.pending.stage
        if st in ("night_resolve", "vote_resolve", "round_end"):
            return Resolve(st)
        name = state.pending.remaining[0]
        seat = state.seat(name)
        p = prompts.pack(seat.language)
        alive = state.alive_names()
        if st == "intro":
            return Ask(name, "intro", p.intro.format(players=_alive_csv(state)))
        if st == "night_mafia":
            cands = [n for n in alive if not state.seat(n).is_mafia]
            instr = p.night_mafia.format(round=state.round, players=_alive_csv(state), allies_choices="")
            return Ask(name, st, instr, "kill", cands, visible_to=state.mafia_names())
        if st == "night_doctor":
            cands = [n for n in alive if state.rules.doctor_self_protect or n != name]
            if not state.rules.doctor_repeat_protect and name in state.last_protected:
                cands = [n for n in cands if n != state.last_protected[name]] or cands
            instr = p.night_doctor.format(round=state.round, players=_alive_csv(state))
            return Ask(name, st, instr, "protect", cands, visible_to=[name])
        if st == "night_sheriff":
            done = state.sheriff_checks.get(name, {})
            checks = "; ".join(f"{t}: {p.verdict_mafia if v == 'Mafia' else p.verdict_not_mafia}" for t, v in done.items())
            instr = p.night_sheriff.format(round=state.round, players=_alive_csv(state), checks=checks or p.no_checks)
            return Ask(name, st, instr, "check", [n for n in alive if n != name], visible_to=[name])
        if st == "day_discuss":
            return Ask(name, st, p.discuss.format(round=state.round, players=_alive_csv(state)))
        if st == "day_vote":
            return Ask(name, st, p.vote.format(round=state.round, players=_alive_csv(state)), "vote", alive)
        raise RuntimeError(f"classic rules: unknown stage {st!r}")

    # ---------------------------------------------------------------- replies
    def apply_reply(self, state: GameState, ask: Ask, reply: Reply) -> Outcome:
        ev = utterance_event(state, ask, reply)
        pend = state.pending
        pend.remaining = pend.remaining[1:]
        st = pend.stage
        probe: ProbeStep
        events: list[dict[str, Any]] = [ev]
        if st in NIGHT_ACTION:
            if reply.target_valid and reply.target:
                if st == "night_mafia":
                    pend.mafia_targets.append(reply.target)
                elif st == "night_doctor":
                    pend.protected = reply.target
                    state.last_protected[ask.seat] = reply.target
                else:
                    verdict = "Mafia" if state.seat(reply.target).is_mafia else "Not Mafia"
                    state.sheriff_checks.setdefault(ask.seat, {})[reply.target] = verdict
                    events.append(event(SheriffResult, state.game_id, round=state.round, sheriff=ask.seat,
                                        checked=reply.target, result=verdict, visible_to=[ask.seat]))  # fmt: skip
            probe = ProbeStep(state.round, state.msg_seq, "night", [ask.seat], speaker=ask.seat)
            if not pend.remaining:
                self._enter_night_stage(state, NIGHT_ORDER.index(st) + 1)
        else:
            phase = "intro" if st == "intro" else st
            state.phase = phase
            if st == "day_vote":
                if reply.target_valid and reply.target:
                    pend.votes[ask.seat] = reply.target
                else:
                    pend.invalid[ask.seat] = reply.parse_note or (reply.fault or {}).get("fallback", "invalid")
            probe = ProbeStep(state.round, state.msg_seq, phase, state.alive_names(), speaker=ask.seat)
            if not pend.remaining:
                if st == "intro":
                    self._begin_night(state, 1)
                elif st == "day_discuss":
                    state.phase = "day_vote"
                    pend.stage, pend.remaining = "day_vote", state.alive_names()
                    pend.votes, pend.invalid = {}, {}
                else:
                    pend.stage = "vote_resolve"
        return Outcome(events, probe)

    # ---------------------------------------------------------------- resolutions
    def resolve(self, state: GameState, decision: Resolve) -> Outcome:
        return getattr(self, "_" + decision.name)(state)

    def _night_resolve(self, state: GameState) -> Outcome:
        pend = state.pending
        p = prompts.pack(state.language)
        events: list[dict[str, Any]] = []
        victim = None
        if pend.mafia_targets:
            top, _ = plurality(pend.mafia_targets)
            victim = top[0] if state.rules.mafia_kill_tie == "first_listed" or len(top) == 1 else state.engine_choice(top)
        if victim and victim != pend.protected:
            state.seat(victim).alive = False
            events.append(event(NightKill, state.game_id, round=state.round, victim=victim))
            result = p.kill_result.format(victim=victim)
        elif victim:
            events.append(event(NightSave, state.game_id, round=state.round, saved=victim))
            result = p.save_result.format(saved=victim)
        else:
            events.append(event(NightNoKill, state.game_id, round=state.round, reason="no_target"))
            result = p.no_kill_result
        state.night_result = result
        won = win_check(state)
        if won:
            events.append(game_over_event(state, *won))
            return Outcome(events, None, snapshot=False)
        state.msg_seq += 1
        state.phase = "night_analysis"
        events.append(event(NightAnalysis, state.game_id, round=state.round, msg_seq=state.msg_seq, night_result=result))
        self._begin_day(state)
        return Outcome(events, ProbeStep(state.round, state.msg_seq, "night_analysis", state.alive_names()))

    def _vote_resolve(self, state: GameState) -> Outcome:
        pend = state.pending
        votes = dict(pend.votes)
        tally: dict[str, int] = {}
        for t in votes.values():
            tally[t] = tally.get(t, 0) + 1
        events: list[dict[str, Any]] = [
            event(VoteTally, state.game_id, round=state.round, tally=tally, votes=votes, invalid=dict(pend.invalid))
        ]
        top, count = plurality(list(votes.values()))
        out = None
        if not top:
            events.append(event(NoElimination, state.game_id, round=state.round, reason="no_valid_votes"))
        elif len(top) > 1 and state.rules.tie_rule == "no_elimination":
            events.append(event(NoElimination, state.game_id, round=state.round, reason="tie", tied=top))
        else:
            out = top[0] if len(top) == 1 else state.engine_choice(top)
        if out:
            seat = state.seat(out)
            seat.alive = False
            events.append(event(DayEliminate, state.game_id, round=state.round, eliminated=out, role=seat.role, votes=count,
                                revealed=state.rules.reveal_role_on_elimination))  # fmt: skip
        pend.votes, pend.invalid = {}, {}
        won = win_check(state)
        if won:
            events.append(game_over_event(state, *won))
            return Outcome(events, None, snapshot=False)
        pend.stage, pend.remaining = "round_end", []
        return Outcome(events, None, snapshot=False)

    def _round_end(self, state: GameState) -> Outcome:
        return round_end(state, self._begin_night)
