"""The probe engine: pipelined, non-invasive probing of seats after every step.

``ProbeEngine.on_step(state, step)`` runs synchronously inside the game loop and never
waits: it captures what each probed seat may know *now* (a copy of its acting context via
:func:`~mafiascope.engine.observation.context_for`, the living players, its role), then
schedules one task per (seat, probe) and returns a future that completes when this step's
probes -- and every earlier step's -- are done. The game does not wait for it: its snapshot
is written at once, its probe memory naming the records it will refer to (:meth:`memory_at`).

Deferred, never dropped: a call waits in its backend's queue as long as it takes (acts go
first there); only with ``max_lag_s`` set is a call that would wait longer skipped (and
recorded as such). Every scheduled call ends in exactly one record, so the step lines of
``probe_steps.jsonl`` minus the records are the calls still pending after a crash
(mafiascope.probes.pending finishes them).

Ordering: calls for different seats are independent; within a seat only the chain
placeholders order them (``{prev_X}`` waits for this step's X when X is earlier in the
battery, else for the seat's latest earlier X; ``{last_X}`` waits for the seat's latest
earlier X). A global semaphore (``ProbesConfig.max_concurrency``) bounds calls in
flight; backends apply their own limits on top.

Off the acts' loop: with network backends (``threaded``) the probe calls, their parsing
and their writing run on an event loop in a thread of their own. ``on_step`` only captures
the seats' contexts (it must read the state as it is now) and hands the calls over; the
game loop waits for nothing but the step future, where it writes the step's snapshot. A
call's client CPU (SDK, JSON, the record) then no longer delays the seats' moves, which
the backends also serve first (:mod:`mafiascope.backends.limits`).

Non-invasiveness: nothing is ever written to the game state -- probe seeds come from
``state.derive_seed("probe", round, public_msg_seq, seat_idx, probe_seq)`` (a pure
function; the acting seed counter is not touched), the context is a copy, and the
chaining memory lives only here; ``memory_at(k)`` names, per seat and chained probe, the
step of the record a later question at ``k`` quotes.
"""

from __future__ import annotations

import asyncio
import bisect
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends.base import Backend, Completion, CompletionRequest
from ..engine.observation import context_for
from ..engine.phases.base import ProbeStep
from ..engine.state import GameState
from ..logs.io import PROBE_FILE
from .calls import build_call, probe_seed
from .dsl import Battery, Probe
from .probe_record import ProbeCost, seat_figures
from .record_writer import RecordWriter
from .step_jobs import ChainValue, SeatJob, applies, role_options, step_kind

__all__ = ["MEMORY_VERSION", "NETWORK_TYPES", "ChainValue", "ProbeCost", "ProbeEngine", "applies", "capture", "role_options",
           "seat_figures", "step_kind"]

MEMORY_VERSION = 1
NETWORK_TYPES = ("openai", "bus")  # backends whose calls wait on the network (probes get their own loop)


@dataclass
class ProbeEngine:
    """Implements the runner's ProbeHook protocol (plus ``restore`` for forks)."""

    battery: Battery
    state: GameState
    backends: dict[str, Backend]
    out_dir: Path
    max_concurrency: int = 16
    max_lag_s: float | None = None
    threaded: bool = False  # run the calls on a loop and thread of their own (see module docstring)
    clock: Callable[[], float] = time.perf_counter
    on_record: Callable[[dict[str, Any]], None] | None = None  # after each record is written (progress bars)
    _latest: dict[str, dict[str, "asyncio.Future[ChainValue] | ChainValue"]] = field(default_factory=dict)
    _refs: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # seat -> chained probe -> steps scheduled
    _restored: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # seat -> probe -> memory entry
    _tasks: set["asyncio.Future[Any]"] = field(default_factory=set)
    _step_fut: "asyncio.Future[Any] | None" = None

    def __post_init__(self) -> None:
        # compact records (schema_version 3): the questions' templates are written once, answers once
        self.records = RecordWriter(self.out_dir / PROBE_FILE, self.state.game_id, [s.name for s in self.state.seats],
                                    {p.id: p.question_text() for p in self.battery.active}, self.on_record)
        self.codec = self.records.codec
        self.roles = role_options(self.state)
        self.game_id = self.state.game_id
        self._sem: asyncio.Semaphore | None = None
        self._chained = {ref for p in self.battery.active for _, ref in p.chain_refs()}
        self._seq = {p.id: i for i, p in enumerate(self.battery.active)}
        self.total, self.by_probe, self.by_seat = self.records.total, self.records.by_probe, self.records.by_seat
        self.in_flight = 0
        self.max_in_flight = 0
        self.first_start: float | None = None
        self.last_finish: float | None = None
        self.internal_errors: list[str] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        if self.threaded:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name=f"probes-{self.game_id}", daemon=True)
            self._thread.start()

    @property
    def chained(self) -> set[str]:
        """The probe ids some question quotes (``{prev_*}``/``{last_*}``)."""
        return self._chained

    # ------------------------------------------------------------------ hook API
    def on_step(self, state: GameState, step: ProbeStep, only: set[tuple[str, str]] | None = None,
                known: dict[tuple[str, str], ChainValue] | None = None) -> "asyncio.Future[Any] | None":  # fmt: skip
        """Schedule the step's calls. ``only``: ask just these (seat, probe id) calls; ``known``: the
        chain values of this step's calls already answered (finishing a step after a crash)."""
        plan = self._capture(state, step, only)
        if self._loop is None:
            return self._schedule(plan, known)
        if not plan and self._step_fut is None:
            return None
        # the calls, their parsing and writing run on the probe loop; the game loop only waits
        # for this future where it writes the step's snapshot
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._schedule_and_wait(plan, known), self._loop))

    def _capture(self, state: GameState, step: ProbeStep,
                 only: set[tuple[str, str]] | None = None) -> list[tuple[SeatJob, list[tuple[Probe, int, int]]]]:  # fmt: skip
        plan = capture(state, step, self.battery, self._seq, only)
        for job, calls in plan:
            for p, _, _ in calls:
                if p.id in self._chained:
                    steps = self._refs.setdefault(job.seat, {}).setdefault(p.id, [])
                    if not steps or steps[-1] < step.step_index:
                        steps.append(step.step_index)
        return plan

    def _schedule(self, plan: list[tuple[SeatJob, list[tuple[Probe, int, int]]]],
                  known: dict[tuple[str, str], ChainValue] | None = None) -> "asyncio.Future[Any] | None":  # fmt: skip
        """One task per call, chained within a seat; the step's future (runs on the probe loop)."""
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.max_concurrency)
        tasks: list[asyncio.Future[ChainValue]] = []
        for job, calls in plan:
            before = dict(self._latest.get(job.seat, {}))
            this_step: dict[str, asyncio.Future[ChainValue] | ChainValue] = {}
            asked = [c for c in calls if job.ctx is not None and (not known or (job.seat, c[0].id) not in known)]
            behind = self._backlog_s(job.backend, len(asked))
            for p, seq, seed in calls:
                if known and (job.seat, p.id) in known:  # answered before (a step finished after a crash)
                    this_step[p.id] = known[(job.seat, p.id)]
                    continue
                if job.ctx is None:  # neither asked now nor answered before: not this call's turn
                    continue
                deps: dict[str, asyncio.Future[ChainValue] | ChainValue | None] = {}
                for ref_kind, ref in p.chain_refs():
                    key = f"{ref_kind}_{ref}"
                    deps[key] = this_step[ref] if ref_kind == "prev" and ref in this_step else before.get(ref)
                if behind is not None:  # the backend's queue is already longer than max_lag_s: skip this step
                    task = asyncio.ensure_future(self._skip(job, p, seq, behind))
                else:
                    task = asyncio.ensure_future(self._tracked(job.backend, self._run(job, p, seq, seed, deps)))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                this_step[p.id] = task
                tasks.append(task)
            self._latest.setdefault(job.seat, {}).update(this_step)
        prev = self._step_fut
        if not tasks and prev is None:
            return None
        self._step_fut = asyncio.ensure_future(self._step_done(tasks, prev))
        return self._step_fut

    async def _schedule_and_wait(self, plan: list[tuple[SeatJob, list[tuple[Probe, int, int]]]],
                                 known: dict[tuple[str, str], ChainValue] | None = None) -> None:  # fmt: skip
        fut = self._schedule(plan, known)
        if fut is not None:
            await fut

    async def idle(self) -> None:
        """Wait until every step's probes so far are done (the writer stays open)."""
        if self._loop is not None:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._idle_here(), self._loop))
        else:
            await self._idle_here()

    async def _idle_here(self) -> None:
        if self._step_fut is not None:
            await asyncio.shield(self._step_fut)

    async def drain(self) -> None:
        if self._loop is not None:
            try:
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._drain_here(close_clients=True), self._loop))
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                await asyncio.to_thread(self._thread.join) if self._thread is not None else None
                self._loop.close()
                self._loop = None
        else:
            await self._drain_here()
        self.records.close()

    async def _drain_here(self, close_clients: bool = False) -> None:
        while self._tasks or (self._step_fut is not None and not self._step_fut.done()):
            pending = [*self._tasks] + ([self._step_fut] if self._step_fut is not None else [])
            await asyncio.gather(*pending, return_exceptions=True)
        if close_clients:  # HTTP clients are per loop: close the ones this loop opened
            for b in {id(b): b for b in self.backends.values() if getattr(b, "type", "") in NETWORK_TYPES}.values():
                try:
                    await b.aclose()
                except Exception:
                    pass

    def memory_at(self, step_index: int) -> dict[str, Any]:
        """The chaining memory as of step ``step_index``: per seat and chained probe, the step index of the
        seat's record a later question quotes (scheduled here; its answer may still be on its way: the
        snapshot reader resolves it from ``introspection.jsonl``), or an entry restored from a snapshot."""
        seats: dict[str, dict[str, Any]] = {}
        for seat, per in self._restored.items():
            for pid, entry in per.items():
                if int(entry.get("step_index", 0)) <= step_index:
                    seats.setdefault(seat, {})[pid] = dict(entry)
        for seat, per in self._refs.items():
            for pid, steps in per.items():
                i = bisect.bisect_right(steps, step_index)
                if i:
                    seats.setdefault(seat, {})[pid] = steps[i - 1]
        return {"version": MEMORY_VERSION, "battery": self.battery.name, "step_index": step_index, "seats": seats}

    def chain_value(self, seat: str, probe_id: str, step_index: int) -> tuple[str | None, bool] | None:
        """(text, raw) that this engine's record of ``probe_id`` for ``seat`` at ``step_index`` gives a later
        question, when this engine wrote it: a snapshot's memory entry equal to it refers to the record
        instead of repeating it (engine/snapshots.py)."""
        return self.codec.tables.lookup(seat, probe_id, step_index)

    def restore(self, memory: dict[str, Any]) -> None:
        """Continue from a snapshot's ``probe_memory`` (forks, resume), as the snapshot reader gives it."""
        if not memory:
            return
        for seat, per in (memory.get("seats") or {}).items():
            for pid, entry in per.items():
                if not isinstance(entry, dict):
                    raise ValueError(f"probe memory of {seat!r:.40} for {pid!r:.40}: a reference to step {entry!r:.20} not "
                                     "resolved from introspection.jsonl (read the snapshot with iter_snapshots)")  # fmt: skip
                cv = ChainValue(entry.get("value"), bool(entry.get("raw")))
                si = int(entry.get("step_index", memory.get("step_index", 0)))
                self._latest.setdefault(seat, {})[pid] = cv
                self._restored.setdefault(seat, {})[pid] = {"step_index": si, "value": cv.text, "raw": cv.raw}
                self._refs.get(seat, {}).pop(pid, None)

    def cost(self) -> dict[str, Any]:
        wall = (self.last_finish - self.first_start) * 1000 if self.first_start is not None and self.last_finish is not None else 0.0
        return {
            **self.total.as_dict(),
            "wall_ms": int(wall),
            "max_in_flight": self.max_in_flight,
            "max_concurrency": self.max_concurrency,
            "max_lag_s": self.max_lag_s,
            "internal_errors": len(self.internal_errors),
            "by_probe": {pid: c.as_dict() for pid, c in self.by_probe.items()},
            "by_seat": {seat: seat_figures(c) for seat, c in self.by_seat.items()},
        }

    # ------------------------------------------------------------------ internals
    async def _step_done(self, tasks: list["asyncio.Future[ChainValue]"], prev: "asyncio.Future[Any] | None") -> None:
        if prev is not None:
            await prev
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _backlog_s(self, backend: str, n_new: int) -> float | None:
        """Seconds the backend needs for the probe calls queued on it (and ``n_new`` more), when that
        exceeds ``max_lag_s``; None when the step can be probed (see Limits.backlog_seconds)."""
        limits = getattr(self.backends.get(backend), "limits", None)
        if self.max_lag_s is None or limits is None or not hasattr(limits, "backlog_seconds"):
            return None
        s = limits.backlog_seconds(limits.probes_pending + n_new)
        return s if s > self.max_lag_s else None

    async def _tracked(self, backend: str, coro: Any) -> ChainValue:
        limits = getattr(self.backends.get(backend), "limits", None)
        if limits is not None and hasattr(limits, "probes_pending"):
            limits.add_pending(1)
        try:
            return await coro
        finally:
            if limits is not None and hasattr(limits, "probes_pending"):
                limits.add_pending(-1)

    async def _skip(self, job: SeatJob, probe: Probe, seq: int, behind_s: float) -> ChainValue:
        """A step's probe not asked: its backend's probe queue would take longer than max_lag_s."""
        c = Completion(ok=False, error=f"lagged: the backend's probe queue needs ~{behind_s:.0f}s, over max_lag_s "
                                       f"{self.max_lag_s:g}s (step skipped; see probes.max_lag_s)", meta={"lagged": True})
        return self._write(job, probe, seq, question="", c=c, raw_fallback=False, started=None, finished=None, messages=[], values=None)

    async def _run(self, job: SeatJob, probe: Probe, seq: int, seed: int, deps: dict[str, Any]) -> ChainValue:
        try:
            cv = await self._probe(job, probe, seq, seed, deps)
        except Exception as exc:  # a bug here must not stop the game or the chain
            self.internal_errors.append(traceback.format_exc())
            self._write(job, probe, seq, question="", c=Completion(ok=False, error=f"internal: {type(exc).__name__}: {exc}"),
                        raw_fallback=False, started=None, finished=None, messages=[], values=None)  # fmt: skip
            cv = ChainValue(None)
        return cv

    async def _probe(self, job: SeatJob, probe: Probe, seq: int, seed: int, deps: dict[str, Any]) -> ChainValue:
        chained = {key: ((await d) if isinstance(d, asyncio.Future) else d) for key, d in deps.items()}
        call = build_call(job, probe, seed, chained, self.roles, self.game_id, self.max_lag_s)
        question, messages, values, raw_fallback, req = call.question, call.messages, call.values, call.raw_fallback, call.request
        backend = self.backends[job.backend]
        assert self._sem is not None
        async with self._sem:
            started = self.clock()
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.first_start is None:
                self.first_start = started
            try:
                c = await backend.complete(req)
            except Exception as exc:  # backends should return ok=False, but never let one kill the chain
                c = Completion(ok=False, error=f"{type(exc).__name__}: {exc}"[:500])
            finally:
                self.in_flight -= 1
                finished = self.clock()
                self.last_finish = finished if self.last_finish is None else max(self.last_finish, finished)
        return self._write(job, probe, seq, question, c, raw_fallback, started, finished, messages, values)

    def _write(self, job: SeatJob, probe: Probe, seq: int, question: str, c: Completion, raw_fallback: bool, started: float | None,
               finished: float | None, messages: list[dict[str, str]], values: dict[str, str | None] | None) -> ChainValue:  # fmt: skip
        return self.records.write(job, probe, seq, question, c, raw_fallback, started, finished, messages, values)



def capture(state: GameState, step: ProbeStep, battery: Battery, seqs: dict[str, int],
            only: set[tuple[str, str]] | None = None) -> list[tuple[SeatJob, list[tuple[Probe, int, int]]]]:  # fmt: skip
    """What each probed seat may know at the step, and its calls with their seeds (reads the state: the
    game loop). The step's ``events``/``alive``/``ts`` say which (unset: the state as it is now); its
    ``contexts``, when given, are the seats' contexts as recorded. ``only``: the calls to be asked (a seat
    with none gets no context built)."""
    kind = step_kind(step)
    t_step = step.ts or time.time()
    alive = list(step.alive) if step.alive is not None else state.alive_names()
    all_seats = [s.name for s in state.seats]
    plan: list[tuple[SeatJob, list[tuple[Probe, int, int]]]] = []
    for name in step.seats:
        probes = [p for p in battery.active if applies(p, kind, name == step.speaker)]
        if not probes:
            continue
        seat = state.seat(name)
        asks = only is None or any((name, p.id) in only for p in probes)
        ctx = None
        if asks:
            ctx = step.contexts.get(name) if step.contexts is not None else context_for(state, name, step.events)
        job = SeatJob(step=ProbeStep(**vars(step)), kind=kind, seat=name, seat_idx=seat.idx, role=seat.role, model=seat.model_label,
                      backend=seat.backend, ctx=ctx, players=alive, seats=all_seats, t_step=t_step)  # fmt: skip
        plan.append((job, [(p, seqs[p.id], probe_seed(state, step.round, step.public_msg_seq, seat.idx, seqs[p.id])) for p in probes]))
    return plan
