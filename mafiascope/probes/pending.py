"""Probe calls a crash left unanswered, and finishing them (``mafiascope resume``, ``study run``).

A call is *pending* when its step is in ``probe_steps.jsonl`` and ``introspection.jsonl`` holds
no record of it (every call the engine schedules ends in exactly one record: answered, failed
or skipped). :func:`finish_pending` asks the pending calls of a game in step order, each seat's
chained questions quoting the answers as the game would have (those recorded, then those asked
now), with the game's own battery, seeds and backends, through the same engine and the same
request builder as in-game calls, appending their records. :func:`finish_game` then writes the
``game_over`` of a game whose last move was made (``acts_done``) before the crash.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from ..config import redacted_backends
from ..logs import iter_probe_records
from ..logs.io import GAME_FILE, PROBE_FILE, JsonlWriter, trim_torn_tail
from .dsl import battery_for_config
from .probe_record import cost_of_records
from .recorded import CallKey, RecordedGame, RecordError, answered_calls, step_calls


def pending_calls(game: RecordedGame, upto: int | None = None) -> list[CallKey]:
    """(step, seat, probe) of every scheduled call with no record, step order."""
    if not game.steps.steps:
        return []
    battery, _ = battery_for_config(game.config())
    have = answered_calls(game.dir)
    return [(s.step_index, seat, p.id) for s in game.probe_steps(upto) for seat, p in step_calls(battery, s)
            if (s.step_index, seat, p.id) not in have]  # fmt: skip


def needs_finishing(game_dir: str | Path) -> bool:
    """The game's last move was made but its ``game_over`` was never written (it died draining its probes)."""
    try:
        game = RecordedGame.load(game_dir)
    except RecordError:
        return False
    return game.steps.acts_done is not None and not game.finished


async def finish_pending(game_dir: str | Path, *, backends: dict[str, Any] | None = None, upto: int | None = None) -> dict[str, Any]:
    """Ask the game's pending calls (those of steps up to ``upto``); ``{"game_id", "pending", "asked"}``."""
    from ..backends.registry import build_backends
    from .dsl import battery_for_config

    game = RecordedGame.load(game_dir)
    missing = pending_calls(game, upto)
    out = {"game_id": game.game_id, "pending": len(missing), "asked": 0}
    if not missing:
        return out
    cfg = game.config()
    hidden = redacted_backends(cfg, set(game.seat_backends()))
    if hidden:
        raise RecordError(f"game {game.game_id}: the key of backend(s) {', '.join(hidden)} was redacted in the log; cannot finish its probes")
    if backends is None:
        backends = build_backends(cfg.backends, logs_dir=game.dir.parent)
    battery, _ = battery_for_config(cfg)
    out["asked"] = await ask_missing(game, battery, game.dir, backends, steps=game.probe_steps(upto),
                                     max_concurrency=cfg.probes.max_concurrency)  # fmt: skip
    return out


async def ask_missing(game: RecordedGame, battery: Any, out_dir: Path, backends: dict[str, Any], *, steps: list[Any],
                      seats: set[str] | None = None, observer: str | None = None, max_concurrency: int | None = None,
                      on_record: Any = None) -> int:  # fmt: skip
    """Ask ``battery``'s calls at ``steps`` that ``out_dir/introspection.jsonl`` holds no record of, in step
    order through the probe engine (a seat's chained questions quote its records there, then the answers
    asked now); ``seats``: only these seats; ``observer``: one backend answers for every seat. Returns how
    many calls were asked."""
    from ..play.game import backend_demand
    from . import make_engine

    have = answered_calls(out_dir) if (out_dir / PROBE_FILE).is_file() else {}
    todo = {(s.step_index, seat, p.id) for s in steps for seat, p in step_calls(battery, s) if seats is None or seat in seats}
    todo -= set(have)
    if not todo:
        return 0
    state = game.state_for_asking()
    if observer is not None:
        for s in state.seats:
            s.backend, s.model_label = observer, getattr(backends[observer], "model_label", s.model_label)
    trim_torn_tail(out_dir / PROBE_FILE)  # a record cut by a crash: its call is asked again
    hook = make_engine(battery, state, backends, out_dir, max_concurrency=max_concurrency, on_record=on_record)
    first = min(k for k, _, _ in todo)
    with contextlib.ExitStack() as stack:
        for name, n in backend_demand(state, hook).items():
            limits = getattr(backends.get(name), "limits", None)
            if limits is not None and hasattr(limits, "demand"):
                stack.enter_context(limits.demand(n))
        try:
            for step in steps:
                k = step.step_index
                if k < first and not hook.chained:  # nothing before the first pending call is quoted
                    continue
                only = {(seat, pid) for (kk, seat, pid) in todo if kk == k}
                known = {(seat, pid): cv for (kk, seat, pid), cv in have.items() if kk == k}
                hook.on_step(state, step, only=only, known=known)
        finally:
            await hook.drain()
    return len(todo)


async def finish_game(game_dir: str | Path, *, backends: dict[str, Any] | None = None) -> dict[str, Any]:
    """Finish a game that died while its probes drained: ask the pending calls, then write its
    ``game_over`` from the ``acts_done`` line (act figures, fault verdict) and every probe record.
    Returns the executor's result shape (``game_id``, ``winner``, ``rounds``, ``reason``, ``faults``,
    ``acts``, ``invalid``...)."""
    from ..engine.faults import game_over_record
    from ..engine.records import line

    t0 = time.time()
    done = await finish_pending(game_dir, backends=backends)
    game = RecordedGame.load(game_dir)
    final = game.steps.acts_done
    if final is None:
        raise RecordError(f"{game.game_id}: its last move was not recorded (no acts_done line); resume it from a snapshot instead")
    if not game.finished:
        cfg = game.config()
        probes = {**cost_of_records(iter_probe_records(game.dir)), "finished_by_resume": done["asked"]}
        rec = game_over_record(final, final.get("backends") or {}, probes, cfg.probes.loss_budget)
        trim_torn_tail(game.dir / GAME_FILE)
        with JsonlWriter(game.dir / GAME_FILE) as w:
            w.write(line({"game_id": game.game_id, **rec, "ts": time.time()}))
        final = rec
    else:
        final = next(r for r in reversed(game.records) if r.get("kind") == "game_over")
    act = (final.get("cost") or {}).get("act") or {}
    out = {"game_id": game.game_id, "winner": final.get("winner"), "rounds": final.get("round"), "reason": final.get("reason"),
           "faults": int(final.get("faults") or 0), "acts": int(act.get("calls") or 0), "seconds": round(time.time() - t0, 3),
           "probes_finished": done["asked"]}  # fmt: skip
    if final.get("invalid"):
        out.update(invalid=True, invalid_reason=final.get("invalid_reason"))
    return out

