"""The study ledger: ``<study dir>/ledger.jsonl``, an append-only log of state transitions.

    {"event": "study", "spec_hash": ..., "name": ..., "games": N, "provenance": {...}}   first line
    {"event": "row", "game_id": ..., "arm": ..., "index": i, "seed": s, "state": "pending"}   one per scheduled game
    {"event": "state", "game_id": ..., "state": "running", "runner": R, "expected": {...}}  a claim
    {"event": "state", "game_id": ..., "state": "finished" | "invalid" | "failed", "runner": R, ...}
    {"event": "stop", "runner": R, "reason": "budget: ..."}                                 a runner stopped early
    {"event": "extend", "spec_hash": ..., "games": N, "arms": {...}, "added": k}              the study grew (then k rows)

A game's row is its first record merged with every later one (the last state wins). Every
append is one ``write`` of one line under an exclusive ``flock`` on ``ledger.lock``, and every
claim reads the ledger and appends its ``running`` record under that same lock, so two
runners never take the same game. Each runner holds an ``flock`` on
``runners/<runner id>.lock`` for as long as it lives; the kernel drops it when the process
dies (also on ``kill -9``), so a ``running`` row whose runner lock is free is stale and is
claimed again: the game is replayed from scratch (its partial directory is removed first).

A study may grow: when the header carries ``arms`` (what decides each arm's games), a spec whose
hash differs is accepted if every arm of the ledger is in it unchanged and every scheduled game
is still scheduled; the new games are appended as ``pending`` rows after an ``extend`` record.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import socket
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..logs.io import TornLineWarning, loads_line
from ..logs.schema import run_record, validate_game_id

LEDGER_FILE = "ledger.jsonl"
LOCK_FILE = "ledger.lock"
RUNNERS_DIR = "runners"
STATES = ("pending", "running", "finished", "failed", "invalid", "cut")
DONE = ("finished", "invalid")
SETTLED = ("finished", "invalid", "failed", "cut")  # an attempt's end (``cut``: stopped by the budget's hard cap)
BASE_FIELDS = ("game_id", "arm", "index", "seed", "rules", "seats")


class Wait(str):
    """An ``admit`` verdict: not now, but maybe once a game in flight settles (its budget held is freed)."""


WAIT = Wait("wait for a game in flight to settle")


class LedgerError(ValueError):
    """The study directory holds another study, or the ledger cannot be used."""


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        rec = loads_line(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _amount(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def _counts(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and _count(x) for k, x in v.items())


# The fields a row is read by (status, estimates, claims): a value of another shape makes the record bad.
_FIELD_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "arm": (lambda v: isinstance(v, str), "a string"),
    "index": (_count, "a whole number >= 0"),
    "seed": (lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
    "runner": (lambda v: isinstance(v, str), "a string"),
    "attempts": (_count, "a whole number >= 0"),
    "money": (_amount, "a number >= 0"),
    "faults": (lambda v: v is None or _count(v), "a whole number >= 0"),
    "rounds": (lambda v: v is None or _count(v), "a whole number >= 0"),
    "usage": (_counts, "a mapping of counts"),
    "by_backend": (
        lambda v: isinstance(v, dict) and all(isinstance(k, str) and _counts(x) for k, x in v.items()),
        "a mapping of backends to counts",
    ),
    "ts": (_amount, "a time stamp"),
    "reason": (lambda v: v is None or isinstance(v, str), "a string"),
    "error": (lambda v: v is None or isinstance(v, str), "a string"),
    "winner": (lambda v: v is None or isinstance(v, str), "a string"),
}


def record_problem(rec: dict[str, Any]) -> str | None:
    """Why a ledger record cannot be used (None: it can). A ``row`` or ``state`` names a valid game id;
    a ``state`` one of :data:`STATES`; every known field has the shape its readers expect."""
    event = rec.get("event")
    if event in ("row", "state"):
        try:
            validate_game_id(rec.get("game_id"))  # type: ignore[arg-type]
        except ValueError:
            return "game_id: not a valid game id"
        if event == "row" and not isinstance(rec.get("arm"), str):
            return "arm: expected a string"
        state = rec.get("state", "pending")
        if not isinstance(state, str) or state not in STATES:
            return f"state: expected one of {', '.join(STATES)}"
    for name, (ok, what) in _FIELD_CHECKS.items():
        if name in rec and not ok(rec[name]):
            return f"{name}: expected {what}"
    return None


def _cost(rec: dict[str, Any], key: str) -> tuple[float, float]:
    """(money, calls) of a record's ``allowance`` / ``expected`` / ``metered`` / usage."""
    if key == "settled":
        metered, usage = _mapping(rec.get("metered")), _mapping(rec.get("usage"))
        return (
            max(_num(rec.get("money")), _num(metered.get("money"))),
            max(_num(usage.get("calls")), _num(metered.get("calls"))),
        )
    got = _mapping(rec.get(key))
    return _num(got.get("money")), _num(got.get("calls"))


def _mapping(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _num(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and x == x else 0.0


class Spent:
    """Money and calls every attempt so far has committed: each settled attempt its own spend (the larger of
    its usage records and its metered calls), and an attempt claimed again without a settle (its runner
    died) its whole allowance, since what it spent is not known."""

    def __init__(self) -> None:
        self.money = 0.0
        self.calls = 0.0

    def add(self, cost: tuple[float, float]) -> None:
        self.money += cost[0]
        self.calls += cost[1]


def held(row: dict[str, Any]) -> tuple[float, float]:
    """What a running attempt holds of the budget: its allowance (grown by top-ups), else its expected cost."""
    return _cost(row, "allowance") if isinstance(row.get("allowance"), dict) else _cost(row, "expected")


def _fold(
    rows: dict[str, dict[str, Any]], scheduled: dict[str, dict[str, Any]], r: dict[str, Any], spent: Spent | None = None
) -> None:
    """Fold one record into the rows: a ``row`` starts a game, a ``state`` updates it (a ``running``
    claim starts a new attempt from the scheduled fields, a front end's extra ones too), a ``reserve``
    raises a running attempt's allowance."""
    gid = r.get("game_id")
    if not isinstance(gid, str):  # not a game's record (a header, stop or extend line)
        return
    if r.get("event") == "row" and gid not in rows:
        rows[gid] = {k: v for k, v in r.items() if k not in ("event", "ts")}
        scheduled[gid] = {k: v for k, v in rows[gid].items() if k != "state"}
    elif r.get("event") == "state" and gid in rows:
        row = rows[gid]
        if r.get("state") == "running":
            if spent is not None and row.get("state") == "running":  # an attempt abandoned by a dead runner
                spent.add(held(row))
            attempts = int(row.get("attempts", 0)) + 1
            row.clear()
            row.update(scheduled[gid], attempts=attempts, started=r.get("ts"))
        elif spent is not None and r.get("state") in SETTLED and row.get("state") == "running":
            spent.add(_cost(r, "settled"))
        row.update({k: v for k, v in r.items() if k not in ("event", "ts")}, updated=r.get("ts"))
    elif r.get("event") == "reserve" and gid in rows and rows[gid].get("state") == "running":
        rows[gid]["allowance"] = r.get("allowance")


class StudyLedger:
    def __init__(self, study_dir: str | Path):
        self.dir = Path(study_dir)
        self.path = self.dir / LEDGER_FILE
        self._reset()

    # ------------------------------------------------------------------ files
    def exists(self) -> bool:
        return self.path.is_file()

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _reset(self) -> None:
        self._recs: list[dict[str, Any]] = []  # whole records read so far
        self._offset = 0  # bytes of the file behind them (always just after a newline)
        self._lines = 0  # lines behind them
        self.problems: list[str] = []  # "ledger.jsonl:LINE: skipping ...", one per bad record, in file order
        self._ident: tuple[int, int] | None = None  # (device, inode) they were read from
        self._rows: dict[str, dict[str, Any]] = {}
        self._scheduled: dict[str, dict[str, Any]] = {}
        self._rows_n = 0  # records folded into _rows
        self._spent = Spent()  # what the attempts folded so far committed

    def records(self) -> list[dict[str, Any]]:
        """Every whole record (a torn last line from a killed writer is skipped).

        Append-only, so each call reads only the bytes added since the last one (a claim must not
        cost the whole ledger's parse: O(n) per game would make a long batch quadratic)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._reset()
            return []
        if (st.st_dev, st.st_ino) != self._ident or st.st_size < self._offset:  # replaced or truncated: read afresh
            self._reset()
            self._ident = (st.st_dev, st.st_ino)
        with self.path.open("rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # only whole lines are kept; a partial tail is read again next time
        for line in data[:end].split(b"\n")[:-1]:
            self._lines += 1
            rec = _parse(line)
            why = record_problem(rec) if rec is not None else ("not a JSON object" if line.strip() else None)
            if why is None and rec is not None:
                self._recs.append(rec)
            elif why is not None:  # a tampered or damaged line: named and left out, never a crash
                self.problems.append(f"{self.path}:{self._lines}: skipping a bad ledger record ({why})")
                warnings.warn(self.problems[-1], TornLineWarning, stacklevel=2)
        self._offset += end
        tail = _parse(data[end:]) if data[end:].strip() else None  # a last record whose newline is missing
        tail = tail if tail is not None and record_problem(tail) is None else None
        return self._recs + [tail] if tail is not None else list(self._recs)

    def _append(self, recs: list[dict[str, Any]]) -> None:
        """Append under the lock (the caller holds it): one ``os.write`` of whole lines."""
        now = time.time()
        for r in recs:  # checked against the schema before anything is written
            run_record("study_ledger", {**r, "ts": now})
        data = "".join(json.dumps({**r, "ts": now}, ensure_ascii=False, default=str) + "\n" for r in recs).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size:  # a torn last line (writer killed mid-line) must not swallow ours
                with self.path.open("rb") as fh:
                    fh.seek(size - 1)
                    if fh.read(1) != b"\n":
                        data = b"\n" + data
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def append(self, *recs: dict[str, Any]) -> None:
        with self.locked():
            self._append(list(recs))

    # ------------------------------------------------------------------ reading
    def header(self, recs: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
        """The ``study`` record, updated by every later ``extend`` (its spec hash, games and arms)."""
        out: dict[str, Any] | None = None
        for r in self.records() if recs is None else recs:
            if r.get("event") == "study" and out is None:
                out = dict(r)
            elif r.get("event") == "extend" and out is not None:
                out.update({k: r[k] for k in ("spec_hash", "games", "arms") if k in r})
                out["extended"] = out.get("extended", 0) + 1
        return out

    def rows(self, recs: list[dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
        """game id -> its row (schedule order), every field the latest written."""
        if recs is not None:
            rows: dict[str, dict[str, Any]] = {}
            scheduled: dict[str, dict[str, Any]] = {}
            for r in recs:
                _fold(rows, scheduled, r)
            return rows
        allrecs = self._view_recs()
        out = {g: dict(r) for g, r in self._rows.items()}
        if len(allrecs) > len(self._recs):  # a newline-less tail record is folded into a copy only
            sched = {g: dict(v) for g, v in self._scheduled.items()}
            _fold(out, sched, allrecs[-1])
        return out

    def _view_recs(self) -> list[dict[str, Any]]:
        allrecs = self.records()
        whole = len(self._recs)
        for r in allrecs[self._rows_n : whole]:
            _fold(self._rows, self._scheduled, r, self._spent)
        self._rows_n = whole
        return allrecs

    def _view(self) -> dict[str, dict[str, Any]]:
        """The cached rows themselves (callers must not change them): what a claim ranks."""
        allrecs = self._view_recs()
        if len(allrecs) > len(self._recs):
            return self.rows()
        return self._rows

    def spent(self) -> tuple[float, float]:
        """(money, calls) committed by every attempt so far (:class:`Spent`), running attempts excepted."""
        self._view_recs()
        return self._spent.money, self._spent.calls

    def counts(self, rows: dict[str, dict[str, Any]] | None = None) -> dict[str, int]:
        rows = self.rows() if rows is None else rows
        out = {s: 0 for s in STATES}
        for row in rows.values():
            out[row.get("state", "pending")] = out.get(row.get("state", "pending"), 0) + 1
        return out

    # ------------------------------------------------------------------ writing
    def init(self, header: dict[str, Any], games: list[dict[str, Any]]) -> bool:
        """Write the header and a pending row per game, unless the ledger exists: then its spec hash must
        match, or the study must grow (module docstring; ``self.added`` lists the games scheduled now).
        Returns True when it was created now."""
        self.added: list[str] = []
        with self.locked():
            recs = self.records()
            old = self.header(recs)
            if old is not None:
                if old.get("spec_hash") != header.get("spec_hash"):
                    self._grow(old, header, games, recs)
                return False
            self._append([{"event": "study", **header}] + [{"event": "row", **g, "state": "pending"} for g in games])
            return True

    def _grow(self, old: dict[str, Any], header: dict[str, Any], games: list[dict[str, Any]], recs: list[dict[str, Any]]) -> None:
        if not isinstance(old.get("arms"), dict) or not isinstance(header.get("arms"), dict):
            raise LedgerError(f"{self.dir}: this study directory holds a different study (spec hash "
                              f"{str(old.get('spec_hash'))[:12]}, this spec {str(header.get('spec_hash'))[:12]}); "
                              "use the same spec to resume, or another directory")  # fmt: skip
        problem = growth_problem(old["arms"], header["arms"], [r for r in recs if r.get("event") == "row"], games)
        if problem:
            raise LedgerError(f"{self.dir}: {problem}")
        have: set[Any] = {r.get("game_id") for r in recs if r.get("event") == "row"}
        new = [g for g in games if g["game_id"] not in have]
        extend: dict[str, Any] = {"event": "extend", **{k: header[k] for k in ("spec_hash", "games", "arms") if k in header}}
        self._append([{**extend, "added": len(new)}] + [{"event": "row", **g, "state": "pending"} for g in new])
        self.added = [g["game_id"] for g in new]

    def claim(self, runner: Runner, admit: Callable[[dict[str, Any], dict[str, dict[str, Any]]], str | dict[str, Any] | None] | None = None,
              ) -> tuple[dict[str, Any] | None, str | None]:  # fmt: skip
        """Take the next game (pending first, then running under a dead runner, then failed by another
        runner) and mark it running. ``admit(row, rows)`` may refuse it with a reason (the budget):
        then ``(None, reason)``, or answer :data:`WAIT` (``(None, WAIT)``: ask again after a settle).
        ``(None, None)``: nothing left to take."""
        with self.locked():
            rows = self._view()  # read-only here: no copy of every row per claim
            alive: dict[str, bool] = {}

            def takeable(row: dict[str, Any]) -> int | None:
                st = row.get("state", "pending")
                if st == "pending":
                    return 0
                if st == "running":
                    rid = str(row.get("runner"))
                    if rid not in alive:
                        alive[rid] = runner_alive(self.dir, rid)
                    return None if alive[rid] else 1
                if st in ("failed", "cut") and row.get("runner") != runner.id:
                    return 2
                return None

            ranked = [(k, i, row) for i, row in enumerate(rows.values()) if (k := takeable(row)) is not None]
            if not ranked:
                return None, None
            _, _, row = min(ranked, key=lambda t: (t[0], t[1]))
            extra: dict[str, Any] = {}
            if admit is not None:
                verdict = admit(row, rows)
                if isinstance(verdict, str):
                    return None, verdict
                if isinstance(verdict, dict):
                    extra = verdict
            self._append([{"event": "state", "game_id": row["game_id"], "state": "running", "runner": runner.id, **extra}])
            return {**row, "state": "running", "runner": runner.id, **extra}, None

    def reserve(self, game_id: str, runner: Runner, grant: Callable[[dict[str, Any], dict[str, dict[str, Any]]], dict[str, Any] | None],
                ) -> dict[str, Any] | None:  # fmt: skip
        """Raise a running game's allowance under the lock: ``grant(row, rows)`` gives its new allowance (or
        None: refused), which a ``reserve`` record keeps. Returns the new allowance."""
        with self.locked():
            rows = self._view()
            row = rows.get(game_id)
            if row is None or row.get("state") != "running" or row.get("runner") != runner.id:
                return None
            new = grant(row, rows)
            if new is not None:
                self._append([{"event": "reserve", "game_id": game_id, "runner": runner.id, "allowance": new}])
            return new

    def settle(self, game_id: str, runner: Runner, state: str, **fields: Any) -> None:
        if state not in STATES:
            raise ValueError(f"unknown ledger state {state!r}")
        self.append({"event": "state", "game_id": game_id, "state": state, "runner": runner.id, **fields})


# ---------------------------------------------------------------------- growth


def growth_problem(old_arms: dict[str, Any], new_arms: dict[str, Any], old_rows: list[dict[str, Any]],
                   games: list[dict[str, Any]]) -> str | None:  # fmt: skip
    """Why a ledger of ``old_arms`` cannot grow into ``new_arms`` / ``games`` (None: it can): an arm of the
    ledger left out or changed (named with its first differing field), or a scheduled game dropped."""
    for arm, fp in old_arms.items():
        if arm not in new_arms:
            return (f"arms: {arm!r} has games in this study directory but is not in the spec; a study only grows "
                    "(keep the arm, or use another directory)")  # fmt: skip
        diff = first_difference(fp, new_arms[arm])
        if diff is not None:
            path, was, now = diff
            return (f"arm {arm!r}: {path} changed ({_show(was)} in this study directory, {_show(now)} in the spec); "
                    "a changed arm would play different games: give it a new arm name, or use another directory")  # fmt: skip
    wanted = {g["game_id"] for g in games}
    dropped: dict[str, list[str]] = {}
    for r in old_rows:
        if r.get("game_id") not in wanted:
            dropped.setdefault(str(r.get("arm")), []).append(str(r.get("game_id")))
    for arm, ids in dropped.items():
        kept = sum(1 for g in games if g.get("arm") == arm)
        return (f"arm {arm!r}: {kept} games in the spec but {kept + len(ids)} already scheduled in this study directory; "
                "a study only grows (raise games_per_arm or the arm's games:)")  # fmt: skip
    return None


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first (dotted path, a's value, b's value) where two JSON-like values differ; lists are compared whole."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            sub = first_difference(a.get(k), b.get(k), f"{path}.{k}" if path else str(k))
            if sub is not None:
                return sub
        return None
    return None if a == b else (path or "(value)", a, b)


def _show(v: Any) -> str:
    text = "absent" if v is None else json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


# ---------------------------------------------------------------------- runners


class Runner:
    """A live runner: holds ``runners/<id>.lock`` (flock) until :meth:`close` or process death."""

    def __init__(self, study_dir: str | Path):
        self.id = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.dir = Path(study_dir) / RUNNERS_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / f"{self.id}.lock"
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def runner_alive(study_dir: str | Path, runner_id: str) -> bool:
    """Whether the runner ``runner_id`` still holds its lock (a missing lock file: it is gone)."""
    path = Path(study_dir) / RUNNERS_DIR / f"{runner_id}.lock"
    if "/" in runner_id or not path.is_file():
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the probe lock we may have taken
    with contextlib.suppress(OSError):
        path.unlink()  # a dead runner's leftover
    return False
