"""Background processes the app starts (games, fork batches, arena runs) and their registries.

A job is a subprocess running outside Streamlit's script thread, writing its output to a
log file; the page only polls it. :class:`BackgroundJob` holds the process, the log path,
the command and the start time; the launchers subclass it with their own fields.
:class:`Registry` is a thread-locked dict of jobs keyed by id; each caller keeps its
registry in ``st.cache_resource`` so a job survives reruns and every session sees it.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from .paths import REPO_ROOT


def spawn(cmd: list[str], log_file: str | Path, *, append: bool = False, stdout_to_log: bool = True,
          env_extra: dict[str, str] | None = None, **popen_kw: Any) -> subprocess.Popen:
    """Start ``cmd`` from the repository root with its stderr (and stdout, unless
    ``stdout_to_log`` is false: then it is discarded) written to ``log_file``.

    The process gets :func:`app.keys.child_env`: the key policy in force and only the allowed keys
    (plus ``env_extra``); keys travel in its environment, never in ``cmd``."""
    from .keys import child_env

    env = child_env(env_extra)
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with open(log_file, "a" if append else "w", encoding="utf-8") as fh:
        out = fh if stdout_to_log else subprocess.DEVNULL
        err = subprocess.STDOUT if stdout_to_log else fh
        return subprocess.Popen(cmd, cwd=str(REPO_ROOT), stdout=out, stderr=err, env=env, **popen_kw)


@dataclass(kw_only=True)
class BackgroundJob:
    cmd: list[str]
    proc: subprocess.Popen
    log_file: str
    started: float = field(default_factory=time.time)

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def stop(self, grace: float | None = 5.0) -> None:
        """Terminate this job's process (only the one this app started); kill it if it is
        still there after ``grace`` seconds (``None``: do not wait)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            if grace is None:
                return
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def tail(self, n: int = 30) -> str:
        """The last ``n`` lines of the job's log ("" when it cannot be read)."""
        try:
            with open(self.log_file, encoding="utf-8", errors="replace") as fh:
                return "".join(fh.readlines()[-n:])
        except OSError:
            return ""


J = TypeVar("J", bound=BackgroundJob)


_REGISTRIES: "weakref.WeakSet[Registry[Any]]" = weakref.WeakSet()  # every registry made in this process


def running() -> list[BackgroundJob]:
    """The jobs of every registry (games, batches, studies, arena runs, forks, experiments) whose process runs."""
    return [j for reg in list(_REGISTRIES) for j in reg.all() if j.running]


class Registry(Generic[J]):
    """Jobs keyed by id, safe to share between sessions (threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._jobs: dict[str, J] = {}
        _REGISTRIES.add(self)

    def add(self, key: str, job: J) -> None:
        with self.lock:
            self._jobs[key] = job

    def get(self, key: str) -> J | None:
        with self.lock:
            return self._jobs.get(key)

    def items(self) -> list[tuple[str, J]]:
        """(id, job) in the order they were added."""
        with self.lock:
            return list(self._jobs.items())

    def all(self) -> list[J]:
        """Every job, newest first."""
        with self.lock:
            return sorted(self._jobs.values(), key=lambda j: -j.started)
