"""Reading and writing JSONL logs.

Writers append one record at a time and flush, so a crash loses at most the record
being written. Readers tolerate exactly that: a torn *last* line is skipped with a
warning naming the file and line; a corrupt line in the middle is an error unless the
caller asks to skip it.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..redaction import needs_scrub, scrub

try:  # optional speed-up (requirements.txt): ~3x faster on the common, clean file
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None  # type: ignore[assignment]

GAME_FILE = "game.jsonl"
PROBE_FILE = "introspection.jsonl"
STATE_FILE = "state.jsonl"


class LogFormatError(ValueError):
    """A JSONL file has a corrupt line that is not the (torn) last line."""


class TornLineWarning(UserWarning):
    pass


def _default(o: Any) -> Any:
    if isinstance(o, BaseModel):
        return o.model_dump(mode="json", exclude_none=False)
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def dumps(record: Any) -> str:
    """One compact JSON line, secrets scrubbed (mafiascope.redaction); NaN/inf are refused (they are not JSON)."""
    if isinstance(record, BaseModel):
        record = record.model_dump(mode="json")
    line = json.dumps(record, ensure_ascii=False, default=_default, allow_nan=False, separators=(", ", ": "))
    if needs_scrub(line):  # rare: serialize again from the scrubbed record
        line = json.dumps(scrub(record), ensure_ascii=False, default=_default, allow_nan=False, separators=(", ", ": "))
    return line


class JsonlWriter:
    """Append-only JSONL writer that flushes after every record."""

    def __init__(self, path: str | Path, *, fsync: bool = False, exclusive: bool = False):
        """``exclusive``: create the file (O_EXCL), FileExistsError if it is there already. Either way
        the file is opened for appending, so other writers of the same game (a fork writing the
        inherited records after the setup) never overwrite each other."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if exclusive:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o666)
            self._fh = os.fdopen(fd, "a", encoding="utf-8")
        else:
            self._fh = open(self.path, "a", encoding="utf-8")
        self._fsync = fsync

    def write(self, record: Any) -> None:
        self._fh.write(dumps(record) + "\n")
        self._fh.flush()
        if self._fsync:
            os.fsync(self._fh.fileno())

    def write_many(self, records: list[Any]) -> None:
        """Several records, one flush (a record and the table lines it needs)."""
        self._fh.write("".join(dumps(r) + "\n" for r in records))
        self._fh.flush()
        if self._fsync:
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def trim_torn_tail(path: str | Path) -> int:
    """Cut a torn last line (a writer killed mid-record: no newline at the end) off a JSONL file before
    appending to it, so the next record does not merge with it. Only for a file no live writer holds
    (a game being finished after a crash). Returns the bytes removed."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if not size:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return 0
        back = min(size, 1 << 20)
        while True:
            fh.seek(size - back)
            chunk = fh.read(back)
            cut = chunk.rfind(b"\n")
            if cut >= 0 or back == size:
                keep = size - back + cut + 1 if cut >= 0 else 0
                break
            back = min(size, back * 2)
        fh.truncate(keep)
    return size - keep


def _parse_constant(name: str) -> float:
    # NaN / Infinity appear in some foreign logs; keep them as floats so analytics can count them.
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def loads_line(text: bytes | str, **kw: Any) -> Any:
    """``json.loads(text, **kw)`` for text from a file others may have written: ValueError (``UnicodeDecodeError`` is
    one) for anything that is not JSON, including a line nested so deeply that the decoder runs out of stack
    (``[[[[...`` 100,000 deep raised RecursionError, which no reader caught: ``analyze`` ended in a traceback).
    Every reader of a log line or a result file uses this."""
    try:
        return json.loads(text, **kw)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def iter_jsonl(path: str | Path, *, skip_corrupt: bool = False) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a JSONL file.

    A torn last line (no trailing newline or unparsable) is skipped with a
    :class:`TornLineWarning`. A corrupt line elsewhere raises :class:`LogFormatError`
    naming file and line, unless ``skip_corrupt`` (then it is skipped with a warning).
    """
    for _, obj in iter_jsonl_lines(path, skip_corrupt=skip_corrupt):
        yield obj


def read_jsonl_lines(path: str | Path, *, skip_corrupt: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """Every object of a JSONL file with its 1-based line number (for errors naming file:line)."""
    path = Path(path)
    data = path.read_bytes()
    return _fast(data) or list(_parse_lines(path, data, skip_corrupt))


def iter_jsonl_lines(path: str | Path, *, skip_corrupt: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`read_jsonl_lines`, one object at a time (a damaged file is parsed line by line as it is read)."""
    path = Path(path)
    data = path.read_bytes()
    yield from _fast(data) or _parse_lines(path, data, skip_corrupt)


def _fast(data: bytes) -> list[tuple[int, dict[str, Any]]] | None:
    """The whole file at once when orjson reads every line as an object (the common case, ~3x faster);
    None for anything else (a torn or corrupt line, NaN, huge ints ...), which the tolerant reader decides."""
    if _orjson is None or not data.endswith(b"\n"):
        return None
    try:
        fast = [(i, _orjson.loads(raw)) for i, raw in enumerate(data.split(b"\n"), start=1) if raw.strip()]
    except ValueError:
        return None
    return fast if all(type(o) is dict for _, o in fast) else None


def _parse_lines(path: Path, data: bytes, skip_corrupt: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    lines = data.split(b"\n")
    # lines[-1] is b"" when the file ends with a newline
    last_idx = len(lines) - 1 if lines[-1] else len(lines) - 2
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            obj = loads_line(raw.decode("utf-8"), parse_constant=_parse_constant)
            if not isinstance(obj, dict):
                raise ValueError("line is not a JSON object")
        except (ValueError, UnicodeDecodeError) as exc:
            where = f"{path}:{i + 1}"
            if i >= last_idx:
                warnings.warn(f"{where}: skipping torn last line ({exc})", TornLineWarning, stacklevel=4)
                continue
            if skip_corrupt:
                warnings.warn(f"{where}: skipping corrupt line ({exc})", TornLineWarning, stacklevel=4)
                continue
            raise LogFormatError(f"{where}: corrupt JSONL line ({exc}); pass skip_corrupt=True to skip it") from exc
        yield i + 1, obj


def scan_jsonl(path: str | Path) -> tuple[list[tuple[int, dict[str, Any], bool]], list[tuple[int, bool, str]]]:
    """The columnar loader's view of a JSONL file: ``(byte offset, object, parsed by orjson)`` per
    good line, and ``(line number, is the last line, why)`` per line skipped (a torn last line or a
    corrupt one is never raised here: the caller counts it). Byte offsets let a reader fetch one
    record again (:func:`probe_records_at`); "parsed by orjson" says the object's orjson text is
    exact (the loader hashes answers by it)."""
    data = Path(path).read_bytes()
    out: list[tuple[int, dict[str, Any], bool]] = []
    bad: list[tuple[int, bool, str]] = []
    fast = _orjson.loads if _orjson is not None else None
    pos = 0
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        obj: Any = None
        exact = False
        if fast is not None and raw:  # orjson first (whitespace-only lines fail here and are skipped below)
            try:
                obj, exact = fast(raw), True
            except ValueError:
                pass
            if exact and obj.__class__ is dict:  # the usual line
                out.append((pos, obj, True))
                pos += len(raw) + 1
                continue
        if raw.strip():
            why = "not a JSON object"
            if not exact:
                try:
                    obj = loads_line(raw)
                except UnicodeDecodeError:
                    obj, why = None, "not UTF-8"
                except ValueError:
                    obj, why = None, "not JSON"
            if isinstance(obj, dict):
                out.append((pos, obj, exact))
            else:
                bad.append((lineno, not data[pos + len(raw) + 1 :].strip(), why))
        pos += len(raw) + 1
    return out, bad


def read_jsonl(path: str | Path, *, skip_corrupt: bool = False) -> list[dict[str, Any]]:
    return list(iter_jsonl(path, skip_corrupt=skip_corrupt))


def iter_probe_records(game_dir: str | Path, *, skip_corrupt: bool = True, decoder: Any = None) -> Iterator[dict[str, Any]]:
    """The probe records of one game directory (``introspection.jsonl``), as full dicts.

    Every reader of probe records goes through here: compact records (schema_version 3,
    :mod:`.probe_codec`) are expanded to the full shape, older ones pass unchanged. A game
    without the file yields nothing. A record whose table lines or quoted records are missing
    is an error naming the line (:class:`LogFormatError`), or skipped with a warning when
    ``skip_corrupt``. ``decoder`` (a fresh :class:`~.probe_codec.ProbeDecoder`) is the one used,
    for callers that look up quoted answers afterwards."""
    from .probe_codec import ProbeDecodeError, ProbeDecoder

    path = Path(game_dir) / PROBE_FILE
    if not path.is_file():
        return
    dec = decoder if decoder is not None else ProbeDecoder()
    for line, obj in iter_jsonl_lines(path, skip_corrupt=skip_corrupt):
        try:
            rec = dec.feed(obj)
        except ProbeDecodeError as exc:
            if not skip_corrupt:
                raise LogFormatError(f"{path}:{line}: {exc}") from None
            warnings.warn(f"{path}:{line}: skipping probe record ({exc})", TornLineWarning, stacklevel=2)
            continue
        if rec is not None:
            yield rec


def probe_records_at(game_dir: str | Path, offsets: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The full probe records whose lines start at the given byte offsets of ``introspection.jsonl``.

    A compact record needs the lines before it, so the file is decoded from its start (up to the
    last offset asked for); offsets of table lines, or not at a line start, are left out."""
    from .probe_codec import ProbeDecodeError, ProbeDecoder

    want = set(offsets)
    out: dict[int, dict[str, Any]] = {}
    if not want:
        return out
    data = (Path(game_dir) / PROBE_FILE).read_bytes()
    dec, pos, last = ProbeDecoder(), 0, max(want)
    for raw in data.split(b"\n"):
        if pos > last:
            break
        try:
            obj = loads_line(raw.decode("utf-8"), parse_constant=_parse_constant) if raw.strip() else None
            rec = dec.feed(obj) if isinstance(obj, dict) else None
        except (ValueError, UnicodeDecodeError, ProbeDecodeError):
            rec = None
        if rec is not None and pos in want:
            out[pos] = rec
        pos += len(raw) + 1
    return out


def game_dir(logs_dir: str | Path, game_id: str) -> Path:
    """The directory of one game; the id is validated and the path checked (mafiascope.logs.paths)
    so it cannot escape ``logs_dir`` or pass through a symlink."""
    from .paths import game_dir as _checked

    return _checked(logs_dir, game_id)


def is_game_dir(path: Path) -> bool:
    return (path / GAME_FILE).is_file()


def list_game_dirs(root: str | Path, depth: int = 2) -> list[Path]:
    """Game directories under ``root``: itself, or found at most ``depth`` levels down (default 2: its children
    and grandchildren), depth first and sorted by name in each directory. A game directory is not searched further,
    and below the first level neither are hidden directories (``.launch``)."""
    root = Path(root)
    if is_game_dir(root):
        return [root]
    found: list[Path] = []
    if not root.is_dir():
        return found

    def walk(d: Path, left: int, top: bool) -> None:
        for child in sorted(d.iterdir()):
            if not child.is_dir():
                continue
            if is_game_dir(child):
                found.append(child)
            elif left > 1 and (top or not child.name.startswith(".")):
                walk(child, left - 1, False)

    walk(root, depth, True)
    return found
