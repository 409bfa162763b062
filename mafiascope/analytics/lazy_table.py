"""A loaded table of the selected games, read from the cache's Parquet files column by column.

A warm :func:`~.corpus.load_corpus` opens the cached tables and reads nothing but the games
table; a column is read (Parquet column projection), restricted to the selected games' rows and
given its game index ``g`` on first use. The whole frame (``corpus.probes``) is built from the
same columns, so a column read through :meth:`LazyTable.frame` and one read on its own are the
same values in the same rows, exactly as the eager load built them (same dtypes, categories,
row order, a RangeIndex).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .runtime import workers
from .cache import read_columns
from .mapped_read import read_mapped
from .load import hot


class _Part:
    """One cache directory's table (an opened Parquet file, or frames a cold load without a cache
    read): which of its rows belong to selected games, and their ``g``."""

    def __init__(self, source: pq.ParquetFile | pd.DataFrame, table: str, gmap: dict[str, int], ids: set[str]):
        self.source, self.table = source, table
        self._gmap, self._ids = gmap, ids
        self._sel: np.ndarray | None = None
        self._g: np.ndarray | None = None
        self._known = False  # whether ``_sel`` is decided
        self._n: int | None = None  # the selected rows' count

    def __len__(self) -> int:
        if self._n is None:
            self._select()
        return self._n  # type: ignore[return-value]

    def forget(self) -> None:
        """Let go of the rows' game index (a column of the table's length, read again when the ``g``
        column is); which rows are selected and their count stay."""
        self._g = None

    @property
    def sel(self) -> np.ndarray | None:
        """Which rows are selected (None: all)."""
        if not self._known:
            self._select()
        return self._sel

    @property
    def g(self) -> np.ndarray:
        """The selected rows' game index."""
        if self._g is None:
            self._select()
        return self._g  # type: ignore[return-value]

    def _select(self) -> None:
        # read on first use (a load opens the tables without reading them); the game index again after forget()
        self._sel, self._g = self._game_of_rows()
        self._known, self._n = True, len(self._g)

    def _game_of_rows(self) -> tuple[np.ndarray | None, np.ndarray]:
        # game of each row: its game id's index in the selection (-1: not selected, or not a parsed
        # game of this directory, or a row without an id); int32 (the dtype of the ``g`` column) when
        # it fits: kept per table while its columns are read
        dtype = np.int32 if len(self._gmap) < 2**31 else np.int64
        if isinstance(self.source, pq.ParquetFile):
            g = self._arrow_game_of_rows(dtype)
        else:
            gid = self.source["game_id"]
            if isinstance(gid.dtype, pd.CategoricalDtype):
                codes, cats = gid.cat.codes.to_numpy(), [str(x) for x in gid.cat.categories]
            else:
                codes, uniques = pd.factorize(gid, use_na_sentinel=True)
                cats = [str(x) for x in uniques]
            g = self._lookup(cats, dtype)[codes]  # (the lookup's trailing -1 serves code -1, a row without an id)
        sel = g >= 0
        return (None, g) if sel.all() else (sel, g[sel])

    def _lookup(self, ids: list, dtype: type) -> np.ndarray:
        """Each id's game index (-1: none), then a -1 for the rows without an id."""
        gmap, ok = self._gmap, self._ids
        return np.array([gmap.get(x, -1) if x in ok else -1 for x in ids] + [-1], dtype=dtype)

    def _arrow_game_of_rows(self, dtype: type) -> np.ndarray:
        """The game index of the file's rows from the ``game_id`` column's dictionary chunks: a row
        group's few ids are looked up once and its rows take theirs by their dictionary index (the
        frame the pandas path builds -- the chunks' dictionaries unified, 10^7 rows at 10,000 games,
        its categories iterated in Python -- was ~0.1 s of CPU a table)."""
        # its own reader (a map of the open file), the columns may be read meanwhile
        col = read_mapped(self.source, ["game_id"], ["game_id"], use_threads=False).column(0)
        out = np.empty(len(col), dtype=dtype)
        at = 0
        for chunk in col.chunks:
            if not pa.types.is_dictionary(chunk.type):
                chunk = chunk.dictionary_encode()
            lut = self._lookup([None if x is None else str(x) for x in chunk.dictionary.to_pylist()], dtype)
            idx = chunk.indices
            if idx.null_count:  # a row without an id: the lookup's trailing -1
                idx = pc.fill_null(idx.cast(pa.int64()), -1)
            out[at:at + len(chunk)] = lut[idx.to_numpy()]
            at += len(chunk)
        return out

    @property
    def names(self) -> list[str]:
        return list(self.source.schema_arrow.names if isinstance(self.source, pq.ParquetFile) else self.source.columns)

    def _columns(self, columns: list[str]) -> pd.DataFrame:
        if isinstance(self.source, pq.ParquetFile):
            return read_columns(self.source, self.table, columns)
        return self.source[columns]

    def read(self, columns: list[str], with_g: bool = False) -> pd.DataFrame:
        """The selected rows of ``columns``. An opened file's rows are matched to their games (a read
        of its ``game_id`` column, needed for the selection and for ``g``) on a worker thread while
        the columns are read: both are mostly Parquet decoding, which runs without the GIL."""
        need = not self._known or (with_g and self._g is None)
        if need and getattr(self.source, "mafiascope_file", None) is not None and workers() > 1:
            with ThreadPoolExecutor(1, thread_name_prefix="mafiascope-rows") as ex:
                rows = ex.submit(self._select)
                df = self._columns(columns)
                rows.result()
        else:
            df = self._columns(columns)
        sel = self.sel
        return df if sel is None else df[sel]


class LazyTable:
    """The rows of the selected games of one table; columns materialised on first use and kept
    until :meth:`release`. ``columns``: the frame's columns in order (``g`` last)."""

    def __init__(self, name: str, columns: Sequence[str], parts: list[_Part] | None = None,
                 frame: pd.DataFrame | None = None):
        self.name = name
        self.columns = list(columns)
        self._parts = parts or []
        self._frame = frame
        self._cols: dict[str, pd.Series] = {}
        self._order: np.ndarray | None | bool = False  # False: not decided yet; None: rows already in order
        self._lock = threading.RLock()

    @classmethod
    def opened(cls, name: str, sources: list[tuple[pq.ParquetFile | pd.DataFrame, set[str]]], gmap: dict[str, int],
               skip: tuple[str, ...] = ()) -> LazyTable:
        """The selected games' rows of ``sources`` (per cache directory: its table and its parsed
        game ids). Frames (no cache) are gathered at once and let go of."""
        parts = [_Part(src, name, gmap, ids) for src, ids in sources]
        cols = [c for c in parts[0].names if c != "game_id" and c not in skip] if parts else []
        table = cls(name, cols + ["g"], parts=parts)
        if any(not isinstance(p.source, pq.ParquetFile) for p in parts):
            table.frame()
            table._parts = []
        return table

    def __len__(self) -> int:
        with self._lock:
            if self._frame is not None:
                return len(self._frame)
            return int(sum(len(p) for p in self._parts))

    def _rows_order(self) -> np.ndarray | None:
        """Probe rows are kept in (g, rec) order (the cache holds them in parse order)."""
        if self._order is False:
            self._order = None
            if self.name == "probes" and len(self):
                got = self._read(["rec", "g"])  # one read: the rows' game index is found while ``rec`` is read
                g, rec = got["g"].to_numpy(), got["rec"].to_numpy()
                key = g.astype(np.int64) * (1 << 32) + rec
                if len(key) > 1 and not bool((key[1:] >= key[:-1]).all()):
                    self._order = np.lexsort((rec, g))
        return self._order  # type: ignore[return-value]

    def _raw(self, col: str) -> pd.Series:
        """A column over the selected rows in cache order, in its hot dtype (before the row order)."""
        return self._read([col])[col]

    def _read(self, cols: list[str]) -> dict[str, pd.Series]:
        pieces: list[dict[str, pd.Series]] = []
        data_cols = [c for c in cols if c != "g"]
        for p in self._parts:
            got = dict(p.read(data_cols, with_g="g" in cols).items()) if data_cols else {}
            if "g" in cols:
                got["g"] = pd.Series(p.g, index=got[data_cols[0]].index if data_cols else None)
            pieces.append(got)
        out: dict[str, pd.Series] = {}
        for c in cols:
            ser = [pc[c] for pc in pieces]
            full = [s for s in ser if len(s)]
            if not full:
                s = ser[0].iloc[:0] if ser else pd.Series(dtype=np.int64)
            elif len(full) == 1:  # one cache directory: its column as it is (no copy)
                s = full[0].reset_index(drop=True)
            else:
                s = pd.concat(full, ignore_index=True)
            out[c] = hot(self.name, s.to_frame(c))[c]
        return out

    def cols(self, cols: Sequence[str]) -> pd.DataFrame:
        """These columns (a frame sharing the kept columns; no copy of the other columns)."""
        with self._lock:
            if self._frame is not None:
                return self._frame[list(cols)]
            missing = [c for c in cols if c not in self._cols]
            if missing:
                if any(c not in self.columns for c in missing):
                    raise KeyError(f"{self.name}: no column {[c for c in missing if c not in self.columns]}")
                order = self._rows_order()
                for c, s in self._read(missing).items():
                    if order is not None:
                        s = s.take(order).reset_index(drop=True)
                    self._cols[c] = s
                if "g" in self._cols:  # the parts' game index is only read to build the g column: not kept beside it
                    for p in self._parts:
                        p.forget()
                if order is not None:  # the unordered columns were Arrow's buffers: hand them back
                    pa.default_memory_pool().release_unused()
            return pd.DataFrame({c: self._cols[c] for c in cols}, copy=False)

    def frame(self) -> pd.DataFrame:
        """Every column, in the table's column order (built once)."""
        with self._lock:
            if self._frame is None:
                self._frame = self.cols(self.columns)
                self._cols.clear()  # the frame holds them now
            return self._frame

    def release(self, keep: Sequence[str] = ()) -> None:
        """Drop the columns read so far except ``keep`` (they are read again on the next use); a cold
        load's frame stays."""
        with self._lock:
            if self._parts:
                if self._frame is not None:
                    self._cols = {c: self._frame[c] for c in self.columns}
                    self._frame = None
                self._cols = {c: s for c, s in self._cols.items() if c in keep}
                if "g" not in self._cols:  # the rows' game index goes too (which rows are selected and their count stay)
                    for p in self._parts:
                        p.forget()

    def subset(self, kept: np.ndarray, gmap: dict[str, int]) -> LazyTable:
        """The rows of some of the games: ``kept`` holds the games' old indexes in their new order, ``gmap``
        their ids' new indexes. An opened table selects its rows anew (nothing is read); a loaded frame's
        rows are filtered and their ``g`` renumbered."""
        with self._lock:
            if self._parts:
                parts = [_Part(p.source, self.name, gmap, p._ids) for p in self._parts]
                return LazyTable(self.name, self.columns, parts=parts)
            df = self.frame()
            new = np.full(int(df["g"].max()) + 1 if len(df) else 0, -1, dtype=np.int64)
            keep = kept[kept < len(new)]
            new[keep] = np.flatnonzero(kept < len(new))
            g = new[df["g"].to_numpy()] if len(df) else np.zeros(0, dtype=np.int64)
            rows = df[g >= 0].reset_index(drop=True)
            rows["g"] = g[g >= 0].astype(df["g"].dtype)
            return LazyTable(self.name, self.columns, frame=rows)
