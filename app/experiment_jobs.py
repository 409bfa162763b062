"""Replay experiments (attribution, bifurcation) and instrument validations (A/B, repeatability) run from
the Replay page as background jobs (app/jobs.py), like fork batches.

Each job is ``python -m mafiascope replay attribution|bifurcate`` or ``validate ab|repeat`` with
``--progress FILE`` (mafiascope/replay/progress.py); the page polls that file. Every request is checked
in-process first (the same planning functions the CLI uses), so bad input is an error on the page and
nothing is started or written.
"""

from __future__ import annotations

import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
import yaml

from mafiascope.backends.registry import run_closing
from mafiascope.logs.io import loads_line
from mafiascope.logs.paths import inside
from mafiascope.replay.forks import experiments_dir
from mafiascope.replay.progress import Progress, read_progress

from .jobs import BackgroundJob, Registry, Work, admit, parallel_cap, spawn
from .paths import runs_dir
from .replay_jobs import branch_logs

UNITS = {"attribution": "forks", "bifurcation": "continuations", "validate_ab": "games", "validate_repeat": "states"}


@dataclass(kw_only=True)
class ExperimentJob(BackgroundJob):
    job_id: str
    kind: str  # a key of UNITS
    game_id: str  # the Replay page's game the job was started from
    progress_file: str

    def progress(self) -> Progress:
        return read_progress(self.progress_file)

    def label(self) -> str:
        p = self.progress()
        total = f"/{p.total}" if p.total is not None else ""
        return f"{self.kind.replace('_', ' ')} {self.job_id}: {p.done}{total} {UNITS[self.kind]} finished" + (
            f", {p.errors} failed" if p.errors else "")


@st.cache_resource
def jobs() -> Registry[ExperimentJob]:
    return Registry()


def for_game(game_id: str) -> list[ExperimentJob]:
    """The experiment jobs started from ``game_id``'s Replay page, newest first."""
    return [j for j in jobs().all() if j.game_id == game_id]


def experiment_work(kind: str, units: int) -> Work:
    """An experiment for the quotas: re-rolls, continuations or re-asked states count as branches of one Replay
    request, an A/B validation's games as games per job; two at once (fewer under the parallel quota)."""
    limit = "games_per_job" if kind == "validate_ab" else "forks_per_request"
    return Work(f"this {kind.replace('_', ' ')}", int(units), parallel_cap(2), limit)


def _start(kind: str, game_id: str, out: Path, cmd: list[str], work: Work) -> ExperimentJob:
    """Run ``cmd`` (without its progress flag) in the background; progress and stderr go to ``out``/experiments/."""
    job_id = secrets.token_hex(4)
    d = experiments_dir(out)
    d.mkdir(parents=True, exist_ok=True)
    prog = str(inside(out, d / f"job-{job_id}.progress.jsonl"))
    log = str(inside(out, d / f"job-{job_id}.stderr.txt"))
    cmd = [sys.executable, "-m", "mafiascope", *cmd, "--progress", prog, "--json"]
    job = ExperimentJob(cmd=cmd, proc=spawn(cmd, log, work=work, stdout_to_log=False, start_new_session=True), log_file=log,
                        job_id=job_id, kind=kind, game_id=game_id, progress_file=prog)  # fmt: skip
    jobs().add(job_id, job)
    return job


def start_attribution(game_id: str, game_dir: str, utterances: list[str], n: int, *, target: str | None,
                      probes: str = "suspicion") -> ExperimentJob:  # fmt: skip
    """PRE/POST rerolls around ``utterances`` (steps ``R.S``); ReplayError on bad input (nothing started)."""
    from mafiascope.replay.experiments import plan_attribution

    work = experiment_work("attribution", 2 * int(n) * max(1, len(utterances)))  # PRE and POST re-rolls per utterance
    admit(work)
    logs = branch_logs(game_dir)
    plan_attribution(game_dir, utterances, n, target=target, probes=probes, logs=logs)
    cmd = ["replay", "attribution", str(game_dir), "--utterances", ",".join(utterances), "-n", str(int(n)), "--probes", probes,
           "--logs", str(logs), "--parallel", str(work.parallel)] + (["--target", target] if target else [])  # fmt: skip
    return _start("attribution", game_id, logs, cmd, work)


def start_bifurcation(game_id: str, game_dir: str, at: str, seat: str | None, *, samples: int, select: int,
                      continuations: int = 1, probes: str = "none") -> ExperimentJob:  # fmt: skip
    """Sample, select and continue alternatives of the utterance at ``at``; ReplayError on bad input."""
    from mafiascope.replay.bifurcation import run_bifurcation

    work = experiment_work("bifurcation", int(select) * int(continuations))
    admit(work)
    logs = branch_logs(game_dir)
    run_closing(run_bifurcation(game_dir, at, seat, samples=samples, select=select, continuations=continuations,
                                probes=probes, logs=logs, dry_run=True))  # fmt: skip  (validates, runs nothing)
    cmd = ["replay", "bifurcate", str(game_dir), "--at", at, "--samples", str(int(samples)), "--select", str(int(select)),
           "--continuations", str(int(continuations)), "--probes", probes, "--logs", str(logs), "--parallel", str(work.parallel)]
    return _start("bifurcation", game_id, logs, cmd + (["--seat", seat] if seat else []), work)


def start_ab(game_id: str, game_dir: str, games: int) -> ExperimentJob:
    """Probed vs unprobed games on this game's set-up (its config rebuilt from the setup record).

    The games go to the runs directory (``<runs>/probed``, ``<runs>/unprobed``: the sidebar lists them)
    with ids ``ab<job>-probed-NNNN``; the result goes next to this game's branches."""
    from mafiascope.config import GameConfig
    from mafiascope.replay.source import ParentGame, ReplayError

    if not 1 <= int(games) <= 200:
        raise ReplayError("games per arm must be between 1 and 200")
    work = experiment_work("validate_ab", 2 * int(games))  # probed and unprobed
    admit(work)
    cfg: GameConfig = ParentGame.load(game_dir).config()
    runs = runs_dir()
    tag = secrets.token_hex(3)
    d = experiments_dir(runs)
    d.mkdir(parents=True, exist_ok=True)
    conf = inside(runs, d / f"ab-{tag}.yaml")
    conf.write_text(yaml.safe_dump(cfg.model_dump(mode="json", exclude_none=True), sort_keys=False), encoding="utf-8")
    cmd = ["validate", "ab", "-c", str(conf), "--games", str(int(games)), "--logs", str(runs), "--id-prefix", f"ab{tag}",
           "--results", str(branch_logs(game_dir)), "--parallel", str(work.parallel)]  # fmt: skip
    return _start("validate_ab", game_id, branch_logs(game_dir), cmd, work)


def start_repeat(game_id: str, game_dir: str, states: int, repeats: int, seed: int = 0) -> ExperimentJob:
    """Re-ask the probe battery at saved states of the games next to this one; the result goes next to its branches."""
    from mafiascope.replay.source import ReplayError
    from mafiascope.replay.validate import pick_states

    if not 1 <= int(states) <= 200 or not 2 <= int(repeats) <= 20:
        raise ReplayError("states must be between 1 and 200 and repeats between 2 and 20")
    work = experiment_work("validate_repeat", int(states))
    admit(work)
    logs = Path(game_dir).parent
    pick_states(logs, 1, seed)  # ReplayError when no probed game with snapshots is there
    cmd = ["validate", "repeat", str(logs), "--states", str(int(states)), "--repeats", str(int(repeats)), "--seed", str(int(seed)),
           "--results", str(branch_logs(game_dir))]  # fmt: skip
    return _start("validate_repeat", game_id, branch_logs(game_dir), cmd, work)


def result_of(job: ExperimentJob) -> dict[str, Any] | None:
    """The job's result JSON once written (None before, or if unreadable)."""
    p = job.progress()
    if not p.result:
        return None
    try:
        return loads_line(Path(p.result).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
