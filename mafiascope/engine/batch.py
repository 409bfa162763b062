"""Many games at once: K concurrent games in one event loop, sharing backend limits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import GameConfig
from ..logs.paths import GameDirTaken
from .runner import GameResult, play_game


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
    """Play ``n`` games with at most ``parallel`` in flight; a failing game is reported, not fatal."""
    if n < 1:
        raise ValueError("n must be >= 1")
    sem = asyncio.Semaphore(max(1, parallel))
    out = BatchResult()
    base = seed_base if seed_base is not None else (cfg.seed if cfg.seed is not None else 0)
    t0 = time.perf_counter()

    async def one(i: int) -> None:
        async with sem:
            gid = f"{game_id_prefix}-{i:04d}" if game_id_prefix else None
            try:
                res = await play_game(cfg, logs_dir=logs_dir, seed=base + i, game_id=gid, probes=probes, snapshots=snapshots)
            except GameDirTaken as exc:  # another writer (e.g. a second batch with this prefix) holds the id
                out.skipped.append({"index": i, "game_id": gid, "reason": str(exc)})
                return
            except Exception as exc:  # one broken game must not end the batch
                out.errors.append({"index": i, "seed": base + i, "error": f"{type(exc).__name__}: {exc}"})
                return
            out.results.append(res)
            if on_result:
                on_result(res)

    await asyncio.gather(*(one(i) for i in range(n)))
    out.results.sort(key=lambda r: r.game_id)
    out.skipped.sort(key=lambda s: s["index"])
    out.wall_s = time.perf_counter() - t0
    return out
