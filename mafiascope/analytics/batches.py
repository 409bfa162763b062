"""Columnar batches of parsed games: the rows of many games stacked into one Arrow table per
table, in the cache's dtypes (:func:`load.hot` without categoricals, strings as Arrow strings).

Building one table per batch of games instead of one pandas frame per game per table is what
keeps the cold load's fixed cost per game small (pandas spent 50-100 ms a game building and
re-typing ten small frames); the cache writes each batch as a Parquet row group, so memory
holds one batch, not every game.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa

from .load import COLUMNS, DTYPES, HOT_DTYPES, ITEM_TABLES, TABLES, GameRows

_STR = pa.string()
# columns outside DTYPES (games and players are built from records; their dtypes are pandas' inference)
_INFERRED: dict[str, dict[str, str]] = {
    "games": {"n_players": "int64", "n_mafia": "int64", "completed": "bool", "invalid": "bool", "last_round": "int64",
              "feedback_to_context": "bool", "setup_ts": "float64", "has_probe_file": "bool", "n_probes": "int64",
              "game_calls": "int64", "has_state": "bool"},
    "players": {"seat": "int64", "role_code": "int64", "O": "float64", "C": "float64", "E": "float64",
                "A": "float64", "N": "float64", "death_ts": "float64", "death_round": "int64", "probes_skipped": "int64"},
}


def _dtypes(table: str) -> dict[str, tuple[str, str]]:
    """Column -> (parse dtype, stored dtype) of the numeric columns; other columns are strings."""
    wide = {**_INFERRED.get(table, {}), **DTYPES.get(table, {})}
    narrow = {k: v for k, v in HOT_DTYPES.get(table, {}).items() if v != "category"}
    return {k: (v, narrow.get(k, v)) for k, v in wide.items()}


NUMERIC: dict[str, dict[str, tuple[str, str]]] = {t: _dtypes(t) for t in TABLES}
# The game id and the numeric columns (numpy arrays: never a null) are required fields: Parquet then
# stores no definition levels for them and Arrow decodes them without a validity pass. Reading every
# column of the 10,000-game cache took 0.83x the wall and CPU (best of five alternated rounds), for
# the same bytes. Strings (a player's model, an event's text...) may be missing: they stay nullable.
SCHEMAS: dict[str, pa.Schema] = {
    t: pa.schema([pa.field("game_id", _STR, nullable=False)] + [
        pa.field(c, pa.from_numpy_dtype(np.dtype(NUMERIC[t][c][1])), nullable=False) if c in NUMERIC[t]
        else pa.field(c, _STR) for c in COLUMNS[t]
    ])
    for t in TABLES
}


def _column(values: Sequence[Any], dtypes: tuple[str, str] | None) -> pa.Array:
    if dtypes is None:
        return pa.array(values, type=_STR)
    wide, narrow = dtypes
    arr = None
    if wide == "float64" or wide == "int64":  # the array module converts a sequence of numbers ~2x faster than numpy
        try:
            arr = np.frombuffer(array("d" if wide == "float64" else "q", values), dtype=wide)
        except (TypeError, OverflowError):  # not all ints (or floats), or past 64 bits: numpy's rules decide, as before
            arr = None
    if arr is None:  # through the wide dtype first: the narrowing wraps exactly like pandas' astype did
        arr = np.array(values, dtype=wide)
    return pa.array(arr if wide == narrow else arr.astype(narrow))


_first = itemgetter(0)


def _stacked(ok: list[GameRows], t: str) -> tuple[list[str], list[Sequence[Any]]]:
    """(game id per row, the table's columns) of the batch's games, transposed once for the batch."""
    ids: list[str] = []
    if t in ITEM_TABLES:  # one block per answer: (rec, the columns of its rows)
        blocks = []
        for g in ok:
            got = g.items.get(t, ())
            if got:
                blocks.extend(got)
                ids.extend([g.game_id] * sum(len(cols[0]) for _, cols in got))
        if not blocks:
            return ids, [() for _ in COLUMNS[t]]
        block_recs, colss = zip(*blocks)  # map/itemgetter below: C loops, no Python frame per block
        recs = list(chain.from_iterable(map(repeat, block_recs, map(len, map(_first, colss)))))
        return ids, [recs] + [list(chain.from_iterable(map(itemgetter(j), colss))) for j in range(len(COLUMNS[t]) - 1)]
    rows: list[tuple] = []
    for g in ok:
        got = g.base.get(t, ())
        if got:
            rows.extend(got)
            ids.extend([g.game_id] * len(got))
    return ids, (list(zip(*rows)) if rows else [() for _ in COLUMNS[t]])


def batch_tables(games: list[GameRows]) -> dict[str, pa.Table]:
    """One Arrow table per table holding the rows of every ok game in ``games``, in order
    (tests/test_cold_fastpaths.py holds it to the tables built from each game's :meth:`GameRows.columns`)."""
    out: dict[str, pa.Table] = {}
    ok = [g for g in games if g.ok]
    for t in TABLES:
        ids, cols = _stacked(ok, t)
        arrays = [pa.array(ids, type=_STR)] + [_column(v, NUMERIC[t].get(c)) for c, v in zip(COLUMNS[t], cols)]
        out[t] = pa.Table.from_arrays(arrays, schema=SCHEMAS[t])
    return out
