"""Corpus selection and the loaded :class:`Corpus` (typed, columnar, numbers only).

Select games by directory, glob, manifest (a file of game ids: one per line, a JSON list,
or a JSON object with ``game_ids``) and filters (language, model, rule set, completed
only, forks excluded by default, games without probes excluded by default as in the
original, games over their fault budget -- ``game_over.invalid`` -- excluded by default). Games are ordered by game id (this order fixes the bootstrap draws).
"""

from __future__ import annotations

import threading
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ..logs.io import TornLineWarning
from .runtime import BlockReadError, current_block
from .cache import Progress, load_dir_games, open_warm, pending_games, read_columns, read_event_texts, update_cache
from .game_dirs import find_game_dirs, scan  # noqa: F401 - find_game_dirs: part of this module's interface
from .lazy_table import LazyTable
from .load import TABLES, read_probe_record
from .model_names import ModelNames, describe, models_below
from .selection import DOUBLED, GameCopies, doubled_games, read_manifest, selection_record  # noqa: F401 - read_manifest: part of this module's interface


LAZY_TABLES = tuple(t for t in TABLES if t != "games")


class Cached:
    """A derived value a corpus memoises: ``c.memo(ENTRY.key(*params), build)``. Every memo key is one
    of these (or a tuple headed by one), so what a report keeps is declared where the value is built:
    ``report=True`` values (seat arrays, seat statistics, ...) are kept for the whole report; the
    others are let go of after the group of sections that built them when the report is lean
    (:func:`.executor.lean_report`)."""

    __slots__ = ("name", "report")

    def __init__(self, name: str, *, report: bool = False):
        self.name, self.report = name, report

    def __repr__(self) -> str:
        return self.name

    def key(self, *params: Any) -> tuple[Any, ...]:
        return (self, *params)


def _entry(key: Any) -> Cached:
    head = key[0] if isinstance(key, tuple) and key else key
    if not isinstance(head, Cached):
        raise TypeError(f"memo key {key!r}: not a Cached entry (declare one where the value is built)")
    return head


SEAT_ARRAY = Cached("seat_array", report=True)
SEAT_ARRAY_OBJ = Cached("seat_array_obj", report=True)
SEAT_NAMES = Cached("seat_names", report=True)
GAME_ROWS = Cached("game_rows")  # a table's row offsets per game (its rows' game order)
PROBED = Cached("probed", report=True)  # the corpus of the games with probe records
EVENT_TEXTS = Cached("event_texts")


def _table(name: str) -> property:
    """A table attribute: read on first use; assigning a frame replaces the table (tests, what-ifs)."""

    def get(self: Corpus) -> pd.DataFrame:
        self._check_block(name)
        return self._tables[name].frame()

    def set(self: Corpus, df: pd.DataFrame) -> None:
        self._tables[name] = LazyTable(name, list(df.columns), frame=df)
        self.forget(GAME_ROWS.key(name))

    return property(get, set)


class Corpus:
    """Loaded tables. Every table has ``g`` (game index, 0..m-1 in game-id order).

    ``games`` is loaded at once; every other table (``c.probes``, ``c.pp``, ...) is read from the
    columnar cache on first use, and :meth:`cols` reads only the columns asked for. Shared
    between threads (the app): reads and :meth:`memo` builds are serialised per corpus."""

    def __init__(self, games: pd.DataFrame, tables: dict[str, LazyTable], *, audit: dict[str, Counter] | None = None,
                 selection: dict[str, Any] | None = None, cache_dirs: dict[str, tuple[Path, Any]] | None = None,
                 probe_layer: str | None = None):
        self.games = games
        self._tables = tables
        self.audit: dict[str, Counter] = audit or {}
        self.selection: dict[str, Any] = selection or {}
        self._cache_dirs = cache_dirs or {}
        self.probe_layer = probe_layer  # the probe layer read (None: the games' own answers; mafiascope.logs.layers)
        self._memo: dict[Any, Any] = {}
        self._lock = threading.RLock()
        self._block = current_block()  # a game view made inside a block belongs to it (executor.map_blocks)

    def _check_block(self, what: Any) -> None:
        """Raise :class:`~.runtime.BlockReadError` when a block function reads this corpus it was not
        handed (the caller may hold this corpus' lock while the blocks run: a wait that never ends)."""
        block = current_block()
        if block is not None and block is not self._block:
            raise BlockReadError(
                f"a block function read the corpus ({what!r}); block functions must read only the arrays handed "
                "to them: build what they need before mapping the blocks")

    def __repr__(self) -> str:
        return f"Corpus(m={self.m}, tables={sorted(self._tables)})"

    players = _table("players")
    events = _table("events")
    votes = _table("votes")
    probes = _table("probes")
    ra = _table("ra")
    sr = _table("sr")
    sm = _table("sm")
    pp = _table("pp")
    pa = _table("pa")

    def with_tables(self, **frames: pd.DataFrame) -> Corpus:
        """A corpus of the same games whose named tables are replaced by ``frames`` (what-if analyses,
        tests); the other tables are shared, the memo starts empty."""
        unknown = sorted(set(frames) - set(self._tables))
        if unknown:
            raise KeyError(f"not a corpus table: {', '.join(unknown)}")
        out = Corpus(self.games, dict(self._tables), audit=self.audit, selection=self.selection,
                     cache_dirs=self._cache_dirs, probe_layer=self.probe_layer)
        for name, df in frames.items():
            setattr(out, name, df)
        return out

    def subset(self, keep: np.ndarray) -> Corpus:
        """A corpus of the games where ``keep`` (bool per game) holds, in the same order, renumbered from 0;
        the tables select their rows anew (nothing is read), the memo starts empty, audit and selection are
        shared."""
        kept = np.flatnonzero(np.asarray(keep, dtype=bool))
        games = self.games.iloc[kept].reset_index(drop=True)
        if "g" in games:
            games["g"] = np.arange(len(games))
        gmap = {gid: i for i, gid in enumerate(games["game_id"].astype(str))}
        tables = {t: lt.subset(kept, gmap) for t, lt in self._tables.items()}
        return Corpus(games, tables, audit=self.audit, selection=self.selection, cache_dirs=self._cache_dirs,
                      probe_layer=self.probe_layer)

    def probed(self) -> Corpus:
        """The games with probe records or skipped probe calls (this corpus when every game has them; memoised):
        what reads probe answers runs on; what needs only the game logs counts every game (docs/metrics.md §2)."""
        if "n_probes" not in self.games:
            return self
        probed = self.games["n_probes"].to_numpy() > 0
        if not probed.all() and self.has_column("players", "probes_skipped"):  # every call skipped: probed, not answered
            p = self.cols("players", ["g", "probes_skipped"])
            probed[p["g"].to_numpy()[p["probes_skipped"].to_numpy() > 0]] = True
        return self if probed.all() else self.memo(PROBED.key(), lambda: self.subset(probed))

    def cols(self, table: str, columns: list[str]) -> pd.DataFrame:
        """Only these columns of a table (read on their own when the whole table is not loaded)."""
        self._check_block(table)
        return self._tables[table].cols(columns)

    def has_column(self, table: str, column: str) -> bool:
        return column in self._tables[table].columns

    def n_rows(self, table: str) -> int:
        """A table's row count without reading its columns."""
        self._check_block(table)
        return len(self._tables[table])

    def release(self, *tables: str) -> None:
        """Let go of the tables' loaded columns (read again on the next use) and their row indexes."""
        for t in tables:
            self._tables[t].release()
            self.forget(GAME_ROWS.key(t))

    def release_columns(self, table: str, keep: Sequence[str]) -> None:
        """Let go of a table's loaded columns other than ``keep`` (read again on the next use)."""
        self._tables[table].release(keep)
        self.forget(GAME_ROWS.key(table))

    def columns(self, table: str) -> list[str]:
        """A table's columns (``g`` last), read or not."""
        return list(self._tables[table].columns)

    def forget(self, *keys: Any) -> None:
        """Drop memoised intermediates (built again if asked for)."""
        with self._lock:
            for k in keys:
                self._memo.pop(k, None)

    def memo_keys(self) -> list[Any]:
        """The keys of the values memoised now."""
        with self._lock:
            return list(self._memo)

    def peek(self, key: Any) -> Any:
        """The value memoised under ``key``, or None (nothing is built)."""
        self._check_block(key)
        with self._lock:
            return self._memo.get(key)

    def seed(self, values: dict[Any, Any]) -> None:
        """Memoise these values as they are (a game view gets its corpus' per-game arrays sliced)."""
        for k in values:
            _entry(k)
        with self._lock:
            self._memo.update(values)

    @property
    def m(self) -> int:
        return len(self.games)

    @property
    def game_ids(self) -> list[str]:
        return self.games["game_id"].tolist()

    def roles(self, g: int) -> np.ndarray:
        """True role codes of game g's seats."""
        return self.seat_array("role_code")[g]

    def seat_array(self, col: str, fill: float = np.nan) -> np.ndarray:
        """(m, max_seats) array of a players column."""

        def build() -> np.ndarray:
            p = self.cols("players", ["g", "seat", col])
            ns = int(p["seat"].max()) + 1 if len(p) else 0
            dtype = np.float64 if p[col].dtype.kind == "f" else np.int64
            arr = np.full((self.m, ns), fill if dtype == np.float64 else -1, dtype=dtype)
            arr[p["g"].to_numpy(), p["seat"].to_numpy()] = p[col].to_numpy()
            return arr

        return self.memo(SEAT_ARRAY.key(col), build)

    def seat_array_obj(self, col: str) -> np.ndarray:
        """(m, max_seats) object array of a players column (None for padding seats)."""

        def build() -> np.ndarray:
            p = self.cols("players", ["g", "seat", col])
            ns = int(p["seat"].max()) + 1 if len(p) else 0
            arr = np.full((self.m, ns), None, dtype=object)
            arr[p["g"].to_numpy(), p["seat"].to_numpy()] = p[col].to_numpy(dtype=object)
            return arr

        return self.memo(SEAT_ARRAY_OBJ.key(col), build)

    def seat_names(self, g: int) -> list[str]:
        def build() -> list[list[str]]:
            p = self.players.sort_values(["g", "seat"], kind="stable")
            names = p["name"].tolist()
            bounds = np.searchsorted(p["g"].to_numpy(), np.arange(self.m + 1)).tolist()
            return [names[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

        return list(self.memo(SEAT_NAMES.key(), build)[g])

    def game_rows(self, table: str, g: int) -> pd.DataFrame:
        """Rows of one game in a table, in table order (index labels kept), without scanning the table."""
        df = getattr(self, table)

        def index() -> tuple[np.ndarray | None, np.ndarray]:
            gg = df["g"].to_numpy()
            order = None if (len(gg) < 2 or bool((gg[1:] >= gg[:-1]).all())) else np.argsort(gg, kind="stable")
            bounds = np.searchsorted(gg if order is None else gg[order], np.arange(self.m + 1), side="left")
            return order, bounds

        order, bounds = self.memo(GAME_ROWS.key(table), index)
        a, b = int(bounds[g]), int(bounds[g + 1])
        return df.iloc[a:b] if order is None else df.iloc[order[a:b]]

    def game_index(self, game_id: str) -> int:
        hits = np.flatnonzero(self.games["game_id"].to_numpy() == game_id)
        if not len(hits):
            raise KeyError(game_id)
        return int(hits[0])

    def event_texts(self) -> pd.DataFrame:
        """Events with their text column (loaded on demand, memoised)."""
        return self.memo(EVENT_TEXTS.key(), self._event_texts)

    def _event_texts(self) -> pd.DataFrame:
        parts = []
        for parent, cache_dir in self._cache_dirs.values():
            try:
                parts.append(read_event_texts(parent, cache_dir, self.probe_layer))
            except OSError:
                pass
        if parts:
            t = pd.concat(parts, ignore_index=True)
        else:  # cache not written: re-parse the selected games' events
            from .load import parse_game

            rows = []
            for gid, path in zip(self.games["game_id"], self.games["path"]):
                e = parse_game(path).tables["events"][["ev", "text"]].copy()
                e.insert(0, "game_id", gid)
                rows.append(e)
            t = pd.concat(rows, ignore_index=True)
        gmap = {gid: i for i, gid in enumerate(self.game_ids)}
        t = t[t["game_id"].astype(str).isin(gmap.keys())]
        t = t.assign(g=t["game_id"].astype(str).map(gmap).astype(int))
        return self.events.merge(t[["g", "ev", "text"]], on=["g", "ev"], how="left")

    def probe_record(self, g: int, rec: int) -> dict[str, Any]:
        """The full introspection record (raw text, question) of one probe, read on demand."""
        p = self.game_rows("probes", g)
        row = p[p["rec"].to_numpy() == rec]
        return read_probe_record(self.games["path"].iat[g], int(row["offset"].iat[0]), self.probe_layer)

    def memo(self, key: Any, fn):  # small per-corpus cache of derived arrays (keys: :class:`Cached` entries)
        self._check_block(key)
        _entry(key)
        with self._lock:
            if key not in self._memo:
                self._memo[key] = fn()
            return self._memo[key]


def _by_parent(sources: list[str | Path] | str | Path) -> dict[Path, list[Path]]:
    return scan(sources).dirs


def pending_corpus(sources: list[str | Path] | str | Path, *, cache_dir: str | Path | None = None,
                   probe_layer: str | None = None) -> int:  # fmt: skip
    """How many games a :func:`load_corpus` of ``sources`` would parse before answering (0: warm cache)."""
    return sum(pending_games(parent, dirs, cache_dir=cache_dir, layer=probe_layer) for parent, dirs in _by_parent(sources).items())


def prepare_corpus(sources: list[str | Path] | str | Path, *, cache_dir: str | Path | None = None,
                   workers: int | None = None, chunk: int | None = None, progress: Progress | None = None,
                   probe_layer: str | None = None) -> int:  # fmt: skip
    """Parse the new and changed games of ``sources`` into their caches, batch by batch, telling
    ``progress(done, total)`` after each batch; a later :func:`load_corpus` then reads the caches
    warm. Returns the number of games parsed."""
    groups = _by_parent(sources)
    todo = {parent: pending_games(parent, dirs, cache_dir=cache_dir, layer=probe_layer) for parent, dirs in groups.items()}
    total, done = sum(todo.values()), 0
    for parent, dirs in groups.items():
        if not todo[parent]:
            continue
        base = done
        tell = None if progress is None else (lambda k, _n, base=base: progress(base + k, total))
        done += update_cache(parent, dirs, cache_dir=cache_dir, workers=workers, progress=tell, layer=probe_layer,
                             **({} if chunk is None else {"chunk": chunk}))
    return done


def load_for_analysis(sources: list[str | Path] | str | Path, compat: bool, **filters: Any) -> Corpus:
    """The games a report counts (docs/metrics.md §2): by default every selected game, the transcript-only ones
    in the sections that need no probe answers (:meth:`Corpus.probed` gives the others their games); in compat
    mode the original's selection, the games with probe records (every game when none has any)."""
    c = load_corpus(sources, probed_only=compat, **filters)
    if compat and c.m == 0 and c.selection.get("excluded", {}).get("no_probes"):
        c = load_corpus(sources, probed_only=False, **filters)
    return c


def load_corpus(
    sources: list[str | Path] | str | Path,
    *,
    manifest: str | Path | list[str] | None = None,
    language: str | None = None,
    model: str | None = None,
    rule_set: str | None = None,
    completed_only: bool = False,
    include_forks: bool = False,
    include_invalid: bool = False,
    probed_only: bool = True,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    workers: int | None = None,
    model_names: ModelNames | None = None,
    min_games: int | None = None,
    probe_layer: str | None = None,
) -> Corpus:
    """The selected games (module doc). ``model_names``: how seats' models are named (aliases, a split by language;
    applied before the filters, so ``model`` takes the new names); ``min_games``: models seated in fewer of
    the selected games are left out of the per-model figures (``selection.models_left_out``). ``probe_layer``:
    read that probe layer of every game instead of its own answers (mafiascope.logs.layers; a game whose layer
    is over its fault budget is invalid)."""
    found = scan(sources)
    sources_of: list[tuple[Any, set[str]]] = []  # per parent: (opened tables or loaded frames, its kept game ids)
    games_parts: list[pd.DataFrame] = []
    audit: dict[str, Counter] = {}
    cache_dirs = {}
    copies = GameCopies()
    for parent, gdirs in found.dirs.items():
        opened = None
        if use_cache:  # build what is missing, then read the cache lazily
            opened = open_warm(parent, gdirs, cache_dir, found.stats[parent], probe_layer)
            if opened is None:
                update_cache(parent, gdirs, cache_dir=cache_dir, workers=workers, layer=probe_layer)
                opened = open_warm(parent, gdirs, cache_dir, layer=probe_layer)
        if opened is not None:
            man, files = opened
            src: Any = files
            games_df = read_columns(files["games"], "games", files["games"].schema_arrow.names)
        else:  # no usable cache: the tables are built in a temporary directory and read at once
            res = load_dir_games(parent, gdirs, cache_dir=cache_dir, use_cache=use_cache, workers=workers, layer=probe_layer)
            man, src = res.manifest, res.tables
            games_df = res.tables["games"]
        names = {d.name for d in gdirs}
        ids = copies.keep(parent, {k: v["game_id"] for k, v in man["games"].items() if k in names and v["ok"]})
        for k, v in man["games"].items():
            if k in names:
                audit[v["game_id"]] = Counter(v.get("audit", {}))
                for note in v.get("skipped", []):  # fresh or cached: every run says what it skipped
                    warnings.warn(f"{parent / k}/{note}", TornLineWarning, stacklevel=2)
        if "game_id" in games_df.columns:
            games_parts.append(games_df[games_df["game_id"].astype(str).isin(ids)])
        sources_of.append((src, ids))
        if use_cache:
            cache_dirs[str(parent)] = (parent, cache_dir)
    copies.settle([ids for _, ids in sources_of])  # an id found twice in a later folder: no copy kept anywhere
    games = pd.concat(games_parts, ignore_index=True) if games_parts else pd.DataFrame({"game_id": []})
    games["game_id"] = games["game_id"].astype(str)
    games = games[games["game_id"].isin(set(copies.kept))]
    if model_names:
        games["models"] = model_names.games_models(games)
    excluded: Counter = Counter(copies.excluded())
    keep = pd.Series(True, index=games.index)

    def _drop(mask: pd.Series, why: str) -> None:
        nonlocal keep
        excluded[why] += int((keep & ~mask).sum())
        keep &= mask

    doubled = doubled_games(audit)
    _drop(~games["game_id"].isin({d["game_id"] for d in doubled}), DOUBLED)
    if manifest is not None:
        ids = manifest if isinstance(manifest, list) else read_manifest(manifest)
        missing = sorted(set(ids) - set(games["game_id"]))
        if missing:
            excluded["manifest_ids_not_found"] = len(missing)
        _drop(games["game_id"].isin(set(ids)), "not_in_manifest")
    if not include_forks:
        _drop(games["forked_from"] == "", "fork")
    if not include_invalid and "invalid" in games:
        _drop(~games["invalid"].astype(bool), "invalid")
    if probed_only:
        _drop(games["n_probes"] > 0, "no_probes")
    if language:
        _drop(games["language"] == language, "language")
    if model:
        _drop(games["models"].str.split(",").apply(lambda ms: model in ms), "model")
    if rule_set:
        _drop(games["rule_set"] == rule_set, "rule_set")
    if completed_only:
        _drop(games["completed"].astype(bool), "incomplete")
    games = games[keep].sort_values("game_id").reset_index(drop=True)
    gmap = {gid: i for i, gid in enumerate(games["game_id"])}
    games.insert(0, "g", np.arange(len(games)))
    lazy: dict[str, LazyTable] = {}
    for t in LAZY_TABLES:
        srcs = [(src[t], ids) for src, ids in sources_of if isinstance(src[t], pq.ParquetFile) or "game_id" in src[t]]
        lazy[t] = LazyTable.opened(t, srcs, gmap, skip=("text",))
    if model_names:
        players = model_names.players(lazy["players"].frame(), games)
        lazy["players"] = LazyTable("players", list(players.columns), frame=players)
    filters = {"manifest": str(manifest) if manifest is not None and not isinstance(manifest, list) else manifest,
               "language": language, "model": model, "rule_set": rule_set, "completed_only": completed_only,
               "include_forks": include_forks, "include_invalid": include_invalid, "probed_only": probed_only,
               **describe(model_names, min_games), **({"probe_layer": probe_layer} if probe_layer is not None else {})}
    selection = selection_record(sources, copies, len(games), excluded, filters, audit, doubled)
    if min_games:
        selection["models_left_out"] = models_below(games["models"], min_games)
    return Corpus(games, lazy, audit=audit, selection=selection, cache_dirs=cache_dirs, probe_layer=probe_layer)
