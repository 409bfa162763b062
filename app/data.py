"""Cached data access: game index over log roots and per-game raw records.

Every cache is keyed by the files' (size, mtime_ns), so a JSONL file is read again only
when it changed (a live game's files change while it runs; finished games never do).
Readers are the tolerant ones of :mod:`mafiascope.logs.io` (a torn last line is skipped).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from mafiascope.logs import INDEX_COLUMNS as LOG_INDEX_COLUMNS
from mafiascope.logs import GameLog, LogFormatError, game_index_row, kinds, read_game
from mafiascope.logs.io import GAME_FILE, PROBE_FILE, STATE_FILE, list_game_dirs
from mafiascope.logs.schema import validate_game_id

from . import disk_memo
from .paths import public_path


def file_sig(game_dir: str | Path) -> tuple[tuple[int, int], ...]:
    """(size, mtime_ns) of game.jsonl, introspection.jsonl, state.jsonl (0, 0 when absent)."""
    out = []
    for name in (GAME_FILE, PROBE_FILE, STATE_FILE):
        try:
            s = (Path(game_dir) / name).stat()
            out.append((s.st_size, s.st_mtime_ns))
        except OSError:
            out.append((0, 0))
    return tuple(out)


_SIG_SEEN: dict[str, tuple[float, tuple]] = {}  # game dir -> (monotonic time, file_sig) as the index last saw it
SIG_SEEN_MAX = 50000


def recent_sig(game_dir: str, max_age_s: float) -> tuple:
    """:func:`file_sig` of a game, or the one the game index took less than ``max_age_s`` seconds ago (a page
    run keys its analytics by the signatures the sidebar's index has just taken, instead of a second stat)."""
    import time

    hit = _SIG_SEEN.get(game_dir)
    if hit is not None and time.monotonic() - hit[0] < max_age_s:
        return hit[1]
    return file_sig(game_dir)


def read_log(path: str | Path) -> GameLog | None:
    """The game's log read tolerantly (torn and corrupt lines skipped quietly), None without a setup."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            log = read_game(path, skip_corrupt=True)
            log.probe_dicts  # read now, inside the quiet block  # noqa: B018
        except (LogFormatError, OSError):
            return None
    return log


_ROW_MEMO: dict[tuple[str, str, tuple], dict[str, Any] | None] = {}
ROW_MEMO_MAX = 20000


def _index_row(path: str, root: str, sig: tuple) -> dict[str, Any] | None:
    """Index row of one game, memoised per process by its files' signature (a plain dict:
    st.cache_data's hashing and pickling cost ~0.5 ms a call, a second per 1,000 games)."""
    key = (path, root, sig)
    if key in _ROW_MEMO:
        return _ROW_MEMO[key]
    if len(_ROW_MEMO) >= ROW_MEMO_MAX:
        _ROW_MEMO.clear()
    row = _ROW_MEMO[key] = _build_index_row(path, root)
    return row


def _build_index_row(path: str, root: str) -> dict[str, Any] | None:
    """The package's index row of the game (mafiascope.logs.game_index_row) with where the app found it."""
    row = game_index_row(path)
    if row is None:
        return None
    return {**row, "dir": path, "corpus": public_path(Path(path).parent), "root": root}


# how deep under a log root the index looks for games: the runs directory holds the app's own launches one level
# down, arena runs three (<runs>/arena/<run>/<game>) and studies four (<runs>/studies/<name>/games/<game>)
ROOT_DEPTH = 4


@st.cache_data(ttl=5, show_spinner=False)
def _dirs_of(root: str) -> list[str]:
    return [str(p) for p in list_game_dirs(root, depth=ROOT_DEPTH)]


_ROOT_PROBLEMS: dict[str, tuple[float, str | None]] = {}


def root_problem(root: str) -> str | None:
    """Why the log root ``root`` cannot be listed (e.g. /proc: permission denied), or None; remembered ~30 s
    so an unreadable root is not rescanned on every rerun."""
    import time

    hit = _ROOT_PROBLEMS.get(root)
    if hit is not None and time.monotonic() - hit[0] < 30:
        return hit[1]
    try:
        _dirs_of(root)
        why = None
    except OSError as exc:
        why = f"{exc.strerror or type(exc).__name__}" + (f" ({exc.filename})" if exc.filename else "")
    if len(_ROOT_PROBLEMS) > 64:
        _ROOT_PROBLEMS.clear()
    _ROOT_PROBLEMS[root] = (time.monotonic(), why)
    return why


_INDEX_MEMO: dict[tuple[str, ...], tuple[float, pd.DataFrame]] = {}
INDEX_TTL_S = 2.0

INDEX_COLUMNS = ["game_id", "dir", "corpus", "root", *LOG_INDEX_COLUMNS[1:]]  # the package's row and where it was found
IndexProgress = Callable[[list[dict[str, Any]], int, int], None]  # (rows so far, games read, games to read)
PROGRESS_MIN = 64  # fewer new or changed games than this are read without telling
PROGRESS_EVERY_S = 0.25


def game_index(roots: tuple[str, ...], progress: IndexProgress | None = None) -> pd.DataFrame:
    """One row per game under the roots (first root wins on duplicate ids); memoised for ~2 s. When at
    least :data:`PROGRESS_MIN` games must be read (a cold start on a large corpus), ``progress`` is told
    the rows found so far about every :data:`PROGRESS_EVERY_S` seconds, first before any game is read."""
    import time

    hit = _INDEX_MEMO.get(roots)
    now = time.monotonic()
    if hit is not None and now - hit[0] < INDEX_TTL_S:
        return hit[1]
    df = _game_index(roots, progress)
    if len(_INDEX_MEMO) > 16:
        _INDEX_MEMO.clear()
    _INDEX_MEMO[roots] = (now, df)
    return df


def clear_index() -> None:
    _INDEX_MEMO.clear()
    _dirs_of.clear()


_STORED_ROOTS: set[str] = set()


def _stored_rows(root: str) -> None:
    """Index rows of ``root`` kept on disk by an earlier server process (app/disk_memo.py), put
    into the row memo once per process: a fresh process re-reads only the games whose files
    changed since (their signatures differ), not every game.jsonl of the corpus."""
    if root in _STORED_ROOTS:
        return
    _STORED_ROOTS.add(root)
    found, rows = disk_memo.load("index", root)
    if found and isinstance(rows, list):
        for path, sig, row in rows[:ROW_MEMO_MAX]:
            _ROW_MEMO.setdefault((path, root, sig), row)


def load_stored_rows(roots: tuple[str, ...]) -> None:
    """Put the index rows kept on disk for ``roots`` into the row memo now (a server's warm-up, app/warm.py):
    plain file reads, no Streamlit call, so it runs outside a script run."""
    for root in roots:
        _stored_rows(root)


def _game_index(roots: tuple[str, ...], progress: IndexProgress | None = None) -> pd.DataFrame:
    import time

    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    plan: list[tuple[str, list[tuple[str, tuple]]]] = []
    if len(_SIG_SEEN) > SIG_SEEN_MAX:
        _SIG_SEEN.clear()
    for root in roots:
        _stored_rows(root)
        items = [(d, file_sig(d)) for d in _dirs_of(root)]
        now = time.monotonic()
        _SIG_SEEN.update((d, (now, sig)) for d, sig in items)
        plan.append((root, items))
    todo = sum((d, root, sig) not in _ROW_MEMO for root, items in plan for d, sig in items)
    tell = progress if progress is not None and todo >= PROGRESS_MIN else None
    if tell is not None:
        tell(rows, 0, todo)
    done, told = 0, time.monotonic()
    for root, items in plan:
        built = 0
        mine: list[tuple[str, tuple, dict[str, Any] | None]] = []
        for d, sig in items:
            new = (d, root, sig) not in _ROW_MEMO
            built += new
            row = _index_row(d, root, sig)
            mine.append((d, sig, row))
            if row is not None and row["game_id"] not in seen:
                seen.add(row["game_id"])
                rows.append(row)
            if new and tell is not None:
                done += 1
                if time.monotonic() - told >= PROGRESS_EVERY_S:
                    tell(rows, done, todo)
                    told = time.monotonic()
        if built:
            disk_memo.store("index", root, mine)
    df = pd.DataFrame(rows, columns=INDEX_COLUMNS)
    if not df.empty:
        df = df.sort_values(["is_branch", "ts"], ascending=[True, False], kind="stable").reset_index(drop=True)
    return df


class GameLookupError(ValueError):
    """A game id from the URL or a widget that is invalid or not in the selected corpora."""


def resolve_game(index: pd.DataFrame, game: str) -> pd.Series:
    """Row of ``game`` (full id or a unique prefix of at least 4 characters)."""
    try:
        validate_game_id(game)
    except ValueError as exc:
        raise GameLookupError(str(exc)) from None
    if index.empty:
        raise GameLookupError("no games found in the selected log directories")
    exact = index[index["game_id"] == game]
    if len(exact):
        return exact.iloc[0]
    if len(game) >= 4:
        pref = index[index["game_id"].str.startswith(game)]
        if len(pref) == 1:
            return pref.iloc[0]
        if len(pref) > 1:
            raise GameLookupError(f"game prefix {game!r} is ambiguous ({len(pref)} games match); use more characters")
    raise GameLookupError(f"unknown game {game!r}: it is not in the selected log directories")


@dataclass
class RawGame:
    """A game's records as the pages show them verbatim (dicts, read by mafiascope.logs.read_game)."""

    game_id: str
    dir: str
    setup: dict[str, Any]
    events: list[dict[str, Any]]
    probes: list[dict[str, Any]]


@st.cache_data(max_entries=48, show_spinner="Reading the game log ...")
def _load_raw(path: str, sig: tuple) -> RawGame:
    log = read_log(path)
    if log is None:  # no setup record (yet): an empty game
        return RawGame(Path(path).name, path, {"players": []}, [], [])
    return RawGame(log.game_id, path, log.raw_setup, [e for e in log.records if kinds.of(e) != kinds.SETUP], log.probe_dicts)


def load_raw(path: str | Path) -> RawGame:
    return _load_raw(str(path), file_sig(path))


def to_jsonable(x: Any) -> str:
    return json.dumps(x, ensure_ascii=False, indent=1, default=str)


def without_invalid(index: pd.DataFrame, include: bool = False) -> tuple[pd.DataFrame, int]:
    """The index without games over their fault budget (unless ``include``), and how many were left out."""
    if include or index.empty or "invalid" not in index:
        return index, 0
    bad = index["invalid"].astype(bool)
    return index[~bad], int(bad.sum())


def invalid_note(n: int) -> str:
    return f"{n} invalid game{'s' if n != 1 else ''} left out (over the fault budget)" if n else ""


def model_list(cell: Any) -> list[str]:
    """The models of one index row's ``models`` cell (comma-separated labels)."""
    return [m.strip() for m in str(cell).split(",") if m.strip()]


def models_of(cells: Any) -> list[str]:
    """Sorted distinct models over a ``models`` column."""
    return sorted({m for cell in cells for m in model_list(cell)})


HUMAN = "human"  # the model label of a seat a person plays (mafiascope.backends.human): never probed


def analysed_models(models: list[str]) -> list[str]:
    """``models`` without people: the analysis pages' per-model figures are over probed seats, and a human seat has
    none (it used to be offered, and counted, as a model with no data)."""
    return [m for m in models if m != HUMAN]


LAYER_KEY = "sb_probe_layer"  # the sidebar's probe layer (app/bridge.probe_layer_choice reads it)


@st.cache_data(ttl=10, max_entries=16, show_spinner=False)
def layers_in(dirs: tuple[str, ...]) -> list[str]:
    """The probe layers any of these games holds (``mafiascope probes ask`` writes them; mafiascope.logs.layers)."""
    from mafiascope.logs.layers import list_layers

    return sorted({name for d in dirs for name in list_layers(d)})
