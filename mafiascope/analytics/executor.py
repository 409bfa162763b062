"""The executor: the one place that decides how metric code runs -- blocks of games, worker threads,
and (:func:`map_views`) game views.

**Blocks.** Independent blocks run on worker threads (:func:`.runtime.workers`), results in block order,
so a caller's concatenation is the same as the sequential loop's, bit for bit. numpy releases the GIL
inside its large kernels (element-wise loops, gathers, sorts, searches), so two blocks on two threads
use both cores of a small machine. A block function must be pure: it reads what it is handed, never a
corpus made outside the block (:class:`.runtime.BlockReadError`).

**Game views.** A view is a :class:`~.corpus.Corpus` of the games [lo, hi): the rows of those games of
the tables a build reads (slices of the corpus' loaded columns, no copy but the rebased ``g``), and the
corpus' per-game memo arrays sliced the same way, so that a seat dimension stays the corpus' (a block of
seven-seat games in a corpus with ten-seat ones still has ten seat columns). A build whose rows and
outputs are per game, in game order, gives on the views, concatenated in block order, what it gives on
the whole corpus (``tests/test_analytics_game_views.py`` pins each one that is run this way). Two gains:
a block's working set is a fraction of the whole one's (fresh memory is faulted in a block at a time, and
a block's arrays stay in the CPU caches), and blocks run on two threads. The views are independent
corpora (their own lock and memo), so a worker never touches the corpus' memo or lazy tables.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from .corpus import SEAT_ARRAY, Cached, Corpus
from .frames import death_ts, game_bounds, mafia_mask
from .intervals import pooled
from .lazy_table import LazyTable
from .metric import GameBlock, Metric, Source
from .modes import Mode
from .runtime import current_block, release_free_memory, running_block, workers

if TYPE_CHECKING:
    from .sections import Group, Scope

T = TypeVar("T")
R = TypeVar("R")


def map_blocks(fn: Callable[[T], R], blocks: Sequence[T]) -> list[R]:
    """``[fn(b) for b in blocks]``, up to :func:`.runtime.workers` blocks at a time, in block order. A
    block that maps blocks of its own (a build run on a game view) runs them in turn: the outer blocks
    already use the threads.

    A block function must read only what it is handed: while it runs (on a worker thread, or in turn on
    this one), reading a corpus made outside the block -- its memo, its tables -- raises
    :class:`.runtime.BlockReadError` at once. The caller may hold that corpus' lock while it waits for
    the blocks (a memoised build mapping blocks), so with two threads such a read would wait forever;
    the error makes the mistake the same immediate failure with one thread or many."""
    n = min(workers(), len(blocks))

    def run(b: T) -> R:
        with running_block():
            return fn(b)

    if n <= 1 or current_block() is not None:
        return [run(b) for b in blocks]
    with ThreadPoolExecutor(n, thread_name_prefix="mafiascope-block") as ex:
        out = list(ex.map(run, blocks))
    release_free_memory()  # the blocks' temporaries, freed in the workers' arenas
    return out


# ----------------------------------------------------------------------------- game views

BLOCK_ROWS = 1_000_000  # about this many rows of the largest table read per block at most
MIN_ROWS = 1_000_000  # below this many rows a build runs on the whole corpus (the views would only add overhead)

SEAT_MEMO = (SEAT_ARRAY.key("role_code"), SEAT_ARRAY.key("death_ts"))  # the seats' true roles and death times


def seat_memo(c: Corpus) -> tuple[Hashable, ...]:
    """:data:`SEAT_MEMO`, built on the corpus (the views get them sliced: a view of a block of games
    derives its Mafia mask and alive seats from the corpus' seat columns)."""
    c.seat_array("role_code"), death_ts(c)
    return SEAT_MEMO


def spans(bounds: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Consecutive game ranges [lo, hi) of about ``rows`` rows each, games never split; ``bounds``
    is the (m + 1,) row offsets of each game's rows."""
    m = len(bounds) - 1
    total = int(bounds[-1]) if m > 0 else 0
    if m <= 0:
        return []
    cuts = np.searchsorted(bounds, np.arange(1, -(-total // max(1, rows))) * rows, side="left")
    edges = [0, *sorted(set(np.clip(cuts, 0, m).tolist()) - {0, m}), m]
    return list(zip(edges[:-1], edges[1:]))


class _Columns:
    """One table's columns for the views: arrays taken once on the calling thread; a view slices them."""

    def __init__(self, df: pd.DataFrame, m: int):
        g = df["g"].to_numpy()
        self.bounds = _bounds(g, m)
        self.g = g
        self.arrays = {k: df[k].array for k in df.columns if k != "g"}
        self.order = list(df.columns)

    def frame(self, lo: int, hi: int) -> pd.DataFrame:
        a, b = int(self.bounds[lo]), int(self.bounds[hi])
        data = {k: (self.g[a:b] - self.g.dtype.type(lo)) if k == "g" else self.arrays[k][a:b] for k in self.order}
        return pd.DataFrame(data, copy=False)


def _bounds(g: np.ndarray, m: int) -> np.ndarray | None:
    """Each game's row offsets when ``g`` is in game order (None otherwise: no views)."""
    if g.dtype.kind not in "iu":
        return None
    if len(g) and (int(g[0]) < 0 or int(g[-1]) >= m or not bool(np.all(g[1:] >= g[:-1]))):
        return None
    return np.searchsorted(g, np.arange(m + 1, dtype=g.dtype)).astype(np.int64)


def map_views(c: Corpus, fn: Callable[[Corpus, int, int], R], tables: Mapping[str, Sequence[str]],
              memo: Sequence[Hashable] = (), *, rows: int | None = None, min_rows: int | None = None
              ) -> list[tuple[int, int, R]] | None:
    """``fn(view, lo, hi)`` for each block of games [lo, hi), blocks on worker threads, in block order.

    ``tables``: the columns of each table ``fn`` reads (``g`` is added); ``memo``: keys of the corpus'
    per-game memo entries ((m, ...) arrays, built by the caller) that the views get sliced. None (the
    caller builds on the whole corpus) when the largest table has fewer than ``min_rows`` rows
    (:data:`MIN_ROWS`) or a table's rows are not in game order."""
    rows = BLOCK_ROWS if rows is None else rows
    min_rows = MIN_ROWS if min_rows is None else min_rows
    if c.m < 2 or not tables or "game_view" in c.selection or max(c.n_rows(t) for t in tables) < min_rows:
        return None  # (a view is not split again)
    cols = {t: _Columns(c.cols(t, list(dict.fromkeys(["g", *cs]))), c.m) for t, cs in tables.items()}
    if any(x.bounds is None for x in cols.values()):
        return None
    sliced = {k: c.memo(k, _missing(k)) for k in memo}
    biggest = max(cols.values(), key=lambda x: int(x.bounds[-1]))
    total, w = int(biggest.bounds[-1]), workers()
    n = w * max(2, -(-total // (rows * w)))  # blocks: a multiple of the workers (none idle at the end), two each at least
    blocks = spans(biggest.bounds, max(1, -(-total // n)))
    games = {span: c.games.iloc[span[0]:span[1]].reset_index(drop=True) for span in blocks}  # on this thread

    def run(span: tuple[int, int]) -> tuple[int, int, R]:
        lo, hi = span
        view = Corpus(games[span], {t: _table(t, x.frame(lo, hi)) for t, x in cols.items()},
                      selection={"game_view": [lo, hi]})
        view.seed({k: v[lo:hi] for k, v in sliced.items()})
        return lo, hi, fn(view, lo, hi)

    return map_blocks(run, blocks)


def _table(name: str, frame: pd.DataFrame) -> LazyTable:
    return LazyTable(name, list(frame.columns), frame=frame)


def _missing(key: Hashable) -> Callable[[], np.ndarray]:
    def fail() -> np.ndarray:
        raise KeyError(f"game views: memo entry {key!r} must be built on the corpus first")

    return fail


def concat_rows(parts: list[tuple[int, int, dict[str, np.ndarray]]], game_keys: Sequence[str] = ("g",)
                ) -> dict[str, np.ndarray]:
    """Block results that are dicts of row arrays, concatenated in block order, a key at a time (each
    block's array is let go of once joined: the join holds one column twice, not every one); ``game_keys``:
    the arrays that hold a (view) game index, offset back to the corpus' games. ``parts`` is emptied."""
    keys = list(parts[0][2]) if parts else []
    out = {}
    for k in keys:
        arrays = [r.pop(k) for _, _, r in parts]
        if k in game_keys:
            arrays = [a + a.dtype.type(lo) for a, (lo, _, _) in zip(arrays, parts)]
        out[k] = np.concatenate(arrays)
        del arrays
    parts.clear()
    return out


Rows = dict[str, Any]  # a build's columns: arrays (or lists) of one length, in game order


def by_games(c: Corpus, build: Callable[[Corpus, int, int], Rows | None], reads: Mapping[str, Sequence[str]],
             per_game: Sequence[Hashable] = (), game_keys: Sequence[str] = ("g",)) -> Rows | None:
    """The rows of a build that never mixes games: ``build(corpus, lo, hi)`` on the games [lo, hi) of
    ``corpus`` (its rows in game order, ``game_keys`` holding a game index).

    On a large corpus the executor runs it on game views (a block of games at a time, the blocks on
    worker threads) and joins the blocks' rows in game order, the games offset back (lists of values
    are joined too); otherwise on the whole corpus, ``build(c, 0, c.m)``. ``reads``: the columns of each
    table the build reads; ``per_game``: keys of the corpus' per-game memo arrays the views get sliced
    (built by the caller). None when a block's build gives None."""
    parts = map_views(c, build, reads, per_game)
    if parts is None:
        return build(c, 0, c.m)
    if any(r is None for _, _, r in parts):
        return None
    parts = [p for p in parts if p[2]]  # (blocks without rows)
    if not parts:
        return {}
    if all(isinstance(v, np.ndarray) for v in parts[0][2].values()):
        return concat_rows(parts, game_keys)  # type: ignore[arg-type]
    return {k: [x for lo, _, r in parts for x in ([v + lo for v in r[k]] if k in game_keys else r[k])]
            for k in parts[0][2]}


# ----------------------------------------------------------------------------- seat-level metrics

KERNEL_ROWS = 1 << 20  # rows of a kernel's largest input per block of games (one block below this)
SEAT_SUMS = Cached("seat_sums", report=True)  # a metric's (m, seats, k) sums (small: kept for the whole report)


def seat_sums(c: Corpus, mode: Mode, metric: Metric) -> np.ndarray:
    """``metric``'s (m, seats, k) sums per (game, seat) cell: its kernel run on blocks of games (on worker
    threads when the inputs are large), each block's sums written at its games; memoised."""
    return c.memo(SEAT_SUMS.key(metric, mode), lambda: _seat_sums(c, mode, metric))


def _seat_sums(c: Corpus, mode: Mode, metric: Metric) -> np.ndarray:
    S = c.seat_array_obj("model").shape[1]
    rows: dict[Any, dict[str, np.ndarray]] = {}
    per_game: dict[Any, dict[str, np.ndarray]] = {}
    for src, cols in metric.reads.items():
        if src == "games":
            per_game[src] = {k: c.games[k].to_numpy() for k in cols}
        elif isinstance(src, Source):
            got = src.build(c, mode)
            (per_game if src.per_game else rows)[src] = {k: np.asarray(got[k]) for k in dict.fromkeys(
                [*(() if src.per_game else ("g",)), *cols])}
        else:
            df = c.cols(src, list(dict.fromkeys(["g", *cols])))
            rows[src] = {k: df[k].to_numpy() for k in df.columns}
    seat = {"role_code": c.seat_array("role_code"), "mafia": mafia_mask(c), "death_ts": death_ts(c)}
    bounds = {src: game_bounds(r["g"], c.m) for src, r in rows.items()}
    n_rows = max([len(r["g"]) for r in rows.values()], default=0)
    if any(b is None for b in bounds.values()) or n_rows < KERNEL_ROWS or c.m < 2:
        blocks = [(0, c.m)]  # rows not in game order, or too few to split
    else:
        biggest = max(bounds.values(), key=lambda b: int(b[-1]))  # type: ignore[arg-type, union-attr]
        n = workers() * -(-n_rows // (KERNEL_ROWS * workers()))  # a multiple of the workers: none idle at the end
        blocks = spans(biggest, -(-n_rows // n))  # type: ignore[arg-type]
    out = np.zeros((c.m, S, len(metric.columns)))

    def run(span: tuple[int, int]) -> None:
        lo, hi = span
        got: dict[Any, dict[str, np.ndarray]] = {src: {k: v[lo:hi] for k, v in cols.items()} for src, cols in per_game.items()}
        for src, cols in rows.items():
            a, b = (int(bounds[src][lo]), int(bounds[src][hi])) if bounds[src] is not None else (0, len(cols["g"]))
            got[src] = {k: (v[a:b] - v.dtype.type(lo) if k == "g" and lo else v[a:b]) for k, v in cols.items()}
        block = GameBlock(lo, hi, mode, S, seat["role_code"][lo:hi], seat["mafia"][lo:hi], seat["death_ts"][lo:hi],
                          got.get("games", {}), got)
        out[lo:hi] = metric.kernel(block)

    map_blocks(run, blocks)
    return out


# ----------------------------------------------------------------------------- a report's sections


def run_sections(scope: Scope, wanted: Callable[[str], bool], *, lean: bool) -> dict[str, Any]:
    """The report entries of the wanted sections (:data:`.sections.SECTIONS`, in order). Without probe logs
    a section that needs them is not built (marked absent). ``lean``: after each group of sections
    (:data:`.sections.GROUPS`) the sections' ``prime`` run, what the group memoised is let go of (but the
    values declared ``Cached(report=True)``), and the tables and columns no later section reads; memory then
    holds one group's intermediates at a time. Values are the same either way."""
    from .sections import ABSENT, GROUPS, SECTIONS  # (the sections' module reads the metrics, which run here)

    before = set(scope.c.memo_keys())
    ends = {g.sections[-1]: g for g in GROUPS}
    rep: dict[str, Any] = {}
    for sec in SECTIONS:
        if wanted(sec.key):
            if not sec.needs_probes or scope.has_probes:  # the section's intervals in one product
                rep.update(pooled(sec.build, scope.probed if sec.reads_probes else scope))
            elif sec.marked_absent:
                rep[sec.key] = dict(ABSENT)
        if lean and sec.key in ends:
            _after_group(scope, ends[sec.key], before, wanted)
    return rep


def _after_group(scope: Scope, group: Group, before: set[Any], wanted: Callable[[str], bool]) -> None:
    from .sections import SECTIONS

    for sec in SECTIONS:
        if sec.prime is not None and wanted(sec.key):
            sec.prime(scope, set(group.sections))
    for c in {id(x.c): x.c for x in (scope, scope.probed)}.values():  # (the probed games' corpus: its memo is its own)
        c.forget(*[k for k in c.memo_keys() if k not in before and not k[0].report])
        c.release(*group.releases)
        for table, cols in group.drop_columns.items():
            c.release_columns(table, [k for k in c.columns(table) if k not in cols])
        if group.probe_columns is not None:
            c.release_columns("probes", group.probe_columns)
    release_free_memory()  # the freed intermediates' pages, worker threads' arenas included
