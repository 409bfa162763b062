"""Many games at once: K concurrent games in one event loop, sharing backend limits."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import GameConfig
from ..logs.io import game_dir
from ..logs.paths import GameDirTaken
from .runner import GameResult


@dataclass
class BatchResult:
    results: list[GameResult] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # ids another writer holds: never written into
    wall_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        winners: dict[str, int] = {}
        for r in self.results:
            winners[r.winner or "unfinished"] = winners.get(r.winner or "unfinished", 0) + 1
        n = len(self.results)
        return {
            "games": n,
            "errors": len(self.errors),
            "winners": winners,
            "mean_rounds": (sum(r.rounds for r in self.results) / n) if n else None,
            "faults": sum(r.faults for r in self.results),
            "wall_s": round(self.wall_s, 3),
            "games_per_s": round(n / self.wall_s, 3) if self.wall_s > 0 else None,
            "game_ids": [r.game_id for r in self.results],
            "invalid": [r.game_id for r in self.results if r.invalid],  # over the fault budget (engine/faults.py)
            "error_details": self.errors,
            "skipped": self.skipped,
        }


@dataclass
class _BatchGame:
    index: int
    game_id: str | None  # None: a new UUID
    seed: int


async def run_batch(
    cfg: GameConfig,
    n: int,
    *,
    logs_dir: str | Path,
    parallel: int = 4,
    seed_base: int | None = None,
    probes: bool | None = None,
    snapshots: bool | None = None,
    game_id_prefix: str | None = None,
    on_result: Callable[[GameResult], None] | None = None,
) -> BatchResult:
    """Play ``n`` games with at most ``parallel`` in flight; a failing game is reported, not fatal.

    The games go through the shared local executor (:mod:`mafiascope.engine.executors`), as arena
    runs and studies do."""
    from .executors import execute_local, feeder

    if n < 1:
        raise ValueError("n must be >= 1")
    if probes is not None or snapshots is not None:
        cfg = cfg.model_copy(deep=True)
        if probes is not None:
            cfg.probes.enabled = probes
        if snapshots is not None:
            cfg.snapshots = snapshots
    out = BatchResult()
    base = seed_base if seed_base is not None else (cfg.seed if cfg.seed is not None else 0)
    games = [_BatchGame(i, f"{game_id_prefix}-{i:04d}" if game_id_prefix else None, base + i) for i in range(n)]
    t0 = time.perf_counter()

    def record(g: _BatchGame, res: dict[str, Any] | BaseException) -> None:
        if isinstance(res, GameDirTaken):  # another writer (e.g. a second batch with this prefix) holds the id
            out.skipped.append({"index": g.index, "game_id": g.game_id, "reason": str(res)})
            return
        if isinstance(res, BaseException):  # one broken game must not end the batch
            out.errors.append({"index": g.index, "seed": g.seed, "error": f"{type(res).__name__}: {res}"})
            return
        gid = str(res["game_id"])
        result = GameResult(gid, str(game_dir(logs_dir, gid)), res["winner"], res["rounds"], res["reason"], res["faults"], res["acts"],
                            bool(res.get("invalid", False)), res.get("invalid_reason"))
        out.results.append(result)
        if on_result:
            on_result(result)


    await execute_local(feeder(games), lambda g: cfg, Path(logs_dir), parallel, None, record)
    out.results.sort(key=lambda r: r.game_id)
    out.skipped.sort(key=lambda s: s["index"])
    out.wall_s = time.perf_counter() - t0
    return out
