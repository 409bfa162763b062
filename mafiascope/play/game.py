"""The one game loop: ask seats, apply rules, log every record, snapshot, hand steps to the probes.

The loop is the same for every rule family (``engine/phases``). It never waits for
probes: probe calls run concurrently (``mafiascope.probes``) and may be answered long after
their step. Each probe point is written to ``probe_steps.jsonl`` before its calls start;
when the last move is made the runner writes ``acts_done`` there (and tells ``on_acts_done``,
so a study can start its next game), then waits for the probes to drain, and only then
writes ``game_over`` with the probe figures and both budgets' verdicts. A failed backend
call is never spoken as a player's words: it becomes a logged, flagged fallback (skip the
speech, abstain).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..backends.base import Backend, Completion, CompletionRequest
from ..backends.registry import run_closing
from ..config import GameConfig
from ..engine import prompts
from ..engine.faults import game_over_record, judge
from ..engine.observation import context_for
from ..engine.parsing import parse_list, parse_target, strip_think
from ..engine.phases import phases_for
from ..engine.phases.base import Ask, Outcome, ProbeStep, Reply, Resolve
from ..engine.records import build, line
from ..engine.snapshots import SnapshotEncoder
from ..engine.state import GameState
from ..logs import kinds as K
from ..logs.io import GAME_FILE, STATE_FILE, JsonlWriter, game_dir
from ..logs.paths import GameDirTaken, claim_game_dir
from ..logs.probe_steps import STEPS_FILE, acts_done_line, step_line
from ..logs.schema import Snapshot, validate_game_id
from .seating import initial_state, new_game_id, setup_record

WALL_CLOCK_FIELDS = ("ts", "timestamp", "latency_ms")
SNAPSHOT_OPAQUE = ("state", "probe_memory")  # the engine's own serialised state: a mapping the schema does not look into


class ProbeHook(Protocol):
    """What the runner needs from the probe engine (mafiascope.probes implements it)."""

    def on_step(self, state: GameState, step: ProbeStep) -> asyncio.Future[Any] | None: ...

    async def drain(self) -> None: ...

    def memory_at(self, step_index: int) -> dict[str, Any]: ...

    def cost(self) -> dict[str, Any]: ...


@dataclass
class GameResult:
    game_id: str
    path: str
    winner: str | None
    rounds: int
    reason: str | None
    faults: int = 0
    acts: int = 0
    invalid: bool = False  # over the fault budget (engine/faults.py), or cut
    invalid_reason: str | None = None
    cut: str | None = None  # stopped by its ``halt`` (a study's budget cap: play/spend.py) before it ended


@dataclass
class ActAccounting:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    latency_ms: int = 0
    faults: int = 0
    reasks: int = 0
    retried_faults: int = 0
    fatal: int = 0
    by_backend: dict[str, dict[str, int]] = field(default_factory=dict)  # backend name -> calls and tokens (study spend)

    def add(self, c: Completion, backend: str | None = None) -> None:
        if backend is not None:
            row = self.by_backend.setdefault(backend, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
            row["calls"] += 1
            row["prompt_tokens"] += c.prompt_tokens or 0
            row["completion_tokens"] += c.completion_tokens or 0
        self.calls += 1
        self.retried_faults += len(c.meta.get("faults") or []) if c.ok else 0
        self.fatal += 1 if c.meta.get("fatal") else 0
        self.prompt_tokens += c.prompt_tokens or 0
        self.completion_tokens += c.completion_tokens or 0
        self.estimated = self.estimated or c.tokens_estimated
        self.latency_ms += c.latency_ms


# ------------------------------------------------------------------------- the loop


@dataclass
class GameRunner:
    state: GameState
    cfg: GameConfig
    backends: dict[str, Backend]  # by backend name
    out_dir: Path
    probes: ProbeHook | None = None
    snapshots: bool = True
    on_event: Callable[[dict[str, Any]], None] | None = None
    acct: ActAccounting = field(default_factory=ActAccounting)
    halt: Callable[[], str | None] | None = None  # checked before every turn: a reason ends the game there, cut
    on_acts_done: Callable[[], None] | None = None  # the last move is made; the probes may still be draining

    def __post_init__(self) -> None:
        self.game_log = JsonlWriter(self.out_dir / GAME_FILE, exclusive=True)  # one writer per game
        self.state_log = JsonlWriter(self.out_dir / STATE_FILE) if self.snapshots else None
        self.steps_log = JsonlWriter(self.out_dir / STEPS_FILE)
        self._snap_codec = SnapshotEncoder(getattr(self.probes, "chain_value", None))  # memory refers to probe records

    # -------------------------------------------------------------- records
    def _emit(self, ev: dict[str, Any]) -> None:
        ev.setdefault("round", self.state.round)
        self.state.events.append(ev)
        rec = line({"game_id": self.state.game_id, **ev, "ts": time.time()})
        self.game_log.write(rec)
        if self.on_event:
            self.on_event(rec)

    def _snapshot(self, step: ProbeStep | None) -> None:
        """Write the snapshot now (a killed process keeps every snapshot so far). Its probe memory names
        the records later questions quote, answered or still on their way (ProbeEngine.memory_at)."""
        if not self.state_log:
            return
        st = self.state
        key_round, key_seq, phase = (step.round, step.public_msg_seq, step.phase) if step else (st.round, st.msg_seq, st.phase)
        record: dict[str, Any] = {
            "game_id": st.game_id,
            "round": key_round,
            "msg_seq": key_seq,
            "phase": phase,
            "pending": st.pending.model_dump(mode="json"),
            "night_result": st.night_result,
            "sheriff_checks": {t: v for checks in st.sheriff_checks.values() for t, v in checks.items()},
            "alive": st.alive_names(),
            "players": [
                {
                    "name": s.name,
                    "idx": s.idx,
                    "role": s.role,
                    "backend_name": s.backend,
                    "model_label": s.model_label,
                    "personality": s.personality.model_dump(),
                    "language": s.language,
                    "alive": s.alive,
                }
                for s in st.seats
            ],  # their acting contexts are derived from the state by the reader (engine/snapshots.py)
            "step_index": st.step_index,
            "state": st.model_dump(mode="json"),
            "probe_memory": self.probes.memory_at(st.step_index) if self.probes else None,
            "ts": time.time(),
        }
        self.state_log.write(self._snap_codec.encode(build(Snapshot, record, opaque=SNAPSHOT_OPAQUE)))

    # -------------------------------------------------------------- seats
    def _usable(self, ask: Ask, text: str) -> tuple[bool, Reply]:
        if ask.action is None:
            return bool(text.strip()), Reply(text)
        markers = phases_for(self.state).markers  # the rule family's protocol lines
        if ask.action in ("suspects", "nominate") and ask.optional_target:
            got = parse_list(text, ask.action, ask.candidates, markers=markers)
            return True, Reply(text, targets=got, target=got[0] if got else None, target_valid=bool(got), parse_note="list")
        pt = parse_target(text, ask.action, ask.candidates, markers=markers)
        ok = pt.valid or (pt.note == "explicit abstention") or ask.optional_target
        return ok, Reply(text, target=pt.target, target_valid=pt.valid, parse_note=pt.note)

    async def ask(self, ask: Ask) -> Reply:
        self._absorbed: list[dict[str, Any]] = []
        reply = await self._ask(ask)
        if self._absorbed and not reply.fault:
            reply.retried_faults = self._absorbed
        return reply

    async def _complete(self, backend: Backend, req: CompletionRequest) -> Completion:
        c = await backend.complete(req)
        seat = next((s for s in self.state.seats if s.name == req.seat), None)
        self.acct.add(c, seat.backend if seat is not None else getattr(backend, "name", None))
        if c.ok and c.meta.get("faults"):
            self._absorbed.extend(c.meta["faults"])
        return c

    async def _ask(self, ask: Ask) -> Reply:
        st = self.state
        seat = st.seat(ask.seat)
        backend = self.backends[seat.backend]
        messages = context_for(st, ask.seat).with_instruction(ask.instruction)
        targets = list(ask.candidates) if ask.action else None
        req = CompletionRequest(
            messages, self.cfg.max_tokens, "act", ask.seat, ask.kind, st.next_act_seed(), game_id=st.game_id, targets=targets
        )
        c = await self._complete(backend, req)
        if not c.ok:
            return self._fallback(ask, c.error or "backend failure", c.attempts, fatal=bool(c.meta.get("fatal")))
        text = strip_think(c.text)
        ok, reply = self._usable(ask, text)
        reply.latency_ms = c.latency_ms
        if ok or not self.cfg.reask:
            return reply if ok or text.strip() else self._fallback(ask, "empty reply", 1)
        # one re-ask with a format reminder
        p = prompts.pack(seat.language)
        fmt = prompts.action_format(p, ask.action) if ask.action in ("vote", "kill", "protect", "check") else "..."
        messages2 = [*messages, {"role": "assistant", "content": text}, {"role": "user", "content": p.reask.format(fmt=fmt)}]
        req2 = CompletionRequest(
            messages2,
            self.cfg.max_tokens,
            "act",
            ask.seat,
            ask.kind,
            st.derive_seed("reask", st.act_calls),
            game_id=st.game_id,
            targets=targets,
        )
        c2 = await self._complete(backend, req2)
        self.acct.reasks += 1
        text2 = strip_think(c2.text) if c2.ok else ""
        ok2, reply2 = self._usable(ask, text2)
        if c2.ok and (ok2 or text2.strip()):
            reply2.reask, reply2.first_reply, reply2.latency_ms = True, text, c.latency_ms + c2.latency_ms
            return reply2  # an unreadable vote is kept as an invalid vote with its raw text
        if text.strip():
            reply.reask = True
            return reply
        return self._fallback(ask, c2.error or "empty reply after re-ask", c.attempts + c2.attempts)

    def _fallback(self, ask: Ask, error: str, attempts: int, fatal: bool = False) -> Reply:
        self.acct.faults += 1
        fallback = "skip_speech" if ask.action is None else "abstain"
        fault: dict[str, Any] = {"error": error[:500], "attempts": attempts, "fallback": fallback}
        if fatal:
            fault["fatal"] = True  # e.g. 401/404: retrying cannot help; batches may stop early
        return Reply("", target=None, target_valid=False if ask.action else None, parse_note="fallback: " + fallback, fault=fault)

    # -------------------------------------------------------------- run
    async def run(self) -> GameResult:
        phases = phases_for(self.state)
        final: dict[str, Any] | None = None
        cut: str | None = None
        try:
            while not self.state.over:
                if self.halt is not None and (cut := self.halt()) is not None:
                    final = {"kind": K.GAME_OVER, "round": self.state.round, "winner": "", "reason": "budget_cut", "cut": cut}
                    break
                decision = phases.next(self.state)
                if isinstance(decision, Resolve):
                    outcome = phases.resolve(self.state, decision)
                else:
                    reply = await self.ask(decision)
                    outcome = phases.apply_reply(self.state, decision, reply)
                narrate = getattr(phases, "narrate", None)  # a rule family's host (ten-seat rules)
                if narrate is not None:
                    await narrate(self.state, outcome, self.backends, self.cfg)
                final = self._apply(outcome) or final
                await asyncio.sleep(0)  # let probe calls progress between turns
            if final is not None:
                final = self._acts_done(final, cut)
        finally:
            try:
                if self.probes is not None:
                    await self.probes.drain()
                if final is not None:
                    backends = {
                        n: b.describe() for n, b in self.backends.items() if any(s.backend == n for s in self.state.seats)
                    }
                    probes = self.probes.cost() if self.probes else None
                    final = game_over_record(final, backends, probes, self.cfg.probes.loss_budget)
                    self.game_log.write(line({"game_id": self.state.game_id, **final, "ts": time.time()}))
            finally:
                self.game_log.close()
                self.steps_log.close()
                if self.state_log:
                    self.state_log.close()
        st = self.state
        return GameResult(st.game_id, str(self.out_dir), st.winner, st.round, "budget_cut" if cut else st.reason, self.acct.faults,
                          self.acct.calls, bool((final or {}).get("invalid")), (final or {}).get("invalid_reason"), cut)  # fmt: skip

    def _acts_done(self, final: dict[str, Any], cut: str | None = None) -> dict[str, Any]:
        """The last move is made (or the game was cut): the game_over record's act figures and fault verdict,
        kept in ``probe_steps.jsonl`` so a crash while the probes drain loses nothing (resume finishes them)."""
        final["cost"] = {"act": {**vars(self.acct), "by_backend": {k: dict(v) for k, v in self.acct.by_backend.items()}}}
        final["faults"] = self.acct.faults
        final.update(judge(self.state.events, self.cfg.fault_budget))
        if cut is not None:  # not a finished game: never counted as one
            final.update(invalid=True, invalid_reason=f"cut before it ended by {cut}")
        if self.probes is not None:
            backends = {n: b.describe() for n, b in self.backends.items() if any(s.backend == n for s in self.state.seats)}
            self.steps_log.write(acts_done_line({"game_id": self.state.game_id, **final, "backends": backends}, time.time()))
        if self.on_acts_done is not None:
            self.on_acts_done()
        return final

    def _apply(self, outcome: Outcome) -> dict[str, Any] | None:
        final = None
        for ev in outcome.events:
            if ev["kind"] == K.GAME_OVER:
                final = dict(ev)
                self.state.events.append(ev)  # logged after probes drain, with cost and provenance
                continue
            self._emit(ev)
        if outcome.probe is not None:
            st, step = self.state, outcome.probe
            st.step_index += 1
            step.step_index, step.events, step.alive, step.ts = st.step_index, len(st.events), st.alive_names(), time.time()
            # the step is on disk before any of its probe calls starts: the durable queue (logs/probe_steps.py)
            self.steps_log.write(step_line(step.step_index, step.round, step.public_msg_seq, step.phase, step.speaker, step.seats,
                                           step.alive, step.events, step.ts))  # fmt: skip
            if self.probes is not None:
                self.probes.on_step(st, step)
        if outcome.snapshot and not self.state.over:
            self._snapshot(outcome.probe)
        return final


# ------------------------------------------------------------------------- entry points


def _probe_hook(
    cfg: GameConfig, state: GameState, out_dir: Path, backends: dict[str, Backend]
) -> tuple[ProbeHook | None, dict[str, Any] | None]:
    if not cfg.probes.enabled:
        return None, None
    from ..probes import build_probe_hook

    return build_probe_hook(cfg, state=state, out_dir=out_dir, backends=backends)


def with_switches(cfg: GameConfig, probes: bool | None, snapshots: bool | None) -> GameConfig:
    """``cfg`` with probing and snapshots switched as asked (a copy; ``None`` keeps the config's own)."""
    if probes is None and snapshots is None:
        return cfg
    cfg = cfg.model_copy(deep=True)
    if probes is not None:
        cfg.probes.enabled = probes
    if snapshots is not None:
        cfg.snapshots = snapshots
    return cfg


async def play_game(
    cfg: GameConfig,
    *,
    logs_dir: str | Path,
    seed: int | None = None,
    game_id: str | None = None,
    probes: bool | None = None,
    snapshots: bool | None = None,
    backends: dict[str, Backend] | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    state: GameState | None = None,
    setup_extra: dict[str, Any] | None = None,
    probe_memory: dict[str, Any] | None = None,
    claimed: bool = False,
    halt: Callable[[], str | None] | None = None,
    on_acts_done: Callable[[], None] | None = None,
) -> GameResult:
    """Play one game (or continue ``state``) and write its logs under ``logs_dir/<game_id>/``.

    The directory is claimed exclusively (mafiascope.logs.paths.claim_game_dir): if it exists,
    :class:`~mafiascope.logs.paths.GameDirTaken` (a FileExistsError) is raised and nothing is
    written. ``claimed``: the caller (fork, resume) has already claimed it and pre-written the
    inherited records; ``game.jsonl`` is still created exclusively. ``halt()``: checked before every
    turn; a reason it returns ends the game there (``game_over`` with ``cut``, ``invalid``). ``on_acts_done()``
    is called when the last move is made, before the probes have drained (a study starts its next game then)."""
    cfg = with_switches(cfg, probes, snapshots)
    if backends is None:
        from ..backends.registry import build_backends

        backends = build_backends(cfg.backends, logs_dir=logs_dir)
    if state is None:
        gid = validate_game_id(game_id or new_game_id())
        if seed is None:
            seed = cfg.seed if cfg.seed is not None else int.from_bytes(uuid.uuid4().bytes[:4], "big")
        state = initial_state(cfg, seed=seed, game_id=gid, backends=backends)
    else:
        validate_game_id(state.game_id)
    out_dir = game_dir(logs_dir, state.game_id) if claimed else claim_game_dir(logs_dir, state.game_id)
    if (out_dir / GAME_FILE).exists():
        raise GameDirTaken(f"{out_dir / GAME_FILE} already exists; refusing to append to another game's log")
    hook, probes_snapshot = _probe_hook(cfg, state, out_dir, backends)
    if hook is not None and probe_memory and hasattr(hook, "restore"):
        hook.restore(probe_memory)
    runner = GameRunner(state, cfg, backends, out_dir, hook, cfg.snapshots, on_event, halt=halt, on_acts_done=on_acts_done)
    setup = setup_record(state, cfg, backends, probes_snapshot, setup_extra)
    runner.game_log.write(setup)
    if on_event:
        on_event(setup)
    # a continued state keeps its history in the snapshot; a fresh game's start events are logged now
    with contextlib.ExitStack() as stack:
        for name, n in backend_demand(state, hook).items():
            limits = getattr(backends.get(name), "limits", None)
            if limits is not None and hasattr(limits, "demand"):
                stack.enter_context(limits.demand(n))
        return await runner.run()


def backend_demand(state: GameState, hook: Any) -> dict[str, int]:
    """Calls a game may want at once per backend: each seat's move plus one step's probes of that seat.

    Auto-sized backend caps (``max_concurrency`` unset) are the sum of this over running games.
    """
    per_seat = 1 + (len(hook.battery.active) if hook is not None and hasattr(hook, "battery") else 0)
    demand: dict[str, int] = {}
    for seat in state.seats:
        demand[seat.backend] = demand.get(seat.backend, 0) + per_seat
    return demand


def run_game(cfg: GameConfig, **kwargs: Any) -> GameResult:
    """Synchronous wrapper for scripts and the CLI."""
    return run_closing(play_game(cfg, **kwargs))
