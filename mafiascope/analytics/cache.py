"""Columnar (Parquet) cache of parsed games, one per directory that holds game directories.

Layout: ``<cache>/manifest.json`` maps each game directory name to the (size, mtime_ns)
of its ``game.jsonl`` and ``introspection.jsonl`` plus the game's audit counts;
``<cache>/<table>.parquet`` holds every cached game's rows of that table (column
``game_id`` identifies the game). Loading stats the files, re-parses only games that are
new or whose signature changed, drops vanished games, and rewrites the tables when
anything changed (incremental rebuild). ``events.text`` is only read when asked for.

Building streams: games are parsed in batches (worker processes for 16 or more games), each
batch becomes one Arrow table per table (batches.py) and one Parquet row group; the kept rows
of the previous tables are copied row group by row group first. Nothing holds every game's
rows at once; the loaded tables are read back from the files exactly as a warm load reads
them. Without a cache (``--no-cache``, an unwritable cache) the files go to a temporary
directory that is removed once they are read.

Where: ``<root>/<name>-<hash of the directory's resolved path>``, the root being the
``cache_dir`` argument, else ``$MAFIASCOPE_CACHE_DIR``, else the user's cache directory
(``$XDG_CACHE_HOME/mafiascope``, default ``~/.cache/mafiascope``). Never inside the corpus:
a corpus may be read-only, shared between checkouts, or scanned for game directories.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import os
import re
import tempfile
from collections import Counter, deque
from dataclasses import dataclass
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..cache_root import user_cache_root
from ..logs.io import GAME_FILE, PROBE_FILE
from ..logs.layers import LAYERS_DIR, MANIFEST, check_layer_name, is_in_game
from .batches import SCHEMAS, batch_tables
from .categoricals import categorical
from .load import DICT_COLUMNS, TABLES, parse_rows
from .mapped_read import read_mapped

# 7: hot dtypes (int8/int32 codes, dictionary strings) stored; 8: probes.hash is taken of
# orjson's text of the answer (same equalities, other values), so older caches are rebuilt
CODEC = "lz4"  # Parquet compression of the cache's tables (version 14)
CACHE_VERSION = 16  # 9: multiple setup/game_over audit counters; 10: social_map item confidence (sm.conf); 11: games.invalid (fault budget); 12: manifest games carry "skipped" (lines the loader skipped, for stderr warnings)
# 13: tables written batch by batch (a row group per batch of games, plain strings, no pandas metadata)
# 14: LZ4 instead of zstd: read through a map (mapped_read.py), a 10,000-game cache decodes in 0.56x the
# wall for 1.21x the bytes (bench/cache_codec.py)
# 15: the game id and numeric columns are required fields (batches.SCHEMAS): read in 0.83x the wall and CPU
# 16: players.probes_skipped (probe calls skipped for lagging, which have no probe row)


def _sig(game_dir: Path, game_stat: os.stat_result | None = None, layer: str | None = None) -> list[list[int]]:
    """(size, mtime_ns) of the game's two files ([-1, -1]: absent); ``game_stat``: game.jsonl's, already taken.
    ``layer``: the probe file is that probe layer's, and its ``layer.json`` (fault verdict) counts too."""
    out = []
    d = str(game_dir)
    names = [GAME_FILE, PROBE_FILE] if is_in_game(layer) else [GAME_FILE, os.path.join(LAYERS_DIR, str(layer), PROBE_FILE),
                                                              os.path.join(LAYERS_DIR, str(layer), MANIFEST)]  # fmt: skip
    for name in names:
        try:
            st = game_stat if game_stat is not None and name == GAME_FILE else os.stat(os.path.join(d, name))
            out.append([st.st_size, st.st_mtime_ns])
        except FileNotFoundError:
            out.append([-1, -1])
    return out


def cache_dir_for(parent: Path, cache_dir: str | Path | None = None, layer: str | None = None) -> Path:
    """The cache of the games under ``parent``: one directory per resolved corpus path (and probe layer)."""
    parent = parent.resolve()
    key = hashlib.sha1(str(parent).encode()).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", parent.name)[:40] or "root"
    root = Path(cache_dir).expanduser() if cache_dir is not None else user_cache_root()
    return root / (f"{name}-{key}" if is_in_game(layer) else f"{name}-{key}@{check_layer_name(str(layer))}")


Meta = tuple[bool, dict[str, int], str, list[str]]  # a parsed game's (ok, audit counts, game id, skipped-line notes)


def _parse_batch(paths: list[str], layer: str | None = None) -> tuple[list[Meta], dict[str, pa.Table]]:
    """Parse a batch of games into one Arrow table per table (see batches.py)."""
    paused = gc.isenabled()
    gc.disable()  # the batch's row tuples hold no cycles; the collector would rescan them all
    try:
        games = [parse_rows(p, layer=layer) for p in paths]
        return [(g.ok, dict(g.audit), g.game_id, g.skipped) for g in games], batch_tables(games)
    finally:
        if paused:
            gc.enable()


def _parse_all(paths: list[str], workers: int | None, chunk: int,
               layer: str | None = None) -> Iterator[tuple[list[Meta], dict[str, pa.Table]]]:  # fmt: skip
    """Batches of ``chunk`` parsed games in ``paths`` order (worker processes for 16 or more games)."""
    n_workers = workers if workers is not None else min(8, os.cpu_count() or 1)
    batches = [paths[i:i + chunk] for i in range(0, len(paths), chunk)]
    if n_workers > 1 and len(paths) >= 16:
        with ProcessPoolExecutor(n_workers) as ex:
            # at most two batches a worker in flight: finished batches wait for the parent's writer in
            # memory, and with unbounded submission they piled up whenever the workers ran ahead
            todo = iter(batches)
            pending = deque(ex.submit(_parse_batch, b, layer) for b in itertools.islice(todo, 2 * n_workers))
            try:
                while pending:
                    got = pending.popleft().result()
                    nxt = next(todo, None)
                    if nxt is not None:
                        pending.append(ex.submit(_parse_batch, nxt, layer))
                    yield got
            finally:
                for f in pending:
                    f.cancel()
    else:
        for b in batches:
            yield _parse_batch(b, layer)


class _Writers:
    """One streaming Parquet writer per table (a row group per batch); files replace the
    previous tables only when every table is complete."""

    def __init__(self, cpath: Path):
        self.cpath = cpath
        self.tmp: dict[str, str] = {}
        self.w: dict[str, pq.ParquetWriter] = {}
        for t in TABLES:
            fd, tmp = tempfile.mkstemp(dir=cpath, prefix=f".{t}.", suffix=".tmp")
            os.close(fd)
            self.tmp[t] = tmp
            self.w[t] = pq.ParquetWriter(tmp, SCHEMAS[t], compression=CODEC)

    def write(self, t: str, table: pa.Table) -> None:
        if table.num_rows:
            self.w[t].write_table(table)

    def commit(self, man_path: Path) -> None:
        for w in self.w.values():
            w.close()
        man_path.unlink(missing_ok=True)  # no manifest pointing at half-replaced tables
        for t, tmp in self.tmp.items():
            os.replace(tmp, self.cpath / f"{t}.parquet")

    def abort(self) -> None:
        for t, w in self.w.items():
            try:
                w.close()
            except Exception:  # noqa: BLE001 - best effort: the temporary file is removed next
                pass
            Path(self.tmp[t]).unlink(missing_ok=True)


def _copy_kept(src: Path, w: _Writers, t: str, keep: pa.Array) -> None:
    """Rows of the previous table whose game is kept, row group by row group."""
    pf = pq.ParquetFile(src)
    for i in range(pf.num_row_groups):
        rg = pf.read_row_group(i)
        w.write(t, rg.filter(pc.is_in(rg.column("game_id"), value_set=keep)))


def read_tables(cpath: Path, with_text: bool = False) -> dict[str, pd.DataFrame]:
    """The cached tables in their hot dtypes (strings of DICT_COLUMNS and game_id as categoricals)."""
    tables = {}
    for t in TABLES:
        cols = None if with_text or t != "events" else [c for c in SCHEMAS[t].names if c != "text"]
        dict_cols = DICT_COLUMNS.get(t, [])
        df = pq.read_table(cpath / f"{t}.parquet", columns=cols, read_dictionary=["game_id", *dict_cols]).to_pandas(
            split_blocks=True, self_destruct=True)
        for c in dict_cols:  # one dictionary per row group, unified in first-seen order: sort like astype does
            cats = df[c].cat.categories
            if not cats.is_monotonic_increasing:
                df[c] = df[c].cat.reorder_categories(cats.sort_values())
        tables[t] = df
    pa.default_memory_pool().release_unused()  # hand the decode buffers back (mimalloc keeps them otherwise)
    return tables


def open_table(path: Path, table: str) -> pq.ParquetFile:
    """One cached table, opened for reads of chosen columns (:func:`read_columns`). The open file
    keeps these rows readable even when a later rebuild replaces the file."""
    f = pa.OSFile(str(path))
    pf = pq.ParquetFile(f, read_dictionary=["game_id", *DICT_COLUMNS.get(table, [])])
    # the open file, for a second reader of the same bytes on another thread (a ParquetFile's reads
    # are not thread-safe; an OSFile's positioned reads are): :meth:`.lazy_table._Part.read`
    pf.mafiascope_file = f  # type: ignore[attr-defined]
    return pf


def read_columns(pf: pq.ParquetFile, table: str, columns: list[str]) -> pd.DataFrame:
    """Columns of an opened cached table in their hot dtypes, exactly as :func:`read_tables` reads them."""
    t = read_mapped(pf, columns, ["game_id", *DICT_COLUMNS.get(table, [])])
    made = {c: s for c in DICT_COLUMNS.get(table, []) if c in t.column_names and (s := categorical(t.column(c))) is not None}
    names = t.column_names
    if made:
        t = t.drop_columns(list(made))
    df = t.to_pandas(split_blocks=True, self_destruct=True)
    del t
    for c in sorted(made, key=names.index):  # back in place, left to right
        df.insert(names.index(c), c, made[c])
    for c in DICT_COLUMNS.get(table, []):
        if c in df.columns and c not in made:
            cats = df[c].cat.categories
            if not cats.is_monotonic_increasing:
                df[c] = df[c].cat.reorder_categories(cats.sort_values())
    pa.default_memory_pool().release_unused()  # hand the decode buffers back (mimalloc keeps them otherwise)
    return df


def open_warm(parent: Path, game_dirs: list[Path], cache_dir: str | Path | None = None,
              game_stats: dict[str, os.stat_result] | None = None, layer: str | None = None
              ) -> tuple[dict[str, Any], dict[str, pq.ParquetFile]] | None:
    """The manifest and opened tables of the cache of ``parent`` when it serves ``game_dirs`` as
    they are (nothing to parse or drop), else None (a load must build it first). ``game_stats``:
    the ``game.jsonl`` stats of children of ``parent`` by name, taken by the scan that found them."""
    p = _plan(parent, game_dirs, cache_dir, True, game_stats or {}, layer)
    if p.stale or p.vanished or not (p.cpath / "manifest.json").is_file():
        return None
    try:
        return p.manifest, {t: open_table(p.cpath / f"{t}.parquet", t) for t in TABLES}
    except OSError:
        return None


class CacheResult:
    def __init__(self, tables: dict[str, pd.DataFrame], manifest: dict[str, Any], cache_path: Path, n_parsed: int):
        self.tables = tables
        self.manifest = manifest
        self.cache_path = cache_path
        self.n_parsed = n_parsed


CHUNK = 32  # games per parsed batch (one row group each); memory holds a few batches, not the corpus


Progress = Callable[[int, int], None]  # (games parsed so far, games to parse), called after each batch


@dataclass
class _Plan:
    """What a load must do: the cache's manifest and which games are new/changed or gone."""

    cpath: Path
    manifest: dict[str, Any]
    wanted: dict[str, Path]
    sigs: dict[str, Any]
    stale: list[str]
    vanished: list[str]
    layer: str | None = None


def _plan(parent: Path, game_dirs: list[Path], cache_dir: str | Path | None, use_cache: bool,
          game_stats: dict[str, os.stat_result] | None = None, layer: str | None = None) -> _Plan:
    cpath = cache_dir_for(parent, cache_dir, layer)
    man_path = cpath / "manifest.json"
    manifest: dict[str, Any] = {"version": CACHE_VERSION, "games": {}}
    if use_cache and man_path.is_file():
        try:
            m = json.loads(man_path.read_text())
            if m.get("version") == CACHE_VERSION and all((cpath / f"{t}.parquet").is_file() for t in TABLES):
                manifest = m
        except (ValueError, OSError):
            pass
    wanted = {d.name: d for d in game_dirs}
    known = game_stats or {}  # (a known stat: the scan found a regular game.jsonl in parent / name)
    sigs = {name: _sig(d, known.get(name), layer) for name, d in wanted.items()}
    cached = manifest["games"]
    stale = [name for name in wanted if name not in cached or cached[name]["sig"] != sigs[name]]
    vanished = [name for name in cached if name not in known and not (parent / name / GAME_FILE).is_file()]
    return _Plan(cpath, manifest, wanted, sigs, stale, vanished, layer)


def pending_games(parent: Path, game_dirs: list[Path], *, cache_dir: str | Path | None = None, layer: str | None = None) -> int:
    """How many of ``game_dirs`` a load would parse first (0: the cache of ``parent`` serves them all)."""
    return len(_plan(parent, game_dirs, cache_dir, True, None, layer).stale)


def update_cache(parent: Path, game_dirs: list[Path], *, cache_dir: str | Path | None = None,
                 workers: int | None = None, chunk: int = CHUNK, progress: Progress | None = None, layer: str | None = None) -> int:
    """Bring the cache of ``parent`` up to date for ``game_dirs`` without reading the tables back
    (the app builds it with a progress bar, then loads it warm); the number of games parsed.
    An unwritable cache is left alone (a load then builds the tables in a temporary directory)."""
    p = _plan(parent, game_dirs, cache_dir, True, None, layer)
    if not (p.stale or p.vanished):
        return 0
    try:
        p.cpath.mkdir(parents=True, exist_ok=True)
        _rebuild(p.cpath, parent, p.wanted, p.stale, p.vanished, p.sigs, p.manifest, workers, chunk, progress, layer)
    except OSError:
        return 0
    return len(p.stale)


def load_dir_games(
    parent: Path,
    game_dirs: list[Path],
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    with_text: bool = False,
    workers: int | None = None,
    chunk: int = CHUNK,
    progress: Progress | None = None,
    layer: str | None = None,
) -> CacheResult:
    """Tables for ``game_dirs`` (all children of ``parent``), via the cache of ``parent``.

    New and changed games are parsed in batches of ``chunk`` and streamed into the Parquet
    tables (the previous tables' kept rows first); the result is then read back like a warm
    load. Without a usable cache (``use_cache=False``, unwritable) the tables go to a
    temporary directory that is removed afterwards. ``progress`` is told after each batch."""
    p = _plan(parent, game_dirs, cache_dir, use_cache, None, layer)
    cpath, manifest, wanted, sigs, stale, vanished = p.cpath, p.manifest, p.wanted, p.sigs, p.stale, p.vanished
    if not (stale or vanished):
        return CacheResult(read_tables(cpath, with_text), manifest, cpath, 0)
    if use_cache:
        try:
            cpath.mkdir(parents=True, exist_ok=True)
            _rebuild(cpath, parent, wanted, stale, vanished, sigs, manifest, workers, chunk, progress, layer)
            return CacheResult(read_tables(cpath, with_text), manifest, cpath, len(stale))
        except OSError:
            pass  # unwritable cache (or a full disk): build the tables in a temporary directory
        manifest = {"version": CACHE_VERSION, "games": {}}
        stale, vanished = list(wanted), []
    with tempfile.TemporaryDirectory(prefix="mafiascope-tables-") as tmp:
        _rebuild(Path(tmp), parent, wanted, stale, vanished, sigs, manifest, workers, chunk, progress, layer)
        tables = read_tables(Path(tmp), with_text)
    return CacheResult(tables, manifest, cpath, len(stale))


def _rebuild(cpath: Path, parent: Path, wanted: dict[str, Path], stale: list[str], vanished: list[str],
             sigs: dict[str, Any], manifest: dict[str, Any], workers: int | None, chunk: int,
             progress: Progress | None = None, layer: str | None = None) -> None:
    """Write the tables of ``cpath`` anew: the kept rows of its previous tables, then the
    ``stale`` games parsed batch by batch; ``manifest`` is updated and written last."""
    cached = manifest["games"]
    had_tables = bool(cached)
    w = _Writers(cpath)
    try:
        metas: list[Meta] = []
        batches = _parse_all([str(wanted[n]) for n in stale], workers, max(1, chunk), layer)
        first = next(batches, None)  # parsing runs while the previous rows are copied
        for name in vanished:
            cached.pop(name, None)
        if had_tables:
            stale_set = set(stale)
            keep = {v["game_id"] for n, v in cached.items() if v["ok"] and n not in stale_set}
            # a stale game's rows go, also when another kept game shared its id (as before)
            keep -= {cached[n]["game_id"] for n in stale if n in cached}
            keep_arr = pa.array(sorted(keep), type=pa.string())
            for t in TABLES:
                _copy_kept(cpath / f"{t}.parquet", w, t, keep_arr)
        for m, tables in itertools.chain([first] if first is not None else [], batches):
            metas.extend(m)
            for t in TABLES:
                w.write(t, tables[t])
            del tables
            if progress is not None:
                progress(len(metas), len(stale))
        for name, (ok, audit, gid, skipped) in zip(stale, metas):
            cached[name] = {"sig": sigs[name], "ok": ok, "game_id": gid, "audit": audit, "skipped": skipped}
        w.commit(cpath / "manifest.json")
    except BaseException:
        w.abort()
        raise
    tmp = cpath / "manifest.tmp"
    tmp.write_text(json.dumps(manifest))
    os.replace(tmp, cpath / "manifest.json")


def read_event_texts(parent: Path, cache_dir: str | Path | None = None, layer: str | None = None) -> pd.DataFrame:
    cpath = cache_dir_for(parent, cache_dir, layer)
    return pq.read_table(cpath / "events.parquet", columns=["game_id", "ev", "text"]).to_pandas()


def audits(manifest: dict[str, Any]) -> dict[str, Counter]:
    return {v["game_id"]: Counter(v.get("audit", {})) for v in manifest["games"].values()}
