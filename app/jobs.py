"""Background processes the app starts (games, batches, studies, arena runs, forks, experiments) and their registries.

A job is a subprocess running outside Streamlit's script thread, writing its output to a
log file; the page only polls it. :class:`BackgroundJob` holds the process, the log path,
the command, the start time and its owner; the launchers subclass it with their own fields.
:class:`Registry` is a thread-locked dict of jobs keyed by id; each caller keeps its
registry in ``st.cache_resource`` so a job survives reruns.

Every job starts through :func:`spawn`, which first asks :func:`refusal` whether the operator's quotas
(app/public_mode.py) allow it: jobs running per session and per server, games per job, branches per
Replay request, games per study, games at once, disk for runs and starts per hour. A page asks the same
function to disable its button and say why. The disk quota is also enforced while jobs run: the job
monitor (:class:`JobMonitor`, one thread while any job runs) measures the runs directory every
:data:`MONITOR_INTERVAL_S` seconds and stops every running job once it passes the quota, writing the
reason into each job's log (which the pages show) and :attr:`BackgroundJob.stopped_why`. In public mode a session sees and controls only its own
jobs (:func:`owner`: a random token kept in that browser session, stored hashed with the job and in a
study's or arena run's directory), unless the operator shows all.
"""

from __future__ import annotations

import collections
import hashlib
import os
import secrets
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import streamlit as st

from . import public_mode
from .paths import REPO_ROOT, hide_paths, runs_dir

OWNER_FILE = ".owner"  # in a study's or arena run's directory: the hashed token of the session that started it
_OWNER_KEY = "_ms_owner_token"
LOCAL_OWNER = "local"  # jobs started outside a browser session (the operator's own code)
_DISK_TTL_S = 30.0


class JobRefused(ValueError):
    """A quota refuses a job (the message says which limit and why)."""


@dataclass(frozen=True)
class Work:
    """What a job would do, for the quotas: ``units`` games (or branches, or states), ``parallel`` at once,
    bounded by the quota named ``limit`` (``games_per_job``, ``forks_per_request`` or ``study_games``)."""

    what: str  # "this batch", "this study" ... (for the message)
    units: int = 1
    parallel: int = 1
    limit: str = "games_per_job"


_NOUNS = {"games_per_job": "games", "forks_per_request": "branches", "study_games": "games"}


def owner() -> str:
    """This browser session's owner id: the hash of a random token kept in its session state (never shown), or
    :data:`LOCAL_OWNER` outside a session."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is None:
        return LOCAL_OWNER
    token = st.session_state.get(_OWNER_KEY)
    if not token:
        token = st.session_state[_OWNER_KEY] = secrets.token_urlsafe(32)
    return hashlib.sha256(token.encode()).hexdigest()[:32]


def private_view() -> bool:
    """Whether this session sees only its own jobs (public mode, unless the operator shows all)."""
    s = public_mode.settings()
    return s.public and not s.show_all_jobs


def visible(job: "BackgroundJob") -> bool:
    return not private_view() or job.owner == owner()


def claim_dir(path: str | Path) -> None:
    """Record this session as the owner of a job's directory (a study, an arena run)."""
    (Path(path) / OWNER_FILE).write_text(owner() + "\n", encoding="utf-8")


def owns_dir(path: str | Path) -> bool:
    """Whether this session may see and control the job directory ``path`` (always, outside public mode)."""
    if not private_view():
        return True
    try:
        return (Path(path) / OWNER_FILE).read_text(encoding="utf-8").strip() == owner()
    except OSError:
        return False


@st.cache_resource
def _starts() -> "collections.deque[float]":
    return collections.deque()


@st.cache_resource
def _spawned() -> "list[tuple[subprocess.Popen, str]]":
    """Every process :func:`spawn` started, with its owner: the quotas count these, whether or not a launcher has
    registered the job yet (eight sessions clicking at once all passed a count of registered jobs)."""
    return []


_SPAWN_LOCK = threading.Lock()  # admission and start are one step: no two sessions pass the quotas for one free slot


_disk: dict[str, tuple[float, int]] = {}


def _tree_bytes(root: Path) -> int:
    total, stack = 0, [root]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(Path(e.path))
                        elif e.is_file(follow_symlinks=False):
                            total += e.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return total


def runs_bytes() -> int:
    """Bytes under the runs directory (symlinks not followed), measured at most every 30 s."""
    root = runs_dir()
    key = str(root)
    now = time.monotonic()
    hit = _disk.get(key)
    if hit is None or now - hit[0] > _DISK_TTL_S:
        hit = _disk[key] = (now, _tree_bytes(root) if root.is_dir() else 0)
    return hit[1]


def parallel_cap(want: int) -> int:
    """``want`` games at once, lowered to the ``parallel`` quota (for jobs whose parallelism the page does not ask)."""
    cap = public_mode.settings().quotas.parallel
    return max(1, min(int(want), cap)) if cap else max(1, int(want))


def refusal(work: Work) -> str | None:
    """Why ``work`` may not start now (None: it may). Said on the page next to the disabled button."""
    s = public_mode.settings()
    q = s.quotas
    head = "Public mode: " if s.public else "Quota: "
    cap = getattr(q, work.limit)
    if cap is not None and work.units > cap:
        return f"{head}{work.what} would start {work.units:,} {_NOUNS.get(work.limit, 'games')}; at most {cap:,} are allowed."
    if q.parallel is not None and work.parallel > max(1, q.parallel):
        return f"{head}at most {max(1, q.parallel)} games at once (this asks {work.parallel})."
    alive = _alive()
    if q.jobs_per_server is not None and len(alive) >= q.jobs_per_server:
        return (f"{head}the server runs {len(alive)} jobs, the most it allows at once ({q.jobs_per_server}); try again when "
                "one has finished.") if q.jobs_per_server else f"{head}this deploy starts no jobs (read-only)."
    mine = [p for p, who in alive if who == owner()]
    if q.jobs_per_session is not None and len(mine) >= q.jobs_per_session:
        return (f"{head}you have {len(mine)} jobs running, the most one visitor may have at once ({q.jobs_per_session}); "
                "stop one or wait for it to finish.") if q.jobs_per_session else f"{head}this deploy starts no jobs (read-only)."
    if q.starts_per_hour is not None:
        starts = _starts()
        while starts and starts[0] < time.time() - 3600:
            starts.popleft()
        if len(starts) >= q.starts_per_hour:
            wait = max(1, int((starts[0] + 3600 - time.time()) // 60) + 1)
            return f"{head}the server started {len(starts)} jobs in the last hour, its limit; try again in {wait} min."
    if q.runs_disk_mb is not None:
        used = runs_bytes() / 1e6
        if used >= q.runs_disk_mb:
            return f"{head}runs on this server take {used:,.0f} MB of the {q.runs_disk_mb:,} MB allowed; no new job starts."
    return None


def _alive() -> list[tuple[Any, str]]:
    """(process, owner) of every running job of the server: the registered jobs and what :func:`spawn` started."""
    out = {id(j.proc): (j.proc, j.owner) for j in _running_jobs()}
    spawned = _spawned()
    spawned[:] = [(p, who) for p, who in spawned if p.poll() is None]
    for p, who in spawned:
        out.setdefault(id(p), (p, who))
    return list(out.values())


def admit(work: Work) -> None:
    """:class:`JobRefused` when :func:`refusal` refuses ``work`` (launchers call it before writing anything)."""
    why = refusal(work)
    if why:
        raise JobRefused(why)


MONITOR_INTERVAL_S = 5.0  # how often the job monitor measures the runs directory while jobs run


class JobMonitor:
    """Stops running jobs once the runs directory passes the ``runs_disk_mb`` quota (a start-time check alone let a
    running job grow past it). A daemon thread, started by :func:`spawn` and ending when no watched job runs; it
    watches the processes themselves, whoever started them, with the quota in force at the latest start."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.procs: dict[int, tuple[subprocess.Popen, str]] = {}  # pid -> (process, its log file)
        self.limit_mb: int | None = None
        self.thread: threading.Thread | None = None

    def watch(self, proc: subprocess.Popen, log_file: str | Path, limit_mb: int | None) -> None:
        with self.lock:
            self.procs[proc.pid] = (proc, str(log_file))
            self.limit_mb = limit_mb
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="mafiascope-job-monitor", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(MONITOR_INTERVAL_S)
            with self.lock:
                alive = {pid: pl for pid, pl in self.procs.items() if pl[0].poll() is None}
                self.procs = alive
                limit = self.limit_mb
                if not alive:
                    self.thread = None
                    return
            if limit is not None:
                self.check(limit, list(alive.values()))

    def check(self, limit_mb: int, procs: list[tuple[subprocess.Popen, str]]) -> None:
        """Measure the runs directory now; over ``limit_mb``, stop ``procs`` and say why in their logs."""
        root = runs_dir()
        used = _tree_bytes(root) if root.is_dir() else 0
        _disk[str(root)] = (time.monotonic(), used)  # what refusal() says next
        if used < limit_mb * 1e6:
            return
        why = (f"stopped by the app: runs on this server take {used / 1e6:,.1f} MB, over the {limit_mb:,} MB allowed "
               "(quota runs_disk_mb); no new job starts until the operator frees space or raises the quota.")
        for proc, log_file in procs:
            if proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            try:  # once it has ended: its own last writes cannot overwrite the line
                with open(log_file, "a", encoding="utf-8") as fh:
                    fh.write(f"\nmafiascope app: {why}\n")
            except OSError:
                pass
            proc.stopped_why = why  # type: ignore[attr-defined]  # read by BackgroundJob.stopped_why, after the log


MONITOR = JobMonitor()


def spawn(cmd: list[str], log_file: str | Path, *, work: Work, append: bool = False, stdout_to_log: bool = True,
          env_extra: dict[str, str] | None = None, **popen_kw: Any) -> subprocess.Popen:
    """Start ``cmd`` from the repository root with its stderr (and stdout, unless
    ``stdout_to_log`` is false: then it is discarded) written to ``log_file``, if the quotas allow
    ``work`` (else :class:`JobRefused`, nothing started).

    The process gets :func:`app.keys.child_env`: an allow-listed environment, the key policy in force and
    only the allowed keys (plus ``env_extra``); keys travel in its environment, never in ``cmd``."""
    from .keys import child_env

    env = child_env(env_extra)
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with _SPAWN_LOCK:
        admit(work)
        with open(log_file, "a" if append else "w", encoding="utf-8") as fh:
            out = fh if stdout_to_log else subprocess.DEVNULL
            err = subprocess.STDOUT if stdout_to_log else fh
            proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), stdout=out, stderr=err, env=env, **popen_kw)
        _spawned().append((proc, owner()))
        _starts().append(time.time())
    MONITOR.watch(proc, log_file, public_mode.settings().quotas.runs_disk_mb)
    return proc


@dataclass(kw_only=True)
class BackgroundJob:
    cmd: list[str]
    proc: subprocess.Popen
    log_file: str
    started: float = field(default_factory=time.time)
    owner: str = field(default_factory=owner)  # the session that started it (see :func:`owner`)

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    @property
    def stopped_why(self) -> str | None:
        """Why the job monitor stopped this job (the runs disk quota), or None."""
        return getattr(self.proc, "stopped_why", None)

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
        """The last ``n`` lines of the job's log ("" when it cannot be read); in public mode with the server's
        directories named as the app names them (no absolute server path)."""
        try:
            with open(self.log_file, encoding="utf-8", errors="replace") as fh:
                text = "".join(fh.readlines()[-n:])
        except OSError:
            return ""
        return hide_paths(text) if public_mode.settings().public else text


J = TypeVar("J", bound=BackgroundJob)


_REGISTRIES: "weakref.WeakSet[Registry[Any]]" = weakref.WeakSet()  # every registry made in this process


def running() -> list[BackgroundJob]:
    """The jobs of every registry (games, batches, studies, arena runs, forks, experiments) whose process runs and
    that this session may see."""
    return [j for j in _running_jobs() if visible(j)]


def _running_jobs() -> list[BackgroundJob]:
    """Every running job of the server, whoever started it (for the quotas)."""
    return [j for reg in list(_REGISTRIES) for j in reg.every() if j.running]


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
        """The job ``key`` if this session may see it (see :func:`visible`)."""
        with self.lock:
            job = self._jobs.get(key)
        return job if job is not None and visible(job) else None

    def items(self) -> list[tuple[str, J]]:
        """(id, job) this session may see, in the order they were added."""
        with self.lock:
            pairs = list(self._jobs.items())
        return [(k, j) for k, j in pairs if visible(j)]

    def all(self) -> list[J]:
        """The jobs this session may see, newest first."""
        return sorted((j for _, j in self.items()), key=lambda j: -j.started)

    def every(self) -> list[J]:
        """Every job, whoever started it (the quotas count them; never shown as such)."""
        with self.lock:
            return list(self._jobs.values())
