"""Arena runs launched from the app: background `python -m mafiascope arena run ...` processes.

A run lives in its directory (games + ledger.jsonl), so its progress is read from the ledger
on every rerun; the process registry (app/jobs.py) is a ``st.cache_resource`` singleton so a launched run
survives reruns and is visible to every session.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
import yaml

from mafiascope.arena.ledger import Ledger
from mafiascope.logs.paths import game_dir, inside

from .jobs import BackgroundJob, JobRefused, Registry, Work, admit, claim_dir, owns_dir, spawn
from .paths import ARENA_DATA_DIR, runs_dir


def arena_root() -> Path:
    return runs_dir() / "arena"


@dataclass(kw_only=True)
class ArenaJob(BackgroundJob):
    name: str
    run_dir: str

    def stop(self, grace: float | None = None) -> None:
        """Terminate the run's process without waiting for it."""
        super().stop(grace)


@st.cache_resource
def jobs() -> Registry[ArenaJob]:
    return Registry()


def run_command(roster_file: str, rules: list[str], games: int, run_dir: str, parallel: int, seed: int) -> list[str]:
    return [sys.executable, "-m", "mafiascope", "arena", "run", "--roster", roster_file, "--rules", ",".join(rules),
            "--games", str(games), "--logs", run_dir, "--parallel", str(parallel), "--seed", str(seed)]  # fmt: skip


def arena_work(rules: list[str], games: int, parallel: int) -> Work:
    """An arena run for the quotas: ``games`` per rule set."""
    return Work("this arena run", int(games) * max(1, len(rules)), int(parallel))


def launch(name: str, roster: dict[str, Any], rules: list[str], games: int, parallel: int = 4, seed: int = 0) -> ArenaJob:
    """Start ``mafiascope arena run`` into ``<runs>/arena/<name>``; the name comes from a form, so it must be a
    valid id naming a real directory inside the arena root (ValueError otherwise: no symlink, no ``..``)."""
    run_dir = game_dir(arena_root(), name)
    if run_dir.exists() and not owns_dir(run_dir):
        raise JobRefused(f"arena run {name}: another visitor started it; pick another name")
    work = arena_work(rules, games, parallel)
    admit(work)  # the quotas (app/jobs.py), before anything is written
    run_dir.mkdir(parents=True, exist_ok=True)
    claim_dir(run_dir)
    roster_file = inside(arena_root(), run_dir / "roster.yaml")
    roster_file.write_text(yaml.safe_dump(roster, sort_keys=False, allow_unicode=True), encoding="utf-8")
    cmd = run_command(str(roster_file), rules, games, str(run_dir), parallel, seed)
    log_file = run_dir / "arena_run.log"
    proc = spawn(cmd, log_file, work=work, append=True, stdin=subprocess.DEVNULL)
    job = ArenaJob(cmd=cmd, proc=proc, log_file=str(log_file), name=name, run_dir=str(run_dir))
    jobs().add(name, job)
    return job


def progress(run_dir: str | Path) -> dict[str, Any]:
    st_ = Ledger(run_dir).status()
    return {"scheduled": st_["scheduled"], "finished": st_["finished"], "failed": st_["failed"]}


def _runs_under(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if (p / "ledger.jsonl").is_file()), key=lambda p: (-p.stat().st_mtime, p.name))


def known_runs() -> list[Path]:
    """The user's runs (newest first; in public mode only this session's), then the bundled runs under data/arena
    (the default on a fresh install)."""
    return [p for p in _runs_under(arena_root()) if owns_dir(p)] + _runs_under(ARENA_DATA_DIR)
