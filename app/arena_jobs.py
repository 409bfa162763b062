"""Arena runs launched from the app: background `python -m mafiascope arena run ...` processes.

A run lives in its directory (games + ledger.jsonl), so its progress is read from the ledger
on every rerun; the process registry is a ``st.cache_resource`` singleton so a launched run
survives reruns and is visible to every session.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st
import yaml

from mafiascope.arena.ledger import Ledger

from .paths import REPO_ROOT, runs_dir


def arena_root() -> Path:
    return runs_dir() / "arena"


@dataclass
class ArenaJob:
    name: str
    run_dir: str
    cmd: list[str]
    proc: subprocess.Popen
    log_file: str

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()

    def stderr_tail(self, n: int = 6) -> str:
        try:
            return "\n".join(Path(self.log_file).read_text(encoding="utf-8", errors="replace").splitlines()[-n:])
        except OSError:
            return ""


@dataclass
class Jobs:
    by_name: dict[str, ArenaJob] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@st.cache_resource
def jobs() -> Jobs:
    return Jobs()


def run_command(roster_file: str, rules: list[str], games: int, run_dir: str, parallel: int, seed: int) -> list[str]:
    return [sys.executable, "-m", "mafiascope", "arena", "run", "--roster", roster_file, "--rules", ",".join(rules),
            "--games", str(games), "--logs", run_dir, "--parallel", str(parallel), "--seed", str(seed)]  # fmt: skip


def launch(name: str, roster: dict[str, Any], rules: list[str], games: int, parallel: int = 4, seed: int = 0) -> ArenaJob:
    run_dir = arena_root() / name
    run_dir.mkdir(parents=True, exist_ok=True)
    roster_file = run_dir / "roster.yaml"
    roster_file.write_text(yaml.safe_dump(roster, sort_keys=False, allow_unicode=True), encoding="utf-8")
    cmd = run_command(str(roster_file), rules, games, str(run_dir), parallel, seed)
    log_file = run_dir / "arena_run.log"
    with log_file.open("a", encoding="utf-8") as fh:
        proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    job = ArenaJob(name, str(run_dir), cmd, proc, str(log_file))
    reg = jobs()
    with reg.lock:
        reg.by_name[name] = job
    return job


def progress(run_dir: str | Path) -> dict[str, Any]:
    st_ = Ledger(run_dir).status()
    return {"scheduled": st_["scheduled"], "finished": st_["finished"], "failed": st_["failed"]}


def known_runs() -> list[Path]:
    root = arena_root()
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if (p / "ledger.jsonl").is_file()), key=lambda p: -p.stat().st_mtime)
