"""Many games at once: K concurrent games in one event loop, sharing backend limits."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import GameConfig
from ..logs import kinds as K
from ..logs.io import game_dir
from .game import GameResult, with_switches


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


BATCHES_DIR = ".batches"  # <logs>/.batches/<id prefix>/: the ledger of a named batch (resumable)


class BatchExists(ValueError):
    """A named batch's ledger is already there and the caller did not ask to resume it."""


def batch_ledger_dir(logs_dir: str | Path, prefix: str) -> Path:
    return Path(logs_dir) / BATCHES_DIR / prefix


IMPORTED = "imported-before-the-ledger"  # the runner id of rows imported from a batch older than its ledger (never alive)


def import_batch_dirs(ledger: Any, ids: list[str], logs_dir: str | Path) -> None:
    """A named batch played before batches had a ledger, now resumed: its finished games become
    ``finished`` (or ``invalid``) rows; a game it left half-played becomes a claim of a dead runner,
    so the resume replays it from scratch like any killed run's game."""
    from ..logs.io import GAME_FILE, iter_jsonl

    recs: list[dict[str, Any]] = []
    for gid in ids:
        gdir = Path(logs_dir) / gid
        if not (gdir / GAME_FILE).is_file() or gdir.is_symlink():
            continue
        over = next((r for r in iter_jsonl(gdir / GAME_FILE, skip_corrupt=True) if r.get("kind") == K.GAME_OVER), None)
        recs.append({"event": "state", "game_id": gid, "state": "running", "runner": IMPORTED})
        if over is not None:
            state = "invalid" if over.get("invalid") else "finished"
            fields = {"winner": over.get("winner"), "rounds": over.get("round"), "reason": over.get("reason")}
            if state == "invalid":
                fields["invalid_reason"] = over.get("invalid_reason")
            recs.append({"event": "state", "game_id": gid, "state": state, "runner": IMPORTED, **fields})
    if recs:
        ledger.append(*recs)


def _result_of(row: dict[str, Any], logs_dir: str | Path) -> GameResult:
    gid = str(row["game_id"])
    return GameResult(gid, str(game_dir(logs_dir, gid)), row.get("winner"), int(row.get("rounds") or 0), row.get("reason") or "",
                      int(row.get("faults") or 0), int(row.get("acts") or 0), row.get("state") == "invalid",
                      row.get("invalid_reason"))  # fmt: skip


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
    resume: bool = False,
) -> BatchResult:
    """Play ``n`` games with at most ``parallel`` in flight; a failing game is reported, not fatal.

    The batch is a one-arm study run by the one runner (:mod:`mafiascope.play.runner`). A
    named batch (``game_id_prefix``) keeps its ledger in ``<logs>/.batches/<prefix>/``: ``resume``
    continues it exactly where it stopped (games never started, games of a killed runner replayed
    from scratch), or joins a batch running now (the ledger's claims split the games); without
    ``resume`` an existing ledger is refused (:class:`BatchExists`). An unnamed batch's games get
    fresh UUIDs and its ledger lives in a temporary directory for the run only. The result lists
    every settled game of the ledger (invalid ones flagged), also those an earlier run played."""
    import tempfile
    import uuid

    from .runner import Job, config_fingerprint, run_games_async, spec_hash

    if n < 1:
        raise ValueError("n must be >= 1")
    cfg = with_switches(cfg, probes, snapshots)
    out = BatchResult()
    base = seed_base if seed_base is not None else (cfg.seed if cfg.seed is not None else 0)
    ids = [f"{game_id_prefix}-{i:04d}" if game_id_prefix else str(uuid.uuid4()) for i in range(n)]
    jobs = [Job(gid, base + i, "batch", i) for i, gid in enumerate(ids)]
    fp = {"kind": "batch", "config": config_fingerprint(cfg), "n": n, "seed_base": base, "prefix": game_id_prefix}
    header = {"name": f"batch-{game_id_prefix or 'anon'}", "spec_hash": spec_hash(fp), "games": n, "front_end": "batch"}
    t0 = time.perf_counter()

    def on_ledger(ledger: Any, created: bool) -> None:
        if created and resume:  # --resume of a batch older than batch ledgers: its games on disk are taken over
            import_batch_dirs(ledger, ids, logs_dir)
        if not created and not resume:
            raise BatchExists(f"--id-prefix {game_id_prefix}: {ledger.dir} holds this batch already (another run started it); "
                              "add --resume to continue or join it")  # fmt: skip

    def on_settle(job: Job, state: str, res: Any, spend: float) -> None:
        if on_result and state in ("finished", "invalid") and isinstance(res, dict):
            on_result(_result_of({**res, "game_id": job.game_id, "state": state}, logs_dir))

    async def run(ledger_dir: Path) -> dict[str, dict[str, Any]]:
        outcome = await run_games_async(ledger_dir, header, jobs, lambda j: cfg, games_dir=logs_dir, parallel=parallel,
                                        on_settle=on_settle, on_ledger=on_ledger)  # fmt: skip
        return outcome.rows

    if game_id_prefix:
        rows = await run(batch_ledger_dir(logs_dir, game_id_prefix))
    else:
        with tempfile.TemporaryDirectory(prefix="mafiascope-batch-") as tmp:
            rows = await run(Path(tmp))
    for row in rows.values():
        st = row.get("state")
        if st in ("finished", "invalid"):
            out.results.append(_result_of(row, logs_dir))
        elif st == "failed" and row.get("error_type") == "GameDirTaken":  # another writer holds the id: never written into
            out.skipped.append({"index": row["index"], "game_id": row["game_id"], "reason": row.get("error")})
        elif st == "failed":
            out.errors.append({"index": row["index"], "seed": row["seed"], "error": row.get("error")})
    out.results.sort(key=lambda r: r.game_id)
    out.skipped.sort(key=lambda s: s["index"])
    out.wall_s = time.perf_counter() - t0
    return out
