"""Columnar (Parquet) cache of parsed games, one per directory that holds game directories.

Layout: ``<cache>/manifest.json`` maps each game directory name to the (size, mtime_ns)
of its ``game.jsonl`` and ``introspection.jsonl`` plus the game's audit counts;
``<cache>/<table>.parquet`` holds every cached game's rows of that table (column
``game_id`` identifies the game). Loading stats the files, re-parses only games that are
new or whose signature changed, drops vanished games, and rewrites the tables when
anything changed (incremental rebuild). ``events.text`` is only read when asked for.

Where: ``<root>/<name>-<hash of the directory's resolved path>``, the root being the
``cache_dir`` argument, else ``$MAFIASCOPE_CACHE_DIR``, else the user's cache directory
(``$XDG_CACHE_HOME/mafiascope``, default ``~/.cache/mafiascope``). Never inside the corpus:
a corpus may be read-only, shared between checkouts, or scanned for game directories.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..logs.io import GAME_FILE, PROBE_FILE
from .load import DICT_COLUMNS, TABLES, hot, parse_game

# 7: hot dtypes (int8/int32 codes, dictionary strings) stored; 8: probes.hash is taken of
# orjson's text of the answer (same equalities, other values), so older caches are rebuilt
CACHE_VERSION = 12  # 9: multiple setup/game_over audit counters; 10: social_map item confidence (sm.conf); 11: games.invalid (fault budget); 12: manifest games carry "skipped" (lines the loader skipped, for stderr warnings)
ENV_CACHE_DIR = "MAFIASCOPE_CACHE_DIR"


def _sig(game_dir: Path) -> list[list[int]]:
    out = []
    for name in (GAME_FILE, PROBE_FILE):
        try:
            st = (game_dir / name).stat()
            out.append([st.st_size, st.st_mtime_ns])
        except FileNotFoundError:
            out.append([-1, -1])
    return out


def user_cache_root() -> Path:
    """``$MAFIASCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/mafiascope``, else ``~/.cache/mafiascope``."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "mafiascope"


def cache_dir_for(parent: Path, cache_dir: str | Path | None = None) -> Path:
    """The cache of the games under ``parent``: one directory per resolved corpus path."""
    parent = parent.resolve()
    key = hashlib.sha1(str(parent).encode()).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", parent.name)[:40] or "root"
    root = Path(cache_dir).expanduser() if cache_dir is not None else user_cache_root()
    return root / f"{name}-{key}"


def _parse_one(path: str) -> tuple[str, bool, dict[str, pd.DataFrame], dict[str, int], str, list[str]]:
    gt = parse_game(path)
    # compact integer dtypes already here: smaller pickles from the workers, and the parent
    # holds a third of the memory until the games are concatenated
    tables = {t: hot(t, df, categories=False) for t, df in gt.tables.items()}
    return path, gt.ok, tables, dict(gt.audit), gt.game_id, gt.skipped


def _parse_all(paths: list[str], workers: int | None) -> Iterator[tuple[str, bool, dict[str, pd.DataFrame], dict[str, int], str, list[str]]]:
    """Parsed games in ``paths`` order, one at a time (worker processes for 16 or more games)."""
    n_workers = workers if workers is not None else min(8, os.cpu_count() or 1)
    if n_workers > 1 and len(paths) >= 16:
        with ProcessPoolExecutor(n_workers) as ex:
            yield from ex.map(_parse_one, paths, chunksize=8)
    else:
        for p in paths:
            yield _parse_one(p)


def _stack(parts: list[tuple[str, pd.DataFrame]]) -> pd.DataFrame | None:
    """Concatenate (game id, table) parts that have rows, with a leading ``game_id`` column
    built once (inserting it into each game's table cost several ms a game)."""
    parts = [(g, df) for g, df in parts if len(df)]
    if not parts:
        return None
    df = pd.concat([d for _, d in parts], ignore_index=True) if len(parts) > 1 else parts[0][1].reset_index(drop=True)
    ids = np.repeat(np.array([g for g, _ in parts], dtype=object), [len(d) for _, d in parts])
    df.insert(0, "game_id", pd.Series(ids, dtype=object).astype(str))
    return df


def _write_atomic(table: pa.Table, dest: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=dest.parent, suffix=".tmp")
    os.close(fd)
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, dest)


class CacheResult:
    def __init__(self, tables: dict[str, pd.DataFrame], manifest: dict[str, Any], cache_path: Path, n_parsed: int):
        self.tables = tables
        self.manifest = manifest
        self.cache_path = cache_path
        self.n_parsed = n_parsed


def load_dir_games(
    parent: Path,
    game_dirs: list[Path],
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    with_text: bool = False,
    workers: int | None = None,
) -> CacheResult:
    """Tables for ``game_dirs`` (all children of ``parent``), via the cache of ``parent``."""
    cpath = cache_dir_for(parent, cache_dir)
    man_path = cpath / "manifest.json"
    manifest: dict[str, Any] = {"version": CACHE_VERSION, "games": {}}
    if use_cache and man_path.is_file():
        try:
            m = json.loads(man_path.read_text())
            if m.get("version") == CACHE_VERSION and all((cpath / f"{t}.parquet").is_file() for t in TABLES):
                manifest = m
        except (ValueError, OSError):
            pass
    cached = manifest["games"]
    wanted = {d.name: d for d in game_dirs}
    sigs = {name: _sig(d) for name, d in wanted.items()}
    stale = [name for name in wanted if name not in cached or cached[name]["sig"] != sigs[name]]
    vanished = [name for name in cached if not (parent / name / GAME_FILE).is_file()]

    old: dict[str, pd.DataFrame] = {}
    if cached and (stale or vanished or not use_cache):
        old = {t: pq.read_table(cpath / f"{t}.parquet").to_pandas() for t in TABLES}
    new_parts: dict[str, list[tuple[str, pd.DataFrame]]] = {t: [] for t in TABLES}
    if stale:
        for (p, ok, tables, audit, gid, skipped), name in zip(_parse_all([str(wanted[n]) for n in stale], workers), stale):
            cached[name] = {"sig": sigs[name], "ok": ok, "game_id": gid, "audit": audit, "skipped": skipped}
            if ok:
                for t in TABLES:
                    new_parts[t].append((gid, tables[t]))
    for name in vanished:
        cached.pop(name, None)
    changed = bool(stale or vanished)
    if changed:
        drop_ids = {cached[n]["game_id"] for n in stale if n in cached} | set()
        out: dict[str, pd.DataFrame] = {}
        keep_ids = {v["game_id"] for v in cached.values() if v["ok"]}
        for t in TABLES:
            parts = []
            if t in old and len(old[t]):
                o = old[t]
                o = o[o["game_id"].isin(keep_ids - drop_ids)]
                parts.append(o)
            fresh = new_parts.pop(t)
            old.pop(t, None)
            new = _stack(fresh)
            if new is not None:
                parts.append(new)
            nonempty = [p for p in parts if len(p)]
            if nonempty:
                df = pd.concat(nonempty, ignore_index=True) if len(nonempty) > 1 else nonempty[0]
            elif parts:
                df = parts[0]
            elif fresh:  # no rows anywhere: the first game's empty table keeps the column dtypes
                df = fresh[0][1]
                df.insert(0, "game_id", fresh[0][0])
            else:
                df = pd.DataFrame()
            del parts, nonempty, fresh, new  # free each game's frames before the next table
            if "game_id" in df.columns:
                df["game_id"] = df["game_id"].astype(str)
            out[t] = df
        if use_cache:
            try:
                cpath.mkdir(parents=True, exist_ok=True)
                for t in TABLES:
                    out[t] = hot(t, out[t])
                    _write_atomic(pa.Table.from_pandas(out[t], preserve_index=False), cpath / f"{t}.parquet")
                tmp = man_path.with_suffix(".tmp")
                tmp.write_text(json.dumps(manifest))
                os.replace(tmp, man_path)
            except OSError:
                pass  # unwritable cache: still return the parsed tables
        if not with_text:
            out["events"] = out["events"].drop(columns=["text"], errors="ignore")
        tables = out
    else:
        tables = {}
        for t in TABLES:
            cols = None
            if t == "events" and not with_text:
                schema = pq.read_schema(cpath / "events.parquet")
                cols = [c for c in schema.names if c != "text"]
            tables[t] = pq.read_table(cpath / f"{t}.parquet", columns=cols,
                                      read_dictionary=["game_id", *DICT_COLUMNS.get(t, [])]).to_pandas(
                split_blocks=True, self_destruct=True)
        pa.default_memory_pool().release_unused()  # hand the decode buffers back (mimalloc keeps them otherwise)
    return CacheResult(tables, manifest, cpath, len(stale))


def read_event_texts(parent: Path, cache_dir: str | Path | None = None) -> pd.DataFrame:
    cpath = cache_dir_for(parent, cache_dir)
    return pq.read_table(cpath / "events.parquet", columns=["game_id", "ev", "text"]).to_pandas()


def audits(manifest: dict[str, Any]) -> dict[str, Counter]:
    return {v["game_id"]: Counter(v.get("audit", {})) for v in manifest["games"].values()}
