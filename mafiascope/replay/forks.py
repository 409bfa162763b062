"""Fork a recorded game at a saved step and continue it N times.

Each branch is an ordinary game directory (``<logs>/<branch_id>/``) that opens as a whole
game: its ``game.jsonl`` is the setup record (with ``forked_from``, ``fork_point``,
``fork_batch_id``, ``replica_idx``, ``intervention``), then the parent's events up to the
fork point copied with ``inherited: true``, then the branch's own events. Its
``state.jsonl`` and ``introspection.jsonl`` likewise start with the parent's records up to
the fork point (``inherited: true``), so a branch can be forked again at any step, its own
or inherited. ``fork_point`` is the parent step whose snapshot the branch restarted from.

Seeds: a replica's state seed is derived from (parent seed, batch seed, fork point,
replica index), so replicas resample every later draw; ``keep_seed`` keeps the parent's
seed and counters, which makes an offline-bot branch without intervention replay the
parent exactly. The configuration always comes from the parent's own logs.

The pieces: fork_plan (the validated request and its checks), fork_branch (one branch),
experiment_files (the batch records); this module runs a batch.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..backends.base import Backend
from ..backends.registry import run_closing
from ..logs.io import JsonlWriter
from ..logs.paths import UnsafePathError, claim_file
from .experiment_files import EXPERIMENTS_DIR, experiments_dir, write_json_atomic
from .fork_branch import BranchResult, branch_id, replica_seed, run_branch
from .fork_plan import MAX_N, MAX_PARALLEL, PROBE_MODES, SUSPICION_PROBE, ForkPlan, night_override_options, plan_fork, state_at, valid_battery
from .progress import progress_line
from .source import Key, ReplayError

__all__ = [
    "EXPERIMENTS_DIR", "MAX_N", "MAX_PARALLEL", "PROBE_MODES", "SUSPICION_PROBE", "BranchFailed", "BranchResult", "ForkPlan",
    "branch_id", "experiments_dir", "fork", "night_override_options", "plan_fork", "replica_seed",
    "run_branch", "run_fork_batch", "state_at", "valid_battery", "write_json_atomic",
]  # fmt: skip


async def run_fork_batch(plan: ForkPlan, on_result: Callable[[BranchResult], None] | None = None,
                         backends: dict[str, Backend] | None = None) -> dict[str, Any]:  # fmt: skip
    """Run the plan's N branches (``parallel`` at a time) and write the batch record.

    The branches are jobs of the one study runner (:mod:`mafiascope.play.runner`), played by
    :func:`run_branch` (a branch continues the saved state), with their ledger in
    ``<logs>/experiments/fork-<id>.ledger/`` next to the record. A branch over the fault budget is
    ``invalid`` there, flagged in ``branches[]``, listed in the record's ``invalid`` and left out of
    its ``summary``."""
    from ..backends.registry import build_backends
    from ..play.runner import Job, run_games_async, spec_hash
    from .summary import game_outcome, summarize

    if backends is None:
        backends = build_backends(plan.cfg.backends, logs_dir=plan.logs_dir)
    progress = experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.progress.jsonl"
    record: dict[str, Any] = {"kind": "fork_batch", **plan.describe(), "created": time.time(), "status": "running"}
    if plan.write_batch_file:
        try:
            claim_file(plan.logs_dir, experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.json")
        except (FileExistsError, UnsafePathError) as exc:
            raise ReplayError(f"--batch-id {plan.batch_id}: the batch record cannot be claimed ({exc}); "
                              "another fork holds this batch id") from None  # fmt: skip
        write_json_atomic(experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.json", record, root=plan.logs_dir)
        prog = JsonlWriter(progress)
        prog.write(progress_line({"event": "start", "fork_batch_id": plan.batch_id, "n": plan.n, "ts": time.time()}))
    results: dict[int, BranchResult] = {}

    async def play(job: Job) -> dict[str, Any]:
        r = results[job.index] = await run_branch(plan, job.index, backends)
        if plan.write_batch_file:
            prog.write(progress_line({"event": "branch", **r.as_dict(), "ts": time.time()}))
        if on_result:
            on_result(r)
        if r.error is not None:
            raise BranchFailed(r.error)
        return {**r.as_dict(), "game_id": r.game_id}

    jobs = [Job(branch_id(plan, i), replica_seed(plan, i), "fork", i, logs_dir=plan.logs_dir, fields={"replica_idx": i})
            for i in range(plan.n)]  # fmt: skip
    header = {"name": f"fork-{plan.batch_id}", "spec_hash": spec_hash({"kind": "fork_batch", **plan.describe()}), "games": plan.n,
              "front_end": "fork_batch"}  # fmt: skip
    with contextlib.ExitStack() as stack:  # the ledger: next to the batch record, or scratch when there is no record
        ledger_dir = (experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.ledger" if plan.write_batch_file
                      else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mafiascope-fork-"))))  # fmt: skip
        outcome = await run_games_async(ledger_dir, header, jobs, lambda j: plan.cfg, games_dir=plan.logs_dir, parallel=plan.parallel,
                                        play=play)  # fmt: skip
    ordered = [results[i] for i in range(plan.n) if i in results]
    outcomes = []
    for r in ordered:
        if r.error is None and outcome.rows[r.game_id].get("state") == "finished":  # invalid branches are left out
            try:
                outcomes.append(game_outcome(r.path))
            except Exception:
                pass
    record.update(status="done", finished=time.time(), branches=[r.as_dict() for r in ordered],
                  failed=sum(1 for r in ordered if r.error), summary=summarize(outcomes),
                  invalid=[gid for gid, row in outcome.rows.items() if row.get("state") == "invalid"])  # fmt: skip
    if plan.write_batch_file:
        prog.write(progress_line({"event": "done", "fork_batch_id": plan.batch_id, "ts": time.time()}))
        prog.close()
        write_json_atomic(experiments_dir(plan.logs_dir) / f"fork-{plan.batch_id}.json", record, root=plan.logs_dir)
    return record


class BranchFailed(RuntimeError):
    """A branch that did not finish (its error is in its BranchResult)."""


def fork(game: str | Path, at: Key | str, n: int = 1, **kwargs: Any) -> dict[str, Any]:
    """Synchronous helper: plan and run a fork batch."""
    plan = plan_fork(game, at, n, **kwargs)
    return run_closing(run_fork_batch(plan))
