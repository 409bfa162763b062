"""The executors every multi-game front end shares: local (asyncio) and Ray.

Both take games from ``next_game()`` -- any object with ``game_id`` (None: a new UUID) and
``seed`` (and optionally ``logs_dir``), or None when nothing more should start -- so a caller decides at the last moment
what runs next (a study claims each game in its ledger under a lock; an arena run or a batch
feeds a fixed list), and both call ``record(game, result | exception)`` after each game in
the calling process, so ledgers are written in one place. A result is
``{game_id, winner, rounds, reason, faults, acts, seconds}`` (plus ``invalid``, ``invalid_reason``
for a game over its fault budget).

The local executor overlaps games with their probes: a game whose last move is made while its
probe calls are still queued (a provider's rate limit) keeps draining them in the background,
and its worker starts the next game at once, whose moves then go before those probes
(mafiascope.backends.limits). At most ``parallel`` games drain at once; beyond that a worker
waits for its own game to finish. A game's result is recorded when its probes are done.

A game object with ``finish_probes`` set is not played: it died while its probes drained, and
only its pending probe calls and ``game_over`` are written (mafiascope.probes.pending).

Called only by the one runner (:mod:`mafiascope.play.runner`), which every front end goes
through: ``study run``, ``batch``, ``arena run``, ``validate ab`` and fork batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from ..config import GameConfig

WAITING = object()  # what next_game() answers when a game may start only once one in flight settles (a budget)
WAIT_POLL_S = 2.0  # how long a waiting worker sleeps unless a game of its own run settles first (another runner's may)


class ExecutorError(ValueError):
    """A user-facing executor problem (Ray missing ...)."""


def feeder(games: Iterable[Any]) -> Callable[[], Any]:
    """``next_game`` over a fixed list."""
    it = iter(games)
    return lambda: next(it, None)


def _result(res: Any, seconds: float, allowance: Any = None) -> dict[str, Any]:
    out = {"game_id": res.game_id, "winner": res.winner, "rounds": res.rounds, "reason": res.reason, "faults": res.faults,
           "acts": res.acts, "seconds": round(seconds, 3)}  # fmt: skip
    if getattr(res, "invalid", False):  # over the fault budget (engine/faults.py), or cut
        out.update(invalid=True, invalid_reason=res.invalid_reason)
    if getattr(res, "cut", None):
        out["cut"] = res.cut
    if allowance is not None:
        out["metered"] = allowance.totals()
    return out


async def _play_local(cfg: GameConfig, run_dir: Path, g: Any, backends: dict[str, Any] | None,
                      on_acts_done: Callable[[], None] | None = None) -> dict[str, Any]:  # fmt: skip
    from .game import play_game

    t0 = time.time()
    logs_dir = getattr(g, "logs_dir", None) or run_dir  # a game may name its own directory (validate ab's two arms)
    allowance = getattr(g, "allowance", None)  # a budget's hard cap (play/spend.py)
    if allowance is not None:
        from ..backends.registry import build_backends

        backends = allowance.wrap(backends if backends is not None else build_backends(cfg.backends, logs_dir=logs_dir))
    try:
        if getattr(g, "finish_probes", False):
            from ..probes.pending import finish_game

            out = await finish_game(Path(logs_dir) / g.game_id, backends=backends)
            return {**out, "metered": allowance.totals()} if allowance is not None else out
        res = await play_game(cfg, logs_dir=logs_dir, seed=g.seed, game_id=g.game_id, backends=backends,
                              halt=allowance.halt if allowance is not None else None, on_acts_done=on_acts_done)  # fmt: skip
    except Exception as exc:
        if allowance is not None:
            exc.metered = allowance.totals()  # type: ignore[attr-defined]  # what a failed game spent still counts
        raise
    return _result(res, time.time() - t0, allowance)


def _play_in_worker(cfg_data: dict[str, Any], run_dir: str, seed: int, game_id: str | None,
                    allowance: dict[str, Any] | None = None, finish_probes: bool = False,
                    sources: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """Ray task body: one game in the worker's own event loop (``allowance``: its fixed share of a hard
    budget, ``{"money", "calls", "prices"}``; a worker cannot ask the driver for more; ``finish_probes``:
    only the pending probe calls and game_over of a game that died draining them; ``sources``: where the
    driver read each backend, which a dumped config does not carry)."""
    from ..backends.registry import Source, build_backends, mark_source, run_closing
    from .game import run_game
    from .spend import Allowance
    from .usage import Price

    t0 = time.time()
    cfg = GameConfig.model_validate(cfg_data)
    for name, src in (sources or {}).items():
        if name in cfg.backends:
            mark_source([cfg.backends[name]], Source[src])
    meter = None
    backends = None
    if allowance is not None:
        prices = {b: Price.model_validate(p) if p else None for b, p in (allowance.get("prices") or {}).items()}
        meter = Allowance(allowance.get("money"), allowance.get("calls"), prices)
        backends = meter.wrap(build_backends(cfg.backends, logs_dir=run_dir))
    try:
        if finish_probes and game_id is not None:
            from ..probes.pending import finish_game

            out = run_closing(finish_game(Path(run_dir) / game_id, backends=backends))
            return {**out, "metered": meter.totals()} if meter is not None else out
        res = run_game(
            cfg, logs_dir=run_dir, seed=seed, game_id=game_id, backends=backends, halt=meter.halt if meter is not None else None
        )
    except Exception as exc:
        if meter is None:
            raise
        return {"failed": f"{type(exc).__name__}: {exc}", "error_type": type(exc).__name__, "metered": meter.totals()}
    return _result(res, time.time() - t0, meter)


class WorkerGameError(RuntimeError):
    """A game that raised in a Ray worker while it held a budget allowance (``metered``: what it spent)."""

    def __init__(self, out: dict[str, Any]) -> None:
        super().__init__(str(out["failed"]).split(": ", 1)[-1])
        self.metered = out["metered"]
        self.error_type = out.get("error_type")


async def execute_local(next_game: Callable[[], Any], cfg_of: Callable[[Any], GameConfig], run_dir: Path, parallel: int,
                        backend_factory: Callable[[GameConfig], dict[str, Any]] | None, record: Callable[..., None],
                        play: Callable[[Any], Awaitable[dict[str, Any]]] | None = None) -> None:  # fmt: skip
    """``parallel`` workers in this event loop, each taking games from ``next_game()`` until it returns
    None; ``record(game, result | exception)`` after each (one broken game never stops the others).
    ``play(game)``: the caller's own game coroutine (a fork branch continues a saved state) instead
    of a fresh game of ``cfg_of(game)``. A fresh game whose moves are done hands its probe drain to
    the background (at most ``parallel`` such games) and its worker takes the next game."""

    draining: set[asyncio.Task[None]] = set()
    settled = asyncio.Event()

    def recorded(g: Any, out: Any) -> None:
        record(g, out)
        settled.set()

    async def until_settled() -> None:
        settled.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(settled.wait(), WAIT_POLL_S)

    async def one(g: Any, acts_done: Callable[[], None]) -> Any:
        try:
            if play is not None:
                return await play(g)
            cfg = cfg_of(g)
            return await _play_local(cfg, run_dir, g, backend_factory(cfg) if backend_factory else None, acts_done)
        except Exception as exc:  # one broken game never stops the run
            return exc

    async def settle(g: Any, task: asyncio.Future[Any]) -> None:
        recorded(g, await task)

    async def worker() -> None:
        while (g := next_game()) is not None:
            if g is WAITING:
                await until_settled()
                continue
            acts = asyncio.Event()
            task = asyncio.ensure_future(one(g, acts.set))
            waiter = asyncio.ensure_future(acts.wait())
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if not task.done() and len(draining) < max(1, parallel):  # its moves are done: the probes drain behind
                t = asyncio.ensure_future(settle(g, task))
                draining.add(t)
                t.add_done_callback(draining.discard)
                continue
            recorded(g, await task)

    await asyncio.gather(*(worker() for _ in range(max(1, parallel))))
    while draining:
        await asyncio.gather(*list(draining))
    try:
        from ..backends.registry import close_all

        await close_all()
    except Exception:
        pass


def execute_ray(next_game: Callable[[], Any], cfg_of: Callable[[Any], GameConfig], run_dir: Path, parallel: int,
                address: str | None, record: Callable[..., None]) -> None:  # fmt: skip
    """The Ray executor: one task per game, at most ``parallel`` in flight; the driver alone takes games
    (``next_game``) and records results, so the ledger is written in one place."""
    from ..backends.registry import spec_source

    try:
        import ray
    except ImportError:
        raise ExecutorError("--executor ray needs Ray: pip install 'mafiascope[ray]'") from None
    started = False
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
        started = True
    try:
        task = ray.remote(_play_in_worker)
        pending: dict[Any, Any] = {}
        more = True
        while more or pending:
            while more and len(pending) < parallel:
                g = next_game()
                if g is None:
                    more = False
                    break
                if g is WAITING:  # the budget waits for a game in flight: take results first
                    if not pending:
                        time.sleep(WAIT_POLL_S)  # held by another runner's games
                        continue
                    break
                logs_dir = Path(getattr(g, "logs_dir", None) or run_dir)
                share = getattr(g, "allowance", None)
                fixed = None if share is None else {"money": share.money, "calls": share.calls,
                                                    "prices": {b: p.model_dump() if p else None for b, p in share.prices.items()}}  # fmt: skip
                cfg = cfg_of(g)
                ref = task.remote(
                    cfg.model_dump(mode="json"),
                    str(logs_dir.resolve()),
                    g.seed,
                    g.game_id,
                    fixed,
                    bool(getattr(g, "finish_probes", False)),
                    {k: spec_source(b).name for k, b in cfg.backends.items()},
                )
                pending[ref] = g
            if not pending:
                break
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                g = pending.pop(ref)
                try:
                    out = ray.get(ref)
                except Exception as exc:
                    record(g, exc)
                    continue
                record(g, WorkerGameError(out) if isinstance(out, dict) and "failed" in out else out)
    finally:
        if started:
            ray.shutdown()
