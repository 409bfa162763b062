"""``probes ask --batch``: the calls sent through an OpenAI-compatible Batch API at the batch price.

Chained probes quote the seat's earlier answers, so a call can be sent only once the calls it quotes are
answered: the calls go out by *chain position* (0: quotes nothing pending; n: quotes a call of position
n - 1), one batch per position and backend, each built by the same request builder as every other probe
call (:func:`.calls.build_call`) and turned into the same records (:class:`.record_writer.RecordWriter`).
A batch is: the requests as a JSONL file uploaded to ``/v1/files`` (purpose ``batch``), ``/v1/batches``
created on it, polled until it ends, its output (and error) file downloaded and written as records.

The layer's records stay the ledger of the calls; ``<logs>/.probe_layers/<layer>/batches.jsonl`` is the
ledger of the batches: a batch is recorded as soon as the provider accepts it, so a run killed while one
is pending polls that batch again instead of sending its calls twice; a batch that failed or expired
leaves its calls pending, and the next run sends them again. Lines the provider answered with an error
become failed records (counted by the layer's fault budget).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends.base import Completion
from ..logs.io import JsonlWriter, iter_jsonl
from ..logs.layers import LAYERS_DIR, layer_dir
from ..logs.paths import inside
from .calls import build_call
from .recorded import CallKey, answered_calls
from .step_jobs import ChainValue

TERMINAL = ("completed", "failed", "expired", "cancelled")
POLL_MISSES = 5  # failed polls in a row before the run stops (the batch stays open in the ledger)


def api_error(exc: Exception) -> str:
    """One line about a failed Batch API request: its class and HTTP status, never a header or body."""
    status = getattr(exc, "status_code", None)
    return f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "")


@dataclass
class CallGraph:
    """Per scheduled call of a game's layer: the calls its placeholders quote, in ``chain_refs`` order."""

    deps: dict[CallKey, list[tuple[str, CallKey | None]]]
    pending: set[CallKey]
    _pos: dict[CallKey, int] = field(default_factory=dict)

    def position(self, c: CallKey) -> int:
        """0 when nothing it quotes is pending; else one more than the latest pending call it quotes."""
        hit = self._pos.get(c)
        if hit is None:
            ds = [d for _, d in self.deps.get(c, []) if d is not None and d in self.pending]
            hit = self._pos[c] = 1 + max(self.position(d) for d in ds) if ds else 0
        return hit


def call_graph(ga: Any) -> CallGraph:
    """The engine's chain rule over the layer's scheduled calls: ``{prev_X}`` quotes this step's X when the
    battery asks it earlier of the seat, else the seat's latest earlier X; ``{last_X}`` the latest earlier X."""
    from .recorded import step_calls

    wanted = set(ga.scheduled)
    latest: dict[str, dict[str, CallKey]] = {}
    deps: dict[CallKey, list[tuple[str, CallKey | None]]] = {}
    for step in ga.steps:
        this: dict[str, dict[str, CallKey]] = {}
        for seat, p in step_calls(ga.battery, step):
            key = (step.step_index, seat, p.id)
            if key not in wanted:
                continue
            before, now = latest.get(seat, {}), this.setdefault(seat, {})
            deps[key] = [(f"{kind}_{ref}", now[ref] if kind == "prev" and ref in now else before.get(ref)) for kind, ref in p.chain_refs()]
            now[p.id] = key
        for seat, now in this.items():
            latest.setdefault(seat, {}).update(now)
    return CallGraph(deps, set(ga.pending))


def custom_id(game_id: str, c: CallKey, seat_idx: int, seq: int) -> str:
    return f"{game_id}|{c[0]}|{seat_idx}|{seq}"


class BatchLedger:
    """``<logs>/.probe_layers/<layer>/batches.jsonl``: every batch sent and how it ended (inside LOGS only)."""

    def __init__(self, logs: Path, layer: str) -> None:
        layer_dir(logs, layer)  # the name checked like a layer's
        self.dir = Path(logs) / f".{LAYERS_DIR}" / layer
        inside(logs, self.dir)
        self.path = self.dir / "batches.jsonl"

    def records(self) -> list[dict[str, Any]]:
        return list(iter_jsonl(self.path, skip_corrupt=True)) if self.path.is_file() else []

    def open_batches(self) -> list[dict[str, Any]]:
        recs = self.records()
        done = {r.get("batch_id") for r in recs if r.get("event") == "done"}
        return [r for r in recs if r.get("event") == "batch" and r.get("batch_id") not in done]

    def append(self, rec: dict[str, Any]) -> None:
        from ..logs.schema import run_record

        line = {**rec, "ts": time.time()}
        run_record("batch_ledger", line)  # checked against logs/schema.py before it is written
        self.dir.mkdir(parents=True, exist_ok=True)
        with JsonlWriter(self.path, fsync=True) as w:
            w.write(line)

    def input_file(self, name: str) -> Path:
        self.dir.mkdir(parents=True, exist_ok=True)
        return self.dir / name


@dataclass
class Prepared:
    """A call ready to send: the engine's job, its probe, seed and request, and where its record goes."""

    ga: Any
    key: CallKey
    job: Any
    probe: Any
    seq: int
    call: Any  # calls.ProbeCall
    backend: str


class BatchRun:
    """One ``probes ask --batch`` run over prepared games (see the module doc)."""

    def __init__(self, games: list[Any], req: Any, backends_of: Callable[[Any], dict[str, Any]], *, poll_s: float = 30.0,
                 on_record: Callable[[dict[str, Any]], None] | None = None, say: Callable[[str], None] | None = None,
                 stop: Callable[[], str | None] | None = None) -> None:  # fmt: skip
        self.games = [g for g in games if g.refusal is None and g.pending]
        self.stop = stop or (lambda: None)  # why no further batch may be sent (the money budget), else None
        self.by_id = {g.game_id: g for g in self.games}
        self.req, self.backends_of, self.poll_s = req, backends_of, poll_s
        self.on_record, self.say = on_record, say or (lambda s: None)
        self.ledger = BatchLedger(req.logs, req.layer)
        self._backends: dict[str, dict[str, Any]] = {}
        self._writers: dict[str, Any] = {}
        self._states: dict[str, Any] = {}
        self.sent = 0

    # ------------------------------------------------------------------ pieces of one game
    def backends(self, ga: Any) -> dict[str, Any]:
        if ga.game_id not in self._backends:
            self._backends[ga.game_id] = self.backends_of(ga)
        return self._backends[ga.game_id]

    def state(self, ga: Any) -> Any:
        if ga.game_id not in self._states:
            st = ga.game.state_for_asking()
            if self.req.observer:
                for s in st.seats:
                    s.backend = str(self.req.backend)
                    s.model_label = getattr(self.backends(ga)[self.req.backend], "model_label", s.model_label)
            self._states[ga.game_id] = st
        return self._states[ga.game_id]

    def writer(self, ga: Any) -> Any:
        from .record_writer import RecordWriter

        if ga.game_id not in self._writers:
            d = layer_dir(ga.dir, self.req.layer)
            d.mkdir(parents=True, exist_ok=True)
            from ..logs.io import PROBE_FILE, trim_torn_tail

            trim_torn_tail(d / PROBE_FILE)
            st = self.state(ga)
            self._writers[ga.game_id] = RecordWriter(d / PROBE_FILE, ga.game_id, [s.name for s in st.seats],
                                                     {p.id: p.question_text() for p in ga.battery.active}, self.on_record)  # fmt: skip
        return self._writers[ga.game_id]

    def prepare(self, ga: Any, keys: list[CallKey], have: dict[CallKey, ChainValue], graph: CallGraph) -> list[Prepared]:
        from .scheduler import capture
        from .step_jobs import role_options

        st = self.state(ga)
        roles = role_options(st)
        steps = {s.step_index: s for s in ga.steps}
        seqs = {p.id: i for i, p in enumerate(ga.battery.active)}
        out: list[Prepared] = []
        by_step: dict[int, list[CallKey]] = {}
        for c in keys:
            by_step.setdefault(c[0], []).append(c)
        for k in sorted(by_step):
            only = {(seat, pid) for _, seat, pid in by_step[k]}
            for job, calls in capture(st, steps[k], ga.battery, seqs, only):
                for p, seq, seed in calls:
                    key = (k, job.seat, p.id)
                    if key not in only and (job.seat, p.id) not in only:
                        continue
                    chained = {ph: (have.get(d) if d is not None else None) for ph, d in graph.deps.get(key, [])}
                    call = build_call(job, p, seed, chained, roles, ga.game_id)
                    out.append(Prepared(ga, key, job, p, seq, call, job.backend))
        return out

    # ------------------------------------------------------------------ the run
    async def run(self) -> dict[str, Any]:
        self._have = {g.game_id: answered_calls(layer_dir(g.dir, self.req.layer)) for g in self.games}
        self._deps = {g.game_id: call_graph(g).deps for g in self.games}
        self._sent: dict[str, Prepared] = {}
        position = 0
        try:
            for open_batch in self.ledger.open_batches():  # a run killed while these were pending: collect them first
                self._sent.update({custom_id(p.ga.game_id, p.key, p.job.seat_idx, p.seq): p for ps in self._ready().values() for p in ps})
                await self._collect(open_batch)
            while True:
                ready = self._ready()
                if not ready:
                    break
                for backend_name, calls in sorted(ready.items()):
                    why = self.stop()
                    if why:
                        raise BatchFailed(why)
                    rec = await self._send(backend_name, calls, position)
                    await self._collect(rec)
                position += 1
        finally:
            for w in self._writers.values():
                w.close()
        return {"batches": position, "calls_sent": self.sent}

    def _ready(self) -> dict[str, list[Prepared]]:
        """The unanswered calls whose quoted calls are all answered, per backend."""
        out: dict[str, list[Prepared]] = {}
        for ga in self.games:
            have, deps = self._have[ga.game_id], self._deps[ga.game_id]
            keys = [c for c in ga.scheduled if c not in have and all(d is None or d in have for _, d in deps.get(c, []))]
            if keys:
                for p in self.prepare(ga, keys, have, CallGraph(deps, set())):
                    out.setdefault(p.backend, []).append(p)
        return out

    async def _send(self, backend_name: str, calls: list[Prepared], position: int) -> dict[str, Any]:
        import openai

        backend = self.backends(calls[0].ga)[backend_name]
        body_of = getattr(backend, "request_body", None)
        if body_of is None:
            raise ValueError(f"--batch: backend {backend_name!r} ({getattr(backend, 'type', '?')}) has no Batch API; "
                             "use an openai backend, or ask without --batch")  # fmt: skip
        ids = [custom_id(p.ga.game_id, p.key, p.job.seat_idx, p.seq) for p in calls]
        lines = [json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions", "body": body_of(p.call.request)},
                            ensure_ascii=False) for cid, p in zip(ids, calls, strict=True)]  # fmt: skip
        data = ("\n".join(lines) + "\n").encode("utf-8")
        name = f"batch-{position:04d}-{backend_name}-{int(time.time())}.jsonl"
        local = self.ledger.input_file(name)
        tmp = local.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, local)  # kept beside the ledger: what was sent
        client = backend.endpoint.client(fast_transport=False)
        try:
            f = await client.files.create(file=(name, data, "application/jsonl"), purpose="batch")
            b = await client.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions", completion_window="24h",
                                            metadata={"mafiascope_layer": self.req.layer})  # fmt: skip
        except openai.APIError as exc:  # nothing accepted: the calls stay pending
            raise BatchFailed(f"batch of {len(calls)} calls (chain position {position}) not sent: {api_error(exc)}; run the same "
                              "command again") from None  # fmt: skip
        finally:
            await client.close()
        rec = {"event": "batch", "batch_id": b.id, "input_file_id": f.id, "position": position, "backend": backend_name,
               "calls": len(calls), "file": name}  # fmt: skip
        self.ledger.append(rec)
        self._sent.update(zip(ids, calls, strict=True))
        self.sent += len(calls)
        self.say(f"batch {b.id}: {len(calls)} calls (chain position {position}, backend {backend_name})")
        return rec

    async def _collect(self, rec: dict[str, Any]) -> None:
        """Poll a batch until it ends; write its answers (and its failed lines) as records."""
        import openai

        backend_name = str(rec.get("backend"))
        ga0 = next((g for g in self.games), None)
        if ga0 is None or backend_name not in self.backends(ga0):
            self.ledger.append({"event": "done", "batch_id": rec["batch_id"], "status": "abandoned: backend not in this run"})
            return
        backend = self.backends(ga0)[backend_name]
        client = backend.endpoint.client(fast_transport=False)
        try:
            misses = 0
            while True:
                try:
                    b = await client.batches.retrieve(rec["batch_id"])
                except openai.NotFoundError:  # the provider has no such batch: its calls are pending again
                    self.ledger.append({"event": "done", "batch_id": rec["batch_id"], "status": "not found"})
                    self.say(f"batch {rec['batch_id']}: the provider does not know it; its calls are sent again")
                    return
                except openai.APIError as exc:  # a poll that failed: the batch is still in the ledger
                    misses += 1
                    if misses >= POLL_MISSES:
                        raise BatchFailed(f"batch {rec['batch_id']}: {POLL_MISSES} polls failed ({api_error(exc)}); run the same "
                                          "command again to poll it again") from None  # fmt: skip
                    await asyncio.sleep(self.poll_s)
                    continue
                misses = 0
                if b.status in TERMINAL:
                    break
                await asyncio.sleep(self.poll_s)
            texts = []
            for fid in (b.output_file_id, b.error_file_id):
                if fid:
                    content = await client.files.content(fid)
                    texts.append(content.text if hasattr(content, "text") else content.read().decode("utf-8"))
        finally:
            await client.close()
        if b.status != "completed":
            self.ledger.append({"event": "done", "batch_id": rec["batch_id"], "status": b.status})
            raise BatchFailed(f"batch {rec['batch_id']} {b.status}: its {rec.get('calls')} calls stay pending; run the same "
                              "command again to send them again")  # fmt: skip
        self._ingest(texts, backend)
        self.ledger.append({"event": "done", "batch_id": rec["batch_id"], "status": "completed"})

    def _ingest(self, texts: list[str], backend: Any) -> None:
        for text in texts:
            for line in text.splitlines():
                try:
                    res = json.loads(line)
                except ValueError:
                    continue
                p = self._sent.pop(str(res.get("custom_id")), None) if isinstance(res, dict) else None
                if p is None or p.key in self._have[p.ga.game_id]:
                    continue  # not ours, or written before a crash
                c = completion_of_result(res, p.call.request, backend)
                cv = self.writer(p.ga).write(p.job, p.probe, p.seq, p.call.question, c, p.call.raw_fallback, None, None,
                                             p.call.messages, p.call.values)  # fmt: skip
                self._have[p.ga.game_id][p.key] = cv


class BatchFailed(RuntimeError):
    """A batch ended without answers (failed, expired, cancelled): its calls stay pending."""


def completion_of_result(res: dict[str, Any], request: Any, backend: Any) -> Completion:
    """One output (or error) line of a batch as the backend's Completion of that request."""
    resp = res.get("response") if isinstance(res.get("response"), dict) else None
    status = resp.get("status_code") if resp else None
    if res.get("error") or resp is None or status != 200:
        err = res.get("error") or (resp or {}).get("body", {}).get("error") or {}
        msg = err.get("message") if isinstance(err, dict) else str(err)
        return Completion(ok=False, error=f"batch request failed: {str(msg or status)[:300]}", meta={"batch": True})
    from ..backends.openai_backend import completion_from_body

    try:
        return completion_from_body(resp.get("body"), request, backend_name=getattr(backend, "name", ""), latency_ms=0)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        return Completion(ok=False, error=f"batch response unreadable: {type(exc).__name__}: {str(exc)[:200]}", meta={"batch": True})
