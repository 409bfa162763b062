"""Human seats: moves come from the app (file protocol) or from a terminal (stdin).

File protocol (the Streamlit page implements the other side with :func:`read_pending`
and :func:`write_reply`)::

    <logs_dir>/<game_id>/human/<seat>.pending.json   written by the engine side
        {"request_id", "seat", "purpose", "kind", "instruction", "messages", "format", "targets", "created"}
    <logs_dir>/<game_id>/human/<seat>.reply.json     written by the app
        {"request_id", "text"}

Both files are written atomically (temporary file + ``os.replace``). The backend polls
every 0.25 s for a reply whose ``request_id`` matches; a reply for another request is
ignored (left for its owner or removed as stale when a new request starts). On a match
both files are deleted and the text returned. ``instruction`` is the text of the last
user message, ``format`` the closing line expected (e.g. ``"VOTE: <name>"``) or null, ``targets`` the
names the engine accepts as the move's target (a Mafia's kill never lists its partners) or null for free speech.

Human seats are **not probed**: a ``kind='probe'`` request returns at once with
``ok=False, error="human seat: not probed"`` (the probe engine records a skipped probe).
With ``timeout_s`` set, an unanswered move returns ``ok=False`` and the engine applies
its logged fallback.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from .base import Completion, CompletionRequest

POLL_S = 0.25
NOT_PROBED = "human seat: not probed"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_FORMAT = re.compile(r"(?:a line|строкой)\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_PROTOCOL_LINE = re.compile(r"([A-ZА-ЯЁ]{3,}:\s*(?:[^\s<]+\s+)?<[^>\n]+>)")


def _safe(part: str) -> str:
    """A file-name-safe form of a game id or seat name (no separators, no leading dot)."""
    return _SAFE.sub("_", str(part)).lstrip(".") or "_"


def human_dir(logs_dir: str | os.PathLike[str], game_id: str) -> Path:
    return Path(logs_dir) / _safe(game_id or "nogame") / "human"


def pending_path(logs_dir: str | os.PathLike[str], game_id: str, seat: str) -> Path:
    return human_dir(logs_dir, game_id) / f"{_safe(seat)}.pending.json"


def reply_path(logs_dir: str | os.PathLike[str], game_id: str, seat: str) -> Path:
    return human_dir(logs_dir, game_id) / f"{_safe(seat)}.reply.json"


def write_json_atomic(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(obj, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
        return obj if isinstance(obj, dict) else None
    except (OSError, ValueError):
        return None


def read_pending(logs_dir: str | os.PathLike[str], game_id: str, seat: str) -> dict[str, Any] | None:
    """The open request for a human seat, or None (the app's side of the protocol)."""
    return _read_json(pending_path(logs_dir, game_id, seat))


def list_pending(logs_dir: str | os.PathLike[str], game_id: str) -> list[dict[str, Any]]:
    """Every open request of a game (one per waiting human seat)."""
    d = human_dir(logs_dir, game_id)
    out = []
    for p in sorted(d.glob("*.pending.json")) if d.is_dir() else []:
        obj = _read_json(p)
        if obj is not None:
            out.append(obj)
    return out


def write_reply(logs_dir: str | os.PathLike[str], game_id: str, seat: str, request_id: str, text: str) -> Path:
    """Answer the open request ``request_id`` of a human seat (the app's side)."""
    from ..logs.paths import inside

    path = inside(logs_dir, reply_path(logs_dir, game_id, seat))  # the game id comes from a URL: no symlink is followed
    write_json_atomic(path, {"request_id": str(request_id), "text": str(text)})
    return path


def expected_format(instruction: str) -> str | None:
    """The closing line an instruction asks for (``"VOTE: <name>"``), or None for free speech."""
    m = None
    for m in _FORMAT.finditer(instruction or ""):  # noqa: B007 - keeps the last match
        pass
    if m is not None:
        return m.group(1).strip()
    found = _PROTOCOL_LINE.findall(instruction or "")
    return found[-1].strip() if found else None


def _instruction(req: CompletionRequest) -> str:
    for m in reversed(req.messages):
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return ""


class HumanBackend:
    """A seat played by a person through the app (file protocol above)."""

    type = "human"

    def __init__(
        self, name: str, logs_dir: str | os.PathLike[str], timeout_s: float | None = None, model_label: str = "human"
    ) -> None:
        self.name = name
        self.logs_dir = Path(logs_dir)
        self.timeout_s = timeout_s
        self.model_label = model_label

    async def complete(self, request: CompletionRequest) -> Completion:
        if request.kind == "probe":
            return Completion(ok=False, error=NOT_PROBED, attempts=1, meta={"backend": self.name, "skipped": True})
        t0 = time.monotonic()
        seat = request.seat or "seat"
        pend = pending_path(self.logs_dir, request.game_id, seat)
        rep = reply_path(self.logs_dir, request.game_id, seat)
        request_id = uuid.uuid4().hex
        instruction = _instruction(request)
        stale = _read_json(rep)
        if stale is not None:
            _unlink(rep)  # an answer to an earlier request nobody collected
        write_json_atomic(
            pend,
            {
                "request_id": request_id,
                "seat": seat,
                "purpose": request.purpose,
                "kind": request.kind,
                "instruction": instruction,
                "messages": request.messages,
                "format": expected_format(instruction),
                "targets": request.targets,
                "created": time.time(),
            },
        )
        try:
            while True:
                reply = _read_json(rep)
                if reply is not None and str(reply.get("request_id")) == request_id:
                    _unlink(rep)
                    _unlink(pend)
                    text = str(reply.get("text") or "")
                    return Completion(
                        text=text,
                        ok=True,
                        attempts=1,
                        latency_ms=int((time.monotonic() - t0) * 1000),
                        prompt_tokens=0,
                        completion_tokens=0,
                        tokens_estimated=True,
                        served_model="human",
                        meta={"backend": self.name},
                    )
                if self.timeout_s is not None and time.monotonic() - t0 >= self.timeout_s:
                    _unlink(pend)
                    return Completion(
                        ok=False,
                        error=f"backend {self.name!r}: human seat {seat!r} did not answer within {self.timeout_s:g}s",
                        attempts=1,
                        latency_ms=int((time.monotonic() - t0) * 1000),
                        meta={"backend": self.name, "faults": [{"attempt": 1, "fault": "timeout"}]},
                    )
                await asyncio.sleep(POLL_S)
        except asyncio.CancelledError:
            _unlink(pend)
            raise

    def describe(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "model": self.model_label,
            "mode": "file",
            "timeout_s": self.timeout_s,
            "probed": False,
        }

    async def aclose(self) -> None:
        return None


class HumanStdinBackend:
    """A human seat in a terminal: prints the instruction, reads lines until an empty line.

    Lines are read on a daemon thread, straight from the file descriptor (no buffered reader whose lock
    the thread would hold), so Ctrl-C during a move ends the command at once instead of waiting for the
    terminal's next line. One read is in flight at a time: after a timeout, the next move takes the block
    that read returns rather than a second thread competing for the same lines."""

    type = "human"

    def __init__(self, name: str, timeout_s: float | None = None, *, stdin: Any = None, stdout: Any = None,
                 model_label: str = "human") -> None:  # fmt: skip
        self.name = name
        self.timeout_s = timeout_s
        self.model_label = model_label
        self._in = stdin
        self._out = stdout
        self._buf = b""
        self._pending: concurrent.futures.Future[str] | None = None

    def _fd(self) -> int | None:
        try:
            return int((self._in or sys.stdin).fileno())
        except (AttributeError, OSError, ValueError):  # a StringIO (tests, scripts): read it as a stream
            return None

    def _next_line(self, fd: int | None) -> str | None:
        """The next line without its newline; None at the end of input."""
        if fd is None:
            line = (self._in or sys.stdin).readline()
            return line.rstrip("\n") if line else None
        while b"\n" not in self._buf:
            chunk = os.read(fd, 65536)
            if not chunk:
                line, self._buf = self._buf, b""
                return line.decode("utf-8", "replace") if line else None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")

    def _read_block(self) -> str:
        fd, lines = self._fd(), []
        while (line := self._next_line(fd)) is not None and line.strip():
            lines.append(line)
        return "\n".join(lines)

    def _read_into(self, fut: concurrent.futures.Future[str]) -> None:
        try:
            fut.set_result(self._read_block())
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting move
            fut.set_exception(exc)

    async def complete(self, request: CompletionRequest) -> Completion:
        if request.kind == "probe":
            return Completion(ok=False, error=NOT_PROBED, attempts=1, meta={"backend": self.name, "skipped": True})
        out = self._out or sys.stdout
        instruction = _instruction(request)
        fmt = expected_format(instruction)
        print(f"\n=== {request.seat or self.name} ({request.purpose}) ===\n{instruction}", file=out)
        if fmt:
            print(f"(end with: {fmt})", file=out)
        if request.targets:
            print(f"(targets: {', '.join(request.targets)})", file=out)
        print("(finish with an empty line)", file=out, flush=True)
        t0 = time.monotonic()
        if self._pending is None:  # else a read a timed-out or interrupted move started: its block is this move's
            self._pending = concurrent.futures.Future()
            threading.Thread(target=self._read_into, args=(self._pending,), name=f"human-stdin-{self.name}", daemon=True).start()
        pending = self._pending
        try:
            async with asyncio.timeout(self.timeout_s):
                text = await asyncio.shield(asyncio.wrap_future(pending))
        except TimeoutError:
            return Completion(ok=False, error=f"backend {self.name!r}: no answer on stdin within {self.timeout_s:g}s",
                              attempts=1, meta={"backend": self.name})  # fmt: skip
        except Exception:  # the read itself failed: the next move reads anew
            self._pending = None
            raise
        self._pending = None  # taken: the next move reads anew
        return Completion(text=text, ok=True, attempts=1, latency_ms=int((time.monotonic() - t0) * 1000),
                          prompt_tokens=0, completion_tokens=0, tokens_estimated=True, served_model="human",
                          meta={"backend": self.name})  # fmt: skip

    def describe(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "model": self.model_label,
            "mode": "stdin",
            "timeout_s": self.timeout_s,
            "probed": False,
        }

    async def aclose(self) -> None:
        return None


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
