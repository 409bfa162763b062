"""Studies launched from the app: background `python -m mafiascope study run SPEC --dir DIR` processes.

A study lives in its directory under ``<runs>/studies/<name>`` (spec.yaml, plan.json,
ledger.jsonl, games/); the page reads its progress from the ledger on every rerun. Stopping
terminates the process (the game in flight is replayed on resume); resuming starts the same
command again, which continues from the ledger.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
import yaml

from .jobs import BackgroundJob, JobRefused, Registry, Work, admit, claim_dir, owns_dir, spawn
from .paths import runs_dir

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
SPEC_FILE = "spec.yaml"


def studies_root() -> Path:
    return runs_dir() / "studies"


@dataclass(kw_only=True)
class StudyJob(BackgroundJob):
    name: str
    study_dir: str


@st.cache_resource
def jobs() -> Registry[StudyJob]:
    return Registry()


def study_dir(name: str) -> Path:
    if not NAME.match(name or ""):
        raise ValueError("study name: 1-40 letters, digits, '_', '.', '-'")
    return studies_root() / name


def run_command(spec_file: str, directory: str) -> list[str]:
    return [sys.executable, "-m", "mafiascope", "study", "run", spec_file, "--dir", directory, "--json"]


def study_work(spec: Any) -> Work:
    """A study (a parsed spec, or its data) for the quotas: every game it schedules, its parallelism."""
    from mafiascope.study.spec import StudySpec, parse_study_spec

    if not isinstance(spec, StudySpec):
        spec = parse_study_spec(spec, "study")
    return Work("this study", spec.total_games(), spec.executor.parallel, "study_games")


def spec_of(d: Path) -> Any:
    from mafiascope.study.run import load_study

    return load_study(d / SPEC_FILE if (d / SPEC_FILE).is_file() else d)[0]


def start(name: str) -> StudyJob:
    """Start (or resume) the study saved under ``<runs>/studies/<name>``: its spec saved by the app, or the
    directory itself for a study run from the command line (its ``spec.json``). In public mode only the
    session that started it may (JobRefused otherwise); the quotas apply (app/jobs.py)."""
    d = study_dir(name)
    if not owns_dir(d):
        raise JobRefused(f"study {name}: another visitor started it")
    work = study_work(spec_of(d))
    cmd = run_command(str(d / SPEC_FILE) if (d / SPEC_FILE).is_file() else str(d), str(d))
    log_file = d / "study_run.log"
    proc = spawn(cmd, log_file, work=work, append=True, stdin=subprocess.DEVNULL)
    job = StudyJob(cmd=cmd, proc=proc, log_file=str(log_file), name=name, study_dir=str(d))
    jobs().add(name, job)
    return job


def save_and_launch(name: str, spec: dict[str, Any]) -> StudyJob:
    """Write the spec (its ``out:`` replaced by the study directory) and start it."""
    d = study_dir(name)
    admit(study_work(spec))  # the quotas, before anything is written
    d.mkdir(parents=True, exist_ok=True)
    claim_dir(d)
    data = {**spec, "out": str(d)}
    (d / SPEC_FILE).write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return start(name)


def grow(name: str, games_per_arm: int) -> StudyJob:
    """Raise the saved study's ``games_per_arm`` and run it again: its games are kept, the new ones are
    scheduled (docs/studies.md, "Growing a study"). Raises ValueError (one line) when the spec refuses it."""
    from mafiascope.config import ConfigError
    from mafiascope.study.spec import parse_study_spec

    d = study_dir(name)
    if not owns_dir(d):
        raise JobRefused(f"study {name}: another visitor started it")
    data = yaml.safe_load((d / SPEC_FILE).read_text(encoding="utf-8"))
    if games_per_arm < int(data.get("games_per_arm") or 0):
        raise ValueError(f"games per arm: a study only grows (it has {data.get('games_per_arm')})")
    data["games_per_arm"] = games_per_arm
    try:
        grown = parse_study_spec(data, str(d / SPEC_FILE))
    except ConfigError as exc:
        raise ValueError(" ".join(str(exc).split())) from None
    admit(study_work(grown))  # the grown study within the quotas, before the spec is rewritten
    (d / SPEC_FILE).write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return start(name)


def running(name: str) -> StudyJob | None:
    job = jobs().get(name)
    return job if job is not None and job.running else None


def known_studies() -> list[Path]:
    """Study directories under ``<runs>/studies``, newest first: launched here (``spec.yaml``) or run there from the
    command line (``spec.json``); in public mode only those this session started."""
    root = studies_root()
    if not root.is_dir():
        return []
    found = (p for p in root.iterdir() if NAME.match(p.name) and ((p / SPEC_FILE).is_file() or (p / "spec.json").is_file())
             and owns_dir(p))  # in public mode, only this session's
    return sorted(found, key=lambda p: (-p.stat().st_mtime, p.name))
