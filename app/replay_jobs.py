"""Replay page helpers: fork jobs as background processes, and reading branches/experiments from the logs.

A fork runs as ``python -m mafiascope fork ... --batch-id ID`` in its own process, so it
survives page reruns and even a closed browser tab; the page only polls
``<logs>/experiments/fork-<ID>.progress.jsonl`` and the batch record ``fork-<ID>.json``.
The process registry (app/jobs.py) is a ``st.cache_resource`` singleton shared by all sessions.
"""

from __future__ import annotations

import math
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from mafiascope.logs import MissingSetupError, iter_jsonl, kinds, read_game
from mafiascope.logs.io import loads_line
from mafiascope.logs.paths import inside
from mafiascope.replay.forks import experiments_dir

from .jobs import BackgroundJob, Registry, Work, admit, parallel_cap, spawn
from .paths import DATA_DIR, runs_dir


@dataclass(kw_only=True)
class ForkJob(BackgroundJob):
    batch_id: str
    game_id: str
    logs: str
    n: int

    def progress(self) -> dict[str, Any]:
        return read_progress(self.logs, self.batch_id, self.n)


@st.cache_resource
def jobs() -> Registry[ForkJob]:
    return Registry()


def for_game(game_id: str) -> list[ForkJob]:
    """The fork batches started here for ``game_id``, newest first."""
    return [j for j in jobs().all() if j.game_id == game_id]


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def branch_logs(game_dir: str | Path) -> Path:
    """Where the branches of ``game_dir`` are written: next to the game, unless the game is
    bundled with the repository (under data/, read-only on a deployment and never written
    to) or its directory is not writable; then into the runs directory ($MAFIASCOPE_RUNS),
    which the sidebar always lists, so the branches still open in every view."""
    parent = Path(game_dir).parent
    if _inside(parent, DATA_DIR) or not os.access(parent, os.W_OK):
        return runs_dir()
    return parent


def read_dirs(game_dir: str | Path) -> list[Path]:
    """The directories holding the branches and experiments of ``game_dir``: its own and,
    if different, the one :func:`branch_logs` writes new branches to."""
    own, out = Path(game_dir).parent, branch_logs(game_dir)
    return [own] if own.resolve() == out.resolve() else [own, out]


def branch_tree_of(game_dir: str | Path, game_id: str) -> dict[str, Any]:
    """:func:`mafiascope.replay.summary.branch_tree` over every directory of :func:`read_dirs`."""
    from mafiascope.replay.summary import branch_tree

    batches: list[dict[str, Any]] = []
    for d in read_dirs(game_dir):
        if d.is_dir():
            batches += branch_tree(d, game_id)["batches"]
    batches.sort(key=lambda b: tuple(b["fork_point"] or [0, 0]))
    tree = {"game_id": game_id, "batches": batches}
    _mark_inherited(tree)
    return tree


_OUTCOME_KINDS = {kinds.DAY_ELIMINATE: ("day_eliminated", "eliminated"), kinds.NIGHT_KILL: ("night_killed", "victim")}


def inherited_outcomes(branch_dir: str | Path) -> tuple[dict[str, dict[str, str]], str | None]:
    """The eliminations a branch copied from its parent (``inherited: true``, before the fork point):
    ``{"day_eliminated": {round: name}, "night_killed": {round: name}}``, as keyed in the outcome summary, and the
    timeline label of the branch's first message of its own (None before it has one). Every branch of a batch
    inherits the same ones; they are history, not outcomes of the branch."""
    from mafiascope.logs import step_label

    out: dict[str, dict[str, str]] = {"day_eliminated": {}, "night_killed": {}}
    try:
        log = read_game(branch_dir)
    except (FileNotFoundError, MissingSetupError):
        return out, None
    for rec in log.records:
        if rec.get("inherited"):  # the inherited records come first
            kind = kinds.of(rec)
            if kind in _OUTCOME_KINDS:
                key, field = _OUTCOME_KINDS[kind]
                out[key][str(rec.get("round"))] = str(rec.get(field))
        elif isinstance(rec.get("msg_seq"), int):
            return out, step_label(int(rec.get("round") or 0), int(rec["msg_seq"]))
    return out, None


def _mark_inherited(node: dict[str, Any]) -> None:
    """Adds ``inherited`` and ``first_new`` (see :func:`inherited_outcomes`, read from the batch's first branch) to
    every batch of a tree."""
    for b in node.get("batches", []):
        first = next((br for br in b.get("branches", []) if br.get("path")), None)
        b["inherited"], b["first_new"] = inherited_outcomes(first["path"]) if first else ({}, None)
        for br in b.get("branches", []):
            _mark_inherited(br)


def experiment_batches(dirs: list[Path], game_id: str) -> dict[str, str]:
    """fork batch id -> what made it, for the batches an experiment started (attribution's PRE and POST rerolls, a
    bifurcation's continuations): the branch tree labels them instead of showing plain resamples. A result file of
    the wrong shape (a shared logs root) labels nothing."""
    from .widgets import MALFORMED

    out: dict[str, str] = {}
    for d in dirs:
        for e in experiments_for(d, game_id):
            try:
                out.update(_made_by(e))
            except MALFORMED:
                continue
    return out


def _made_by(e: dict[str, Any]) -> dict[str, str]:
    from mafiascope.logs import step_label

    out: dict[str, str] = {}
    if e.get("kind") == "attribution":
        for u in e.get("utterances") or []:
            ut = u.get("utterance") or {}
            at = step_label(int(ut.get("round") or 0), int(ut.get("msg_seq") or 0)) if "round" in ut else str(ut.get("step"))
            for arm in ("pre", "post"):
                bid = (u.get(arm) or {}).get("fork_batch_id")
                if bid:
                    out[str(bid)] = f"attribution {e.get('experiment_id')}: {arm.upper()} of {at} ({ut.get('speaker')})"
    elif e.get("kind") == "bifurcation" and e.get("fork_batch_id"):
        out[str(e["fork_batch_id"])] = f"bifurcation {e.get('experiment_id')}"
    return out


def night_actors(parent: Any, key: tuple[int, int]) -> list[dict[str, Any]]:
    """Who can still be given a night override from step ``key``, with their legal targets (the engine decides)."""
    from mafiascope.replay.forks import night_override_options

    return night_override_options(parent, key)


def newly_finished(jobs: list[ForkJob], seen: set[str]) -> list[ForkJob]:
    """Jobs that have finished (the process exited) and are not in ``seen`` yet; adds them to ``seen``.

    The page's progress fragment reruns only itself: when a batch finishes, the whole page
    must rerun so that the branch tree (outside the fragment) shows the new branches."""
    out = [j for j in jobs if j.batch_id not in seen and not j.running]
    seen.update(j.batch_id for j in out)
    return out


_PAGE_WORDS = (("--replace-utterance", "Replacement utterance"), ("--override-night", "Night override"),
               ("either Replacement utterance or Night override, not both", "either a replacement utterance or a night override, not both (clear one)"),
               ("(see `fork --list`)", "(move the timeline to that night)"), ("--probes", "Probes"))  # fmt: skip


def page_error(msg: str) -> str:
    """A fork error in the page's words: the form's field names instead of the command line's flags."""
    for cli, page in _PAGE_WORDS:
        msg = msg.replace(cli, page)
    return msg


def fork_work(n: int) -> Work:
    """A fork batch of ``n`` branches for the quotas (up to 4 at once, fewer under the parallel quota)."""
    return Work("this fork", int(n), parallel_cap(min(4, int(n))), "forks_per_request")


def fork_command(game_dir: str, step: str, n: int, probes: str, *, logs: str, batch_id: str, replace: str | None = None,
                 seat: str | None = None, override_night: str | None = None, keep_seed: bool = False,
                 parallel: int = 4) -> list[str]:  # fmt: skip
    cmd = [sys.executable, "-m", "mafiascope", "fork", str(game_dir), "--at", step, "-n", str(int(n)), "--probes", probes,
           "--logs", str(logs), "--batch-id", batch_id, "--parallel", str(max(1, min(int(parallel), int(n)))), "--json"]  # fmt: skip
    if replace:
        cmd += ["--replace-utterance", replace] + (["--seat", seat] if seat else [])
    if override_night:
        cmd += ["--override-night", override_night]
    if keep_seed:
        cmd.append("--keep-seed")
    return cmd


def start_fork(game_id: str, game_dir: str, step: str, n: int, probes: str, **kw: Any) -> ForkJob:
    """Validate (quickly, in-process) and start a fork batch in the background."""
    from mafiascope.replay.forks import plan_fork

    work = fork_work(n)
    admit(work)  # the quotas (app/jobs.py), before anything is planned or written
    logs = str(branch_logs(game_dir))
    night = kw.get("override_night")
    plan_fork(game_dir, step, n, logs=logs, probes=probes, replace_text=kw.get("replace"), seat=kw.get("seat"),
              override_night=tuple(night.split("=", 1)) if night else None)  # fmt: skip  (raises ReplayError)
    batch_id = secrets.token_hex(5)
    cmd = fork_command(game_dir, step, n, probes, logs=logs, batch_id=batch_id, parallel=work.parallel, **kw)
    log_dir = experiments_dir(logs)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = str(inside(logs, log_dir / f"fork-{batch_id}.stderr.txt"))  # never through a symlinked experiments/
    proc = spawn(cmd, log_file, work=work, stdout_to_log=False, start_new_session=True)
    job = ForkJob(cmd=cmd, proc=proc, log_file=log_file, batch_id=batch_id, game_id=game_id, logs=logs, n=n)
    jobs().add(batch_id, job)
    return job


def read_progress(logs: str | Path, batch_id: str, n: int) -> dict[str, Any]:
    path = experiments_dir(logs) / f"fork-{batch_id}.progress.jsonl"
    done, errors, finished = 0, 0, False
    if path.is_file():
        for rec in iter_jsonl(path):
            if rec.get("event") == "branch":
                done += 1
                errors += bool(rec.get("error"))
            elif rec.get("event") == "done":
                finished = True
    return {"done": done, "errors": errors, "n": n, "finished": finished}


def experiments_for(logs: str | Path, game_id: str) -> list[dict[str, Any]]:
    """Experiment/validation JSON files under <logs>/experiments that concern ``game_id`` (newest first)."""
    out = []
    d = experiments_dir(logs)
    if not d.is_dir():
        return out
    for p in d.glob("*.json"):
        try:
            obj = loads_line(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(obj, dict) and obj.get("kind") in ("attribution", "bifurcation") and obj.get("parent_game_id") == game_id:
            out.append({**obj, "path": str(p)})
    return sorted(out, key=newest_first)


def newest_first(record: dict[str, Any]) -> float:
    """Sort key of result records by their ``created`` time (a record without a number there sorts last)."""
    t = record.get("created")
    return -float(t) if isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t) else 0.0


def validations(logs: str | Path) -> list[dict[str, Any]]:
    d = experiments_dir(logs)
    out = []
    for p in sorted(d.glob("validate-*.json"), reverse=True) if d.is_dir() else []:
        try:
            obj = loads_line(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(obj, dict):
            out.append({**obj, "path": str(p)})
    return out
