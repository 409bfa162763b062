"""Ask a battery of games already played (``mafiascope probes ask``): a named probe layer per game.

For every game under LOGS the seats' contexts at each probe step are rebuilt from the game's own
files (:mod:`.recorded`: ``probe_steps.jsonl`` and ``game.jsonl``; the snapshots of games older than
the steps file; the recorded contexts of imported original games), and the battery's questions are
asked through the same engine and request builder as in-game probes (:mod:`.calls`), each seat's
chained questions quoting its own answers of this layer in step order. Answers go to
``<game>/probe_layers/<NAME>/introspection.jsonl`` (:mod:`mafiascope.logs.layers`); the game's own
files are never written. A seat is asked by its own backend (the game's recorded configuration), or
every seat by one observer backend (``--config CFG --backend NAME``).

The layer's records are its ledger: a call with a record is never asked again, so a run killed at
any point is continued by running the same command (a call in flight when it died has no record
and is asked again). ``layer.json`` per game records what produced the layer (battery and its hash,
backend, when) and its fault verdict; a second run with another battery or backend under the same
name is refused. :func:`plan_ask` counts the calls, tokens and money before anything is asked.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..config import GameConfig
from ..logs.io import list_game_dirs
from ..logs.layers import LayerError, check_layer_name, layer_dir, probe_path, read_manifest, write_manifest
from ..logs.paths import UnsafePathError, inside
from .calls import build_call
from .dsl import Battery, BatteryError, load_battery, shipped_battery_path
from .recorded import CallKey, RecordedGame, RecordError, answered_calls, step_calls
from .step_jobs import ChainValue

DEFAULT_FAULT_BUDGET = 0.05  # share of a game's layer calls that may fail before the layer of that game is invalid
PLAN_SAMPLE = 200  # calls whose exact request is built for the token estimate


class AskError(ValueError):
    """A user-facing problem with the request (one line naming the option, file or game)."""


@dataclass
class Price:
    prompt_per_mtok: float
    completion_per_mtok: float

    def money(self, prompt: float, completion: float) -> float:
        return prompt / 1e6 * self.prompt_per_mtok + completion / 1e6 * self.completion_per_mtok


@dataclass
class AskRequest:
    """What to ask, of which games, with what (the command line's options)."""

    logs: Path
    battery: str  # a battery YAML, or a shipped name (chained, default, suspicion: in each game's language)
    layer: str
    config: GameConfig | None = None  # with ``backend``: one observer for every seat
    backend: str | None = None
    seats: set[str] | None = None  # seat names; None: every probed seat
    fault_budget: float = DEFAULT_FAULT_BUDGET
    price: Price | None = None
    batch: bool = False
    batch_discount: float = 0.5  # the provider's batch price as a share of its price
    parallel: int = 4

    @property
    def observer(self) -> bool:
        return self.backend is not None


@dataclass
class GameAsk:
    """One game: its steps rebuilt, the calls its layer still lacks, or why it cannot be asked."""

    dir: Path
    game_id: str
    refusal: str | None = None
    game: RecordedGame | None = None
    battery: Battery | None = None
    battery_source: str = ""
    steps: list[Any] = field(default_factory=list)
    scheduled: list[CallKey] = field(default_factory=list)
    pending: list[CallKey] = field(default_factory=list)
    cfg: GameConfig | None = None  # the configuration its calls are asked with (the game's, or the observer's)
    _state: Any = None  # the rebuilt state (the plan's sample builds requests from it)
    _answer_chars: dict[str, int] | None = None  # mean characters of the game's own answers per probe

    def state(self) -> Any:
        if self._state is None:
            assert self.game is not None
            self._state = self.game.state_for_asking()
        return self._state


# ---------------------------------------------------------------------- batteries and games


def resolve_battery(ref: str, language: str) -> tuple[Battery, str]:
    """A battery YAML path, or a shipped name resolved in the game's language."""
    path = Path(ref)
    if not path.is_file():
        shipped = shipped_battery_path(ref, language)
        if shipped is None:
            raise AskError(f"--battery {ref!r}: no such file and no shipped battery of that name (chained, default, suspicion)")
        path = shipped
    try:
        return load_battery(path), str(path)
    except BatteryError as exc:
        raise AskError(" ".join(str(exc).split())) from None


def battery_hash(battery: Battery) -> str:
    return hashlib.sha256(json.dumps(battery.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


def prepare(req: AskRequest) -> list[GameAsk]:
    """Every game under LOGS with its steps and the calls its layer lacks (or a one-line refusal)."""
    check_layer_name(req.layer)
    root = req.logs
    if not root.is_dir():
        raise AskError(f"{root}: no such logs directory")
    out = []
    for d in list_game_dirs(root):
        try:
            inside(root, d) if d != root else None
        except UnsafePathError as exc:
            out.append(GameAsk(d, d.name, refusal=str(exc)))
            continue
        out.append(_prepare_game(d, req))
    return out


def _prepare_game(d: Path, req: AskRequest) -> GameAsk:
    try:
        game = RecordedGame.load(d)
    except RecordError as exc:
        return GameAsk(d, d.name, refusal=str(exc))
    ga = GameAsk(d, game.game_id, game=game)
    if not game.finished:
        ga.refusal = f"game {game.game_id}: not finished (no game_over; still running, or resume it first)"
        return ga
    if not req.observer and not isinstance(game.setup.get("config"), dict):
        ga.refusal = (f"game {game.game_id}: its log records no backend configuration (an original MafiaScope game?); "
                      "ask it with --config CFG --backend NAME")  # fmt: skip
        return ga
    try:
        ga.steps = game.asking_steps()
        ga.battery, ga.battery_source = resolve_battery(req.battery, game.language)
        ga.cfg = req.config if req.observer else game.config()
    except (RecordError, AskError) as exc:
        ga.refusal = str(exc)
        return ga
    if req.seats:
        unknown = sorted(req.seats - set(game.seat_names()))
        if len(unknown) == len(req.seats):
            ga.refusal = f"game {game.game_id}: none of --seats ({', '.join(sorted(req.seats))}) sits in it"
            return ga
    try:  # nothing written outside the logs directory: no symlink on the way to the layer's files
        for part in (layer_dir(d, req.layer), probe_path(d, req.layer)):
            inside(req.logs, part)
    except UnsafePathError as exc:
        ga.refusal = f"game {game.game_id}: {exc}"
        return ga
    old = read_manifest(d, req.layer)
    if old is not None:
        want = layer_identity(ga, req)
        have = {k: old.get(k) for k in want}
        if have != want:
            diff = next(k for k in want if have[k] != want[k])
            ga.refusal = (f"game {game.game_id}: layer {req.layer!r} was asked with another {diff} "
                          f"({str(have[diff])[:60]}); use another --layer name")  # fmt: skip
            return ga
    ga.scheduled = [(s.step_index, seat, p.id) for s in ga.steps for seat, p in step_calls(ga.battery, s)
                    if req.seats is None or seat in req.seats]  # fmt: skip
    have_calls = answered_calls(layer_dir(d, req.layer)) if probe_path(d, req.layer).is_file() else {}
    ga.pending = [c for c in ga.scheduled if c not in have_calls]
    return ga


def layer_identity(ga: GameAsk, req: AskRequest) -> dict[str, Any]:
    """What makes a layer the same measurement on a rerun: the battery (by content), who answers, which seats."""
    assert ga.battery is not None
    who = f"observer {req.backend}: {_backend_identity(ga.cfg, req.backend)}" if req.observer else "each seat's own backend"
    return {"battery_sha256": battery_hash(ga.battery), "answered_by": who,
            "seats": sorted(req.seats) if req.seats else None}  # fmt: skip


def _backend_identity(cfg: GameConfig | None, name: str | None) -> str:
    if cfg is None or name is None or name not in cfg.backends:
        return str(name)
    spec = cfg.backends[name].model_dump(mode="json")
    return ", ".join(f"{k}={spec[k]}" for k in ("type", "model", "preset", "base_url") if spec.get(k) is not None)


# ---------------------------------------------------------------------- the plan


def plan_ask(games: list[GameAsk], req: AskRequest, *, sample: int = PLAN_SAMPLE, seed: int = 0) -> dict[str, Any]:
    """Calls, tokens and money before anything is asked.

    Prompt tokens: characters / 3 of the exact requests (context and question) of a sample of the pending
    calls, quoted earlier answers counted at the size of the game's own answers to that probe where it
    has them; completion tokens: the mean completion of the game's own answers to the probe, else the
    probe's ``max_tokens`` (an upper bound, said in ``completion_basis``)."""
    ok = [g for g in games if g.refusal is None]
    pending = [(g, c) for g in ok for c in g.pending]
    rng = random.Random(seed)
    picked = pending if len(pending) <= sample else rng.sample(pending, sample)
    prompt_chars: list[int] = []
    completion: dict[str, list[int]] = {}
    basis = "the games' own answers"
    for g, (k, seat, pid) in picked:
        prompt_chars.append(_request_chars(g, k, seat, pid))
    for g in ok:
        for pid, toks in _own_completion_tokens(g).items():
            completion.setdefault(pid, []).extend(toks)
    n = len(pending)
    mean_prompt = (sum(prompt_chars) / len(prompt_chars) / 3) if prompt_chars else 0.0
    comp_tot = 0.0
    for g, (_k, _seat, pid) in pending:
        own = completion.get(pid)
        if own:
            comp_tot += sum(own) / len(own)
        else:
            assert g.battery is not None
            comp_tot += next((p.max_tokens for p in g.battery.active if p.id == pid), 300)
            basis = "max_tokens where the games hold no answer to the probe (an upper bound)"
    prompt_tot = mean_prompt * n
    out: dict[str, Any] = {
        "layer": req.layer, "games": len(games), "games_to_ask": sum(1 for g in ok if g.pending),
        "refused": [{"game_id": g.game_id, "reason": g.refusal} for g in games if g.refusal],
        "calls_scheduled": sum(len(g.scheduled) for g in ok), "calls": n,
        "calls_answered_before": sum(len(g.scheduled) - len(g.pending) for g in ok),
        "prompt_tokens": int(round(prompt_tot)), "completion_tokens": int(round(comp_tot)),
        "prompt_basis": f"characters / 3 of {len(picked)} requests built exactly", "completion_basis": basis,
        "batch": req.batch,
    }  # fmt: skip
    if req.price is not None:
        money = req.price.money(prompt_tot, comp_tot)
        out["money"] = round(money * (req.batch_discount if req.batch else 1.0), 6)
        out["money_without_batch"] = round(money, 6)
    else:
        out["money"] = None
    if req.batch:
        out["batches"] = chain_positions(ok)
    return out


def _request_chars(g: GameAsk, k: int, seat: str, pid: str) -> int:
    """Characters of the exact request of one call (quoted answers at the game's own answers' size)."""
    assert g.game is not None and g.battery is not None
    state = g.state()
    step = next(s for s in g.steps if s.step_index == k)
    probe = next(p for p in g.battery.active if p.id == pid)
    from ..engine.observation import Context, context_for
    from .step_jobs import SeatJob, role_options, step_kind

    ctx = (step.contexts or {}).get(seat) if step.contexts is not None else context_for(state, seat, step.events)
    if ctx is None:
        ctx = Context([], [])
    st = state.seat(seat)
    job = SeatJob(step=step, kind=step_kind(step), seat=seat, seat_idx=st.idx, role=st.role, model=st.model_label,
                  backend=st.backend, ctx=ctx, players=list(step.alive or []), seats=[s.name for s in state.seats], t_step=0.0)  # fmt: skip
    quoted: dict[str, ChainValue | None] = {f"{kind}_{ref}": ChainValue("x" * _mean_answer_chars(g, ref)) for kind, ref in probe.chain_refs()}
    call = build_call(job, probe, 0, quoted, role_options(state), g.game_id)
    return sum(len(m.get("content") or "") for m in call.messages)


def _mean_answer_chars(g: GameAsk, pid: str) -> int:
    if g._answer_chars is None:
        from ..logs import iter_probe_records

        per: dict[str, list[int]] = {}
        for r in iter_probe_records(g.dir):
            raw = r.get("answer_raw")
            if isinstance(raw, str):
                per.setdefault(str(r.get("probe_id")), []).append(len(raw))
        g._answer_chars = {k: int(sum(v) / len(v)) for k, v in per.items() if v}
    return g._answer_chars.get(pid, 0)


def _own_completion_tokens(g: GameAsk) -> dict[str, list[int]]:
    from ..logs import iter_probe_records

    out: dict[str, list[int]] = {}
    for r in iter_probe_records(g.dir):
        tc = r.get("tokens_completion")
        if isinstance(tc, int) and r.get("error") is None:
            out.setdefault(str(r.get("probe_id")), []).append(tc)
    return out


def chain_positions(games: list[GameAsk]) -> int:
    """How many batches the Batch API path sends: the longest chain of pending calls quoting each other."""
    from .batch_api import call_graph

    depth = 0
    for g in games:
        if g.pending:
            graph = call_graph(g)
            depth = max(depth, 1 + max((graph.position(c) for c in g.pending), default=-1))
    return depth


# ---------------------------------------------------------------------- asking


def game_manifest(ga: GameAsk, req: AskRequest, counts: dict[str, int], backends: dict[str, Any]) -> dict[str, Any]:
    assert ga.battery is not None
    failed, scheduled = counts.get("failed", 0), counts.get("scheduled", 0)
    out = {
        "layer": req.layer, "game_id": ga.game_id, **layer_identity(ga, req), "battery": ga.battery.name,
        "battery_source": ga.battery_source, "battery_definitions": [p.model_dump(mode="json", exclude_unset=True) for p in ga.battery.probes],
        "backends": {n: b.describe() for n, b in backends.items()}, "batch": req.batch, "asked_at": time.time(),
        "library_version": __version__, **counts, "fault_budget": req.fault_budget,
    }  # fmt: skip
    if scheduled and failed / scheduled > req.fault_budget:
        out.update(invalid=True, invalid_reason=f"{failed} of {scheduled} calls of layer {req.layer!r} failed "
                                                 f"(> {req.fault_budget * 100:g}%)")  # fmt: skip
    return out


def layer_counts(ga: GameAsk, layer: str) -> dict[str, int]:
    """Calls scheduled, answered and failed in the game's layer so far."""
    have = answered_calls(layer_dir(ga.dir, layer)) if probe_path(ga.dir, layer).is_file() else {}
    from ..logs import iter_probe_records

    failed = sum(1 for r in iter_probe_records(layer_dir(ga.dir, layer)) if r.get("error") is not None) if have else 0
    answered = sum(1 for c in ga.scheduled if c in have) - failed
    return {"scheduled": len(ga.scheduled), "answered": answered, "failed": failed,
            "pending": sum(1 for c in ga.scheduled if c not in have)}  # fmt: skip


def backends_for(ga: GameAsk, req: AskRequest) -> dict[str, Any]:
    """The backends a game's calls go to: the observer for every seat, or each seat's own."""
    from ..backends.base import BackendError
    from ..backends.registry import build_backends
    from ..config import redacted_backends

    assert ga.cfg is not None and ga.game is not None
    if req.observer:
        specs = {req.backend: ga.cfg.backends[req.backend]}  # type: ignore[index]
    else:
        used = set(ga.game.seat_backends())
        hidden = redacted_backends(ga.cfg, used)
        if hidden:
            raise AskError(f"game {ga.game_id}: the key of backend(s) {', '.join(hidden)} was redacted in its log; "
                           "ask it with --config CFG --backend NAME")  # fmt: skip
        specs = {k: v for k, v in ga.cfg.backends.items() if k in used}
    try:  # every client through the one factory (backends/clients.py): the key policy sees each base URL
        return build_backends(specs, logs_dir=req.logs)  # type: ignore[arg-type]
    except BackendError as exc:
        raise AskError(f"game {ga.game_id}: {' '.join(str(exc).split())}") from None


async def ask_game(ga: GameAsk, req: AskRequest, backends: dict[str, Any],
                   on_record: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:  # fmt: skip
    """Ask one game's pending calls into its layer (synchronous API calls through the probe engine)."""
    from .pending import ask_missing

    assert ga.game is not None and ga.battery is not None
    out_dir = layer_dir(ga.dir, req.layer)
    out_dir.mkdir(parents=True, exist_ok=True)
    inside(req.logs, probe_path(ga.dir, req.layer))  # checked again now that the directory exists
    if ga.pending:
        await ask_missing(ga.game, ga.battery, out_dir, backends, steps=ga.steps, seats=req.seats,
                          observer=req.backend if req.observer else None, on_record=on_record)  # fmt: skip
    return settle_game(ga, req, backends)


def settle_game(ga: GameAsk, req: AskRequest, backends: dict[str, Any]) -> dict[str, Any]:
    """Count the game's layer and write its ``layer.json`` (with the fault verdict)."""
    counts = layer_counts(ga, req.layer)
    manifest = game_manifest(ga, req, counts, backends)
    write_manifest(ga.dir, req.layer, manifest)
    return {"game_id": ga.game_id, **counts, "invalid": bool(manifest.get("invalid")), "invalid_reason": manifest.get("invalid_reason")}


async def run_ask(games: list[GameAsk], req: AskRequest, *, on_record: Callable[[dict[str, Any]], None] | None = None,
                  poll_s: float = 30.0, say: Callable[[str], None] | None = None,
                  budget_money: float | None = None) -> dict[str, Any]:  # fmt: skip
    """Ask every prepared game's pending calls (``parallel`` games at once, or through the Batch API);
    stops starting games once the money spent reaches ``budget_money``. Returns per-game counts."""
    import asyncio

    todo = [g for g in games if g.refusal is None and g.pending]
    results: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    tally = {"asked": 0, "money": 0.0}
    stopped: str | None = None
    discount = req.batch_discount if req.batch else 1.0

    def counted(rec: dict[str, Any]) -> None:
        tally["asked"] += 1
        if req.price is not None:
            tally["money"] += req.price.money(rec.get("tokens_prompt") or 0, rec.get("tokens_completion") or 0) * discount
        if on_record is not None:
            on_record(rec)

    if req.batch and todo:
        from .batch_api import BatchFailed, BatchRun

        def over_budget() -> str | None:
            if budget_money is not None and tally["money"] >= budget_money:
                return f"budget: {tally['money']:.4f} spent reached --budget-money {budget_money:g}; run again with a larger budget"
            return None

        try:
            await BatchRun(games, req, lambda ga: backends_for(ga, req), poll_s=poll_s, on_record=counted, say=say,
                           stop=over_budget).run()  # fmt: skip
        except BatchFailed as exc:
            stopped = str(exc)
        except ValueError as exc:
            raise AskError(str(exc)) from None
        for g in todo:
            results.append(settle_game(g, req, backends_for(g, req)))
    elif todo:
        sem = asyncio.Semaphore(max(1, req.parallel))

        async def one(g: GameAsk) -> None:
            nonlocal stopped
            async with sem:
                if stopped is None and budget_money is not None and tally["money"] >= budget_money:
                    stopped = f"budget: {tally['money']:.4f} spent reached --budget-money {budget_money:g}; run again with a larger budget"
                if stopped is not None:
                    return
                try:
                    results.append(await ask_game(g, req, backends_for(g, req), counted))
                except (AskError, RecordError, ValueError, OSError) as exc:
                    failed.append({"game_id": g.game_id, "error": " ".join(str(exc).split())[:300]})

        await asyncio.gather(*(one(g) for g in todo))
    for g in games:
        if g.refusal is None and not g.pending:
            results.append({"game_id": g.game_id, **layer_counts(g, req.layer), "invalid": bool((read_manifest(g.dir, req.layer) or {}).get("invalid")),
                            "invalid_reason": (read_manifest(g.dir, req.layer) or {}).get("invalid_reason")})  # fmt: skip
    results.sort(key=lambda r: r["game_id"])
    return {"games": results, "failed_games": failed, "asked": tally["asked"], "money": round(tally["money"], 6) if req.price else None,
            "stopped": stopped, "refused": [{"game_id": g.game_id, "reason": g.refusal} for g in games if g.refusal]}  # fmt: skip


def budget_check(plan: dict[str, Any], budget_money: float | None, budget_calls: int | None) -> str | None:
    """Why the plan does not fit the budget (None: it fits)."""
    if budget_calls is not None and plan["calls"] > budget_calls:
        return f"budget: {plan['calls']} calls planned exceed --budget-calls {budget_calls}"
    if budget_money is not None:
        if plan.get("money") is None:
            return "budget: --budget-money needs --price PROMPT,COMPLETION (per million tokens)"
        if plan["money"] > budget_money:
            return f"budget: {plan['money']:.4f} planned exceeds --budget-money {budget_money:g}"
    return None


__all__ = ["AskError", "AskRequest", "GameAsk", "LayerError", "Price", "ask_game", "backends_for", "budget_check",
           "layer_counts", "plan_ask", "prepare", "resolve_battery", "run_ask"]
