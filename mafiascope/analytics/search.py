"""Full-text search over a corpus: what seats said, and the reasons and plans they gave probes.

The index holds one row per text occurrence (game, step, speaker, source, probe, the
player a reason is about) pointing at a table of distinct texts; bot corpora repeat
phrases heavily, so distinct texts are far fewer than occurrences. Searching joins the
lower-cased distinct texts into one string and scans it with ``str.find`` (C speed), then
maps hits back to texts by offset: every term of the query must occur in a text
(case-insensitive substring match).

The rows are cached as Parquet in the corpus's analytics cache dir
(``cache.cache_dir_for``: the user's cache dir), with a manifest of each game's log
sizes and mtimes, so a warm search over 1,000 games re-reads nothing and a changed or new
game is re-read alone. Parquet dictionary-encodes the text column: distinct texts once.

Sources: ``utterance`` (any seat reply with text: speeches, votes, night actions, last
words), ``reason`` (every free-text field of a parsed probe answer other than a plan:
``reason``, ``summary`` ...), ``plan`` (free-text fields of a ``planned_action``-style
probe: ids containing "plan"). Original-format games are indexed the same way.
"""

from __future__ import annotations

import bisect
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..logs import LogFormatError, iter_probe_records, read_game
from ..logs.io import GAME_FILE, PROBE_FILE, list_game_dirs

INDEX_VERSION = 1
SOURCES = ("utterance", "reason", "plan")
MIN_CHARS = 3  # shorter free-text values (labels, "ok") are not indexed
LABEL_KEYS = frozenset({"player", "target", "guessed_role", "role", "attitude", "action_type", "vote", "name"})
SEP = "\x00"


@dataclass(frozen=True)
class Hit:
    game_id: str
    round: int
    msg_seq: int  # -1 = round end
    player: str  # who said it / who answered the probe
    source: str  # utterance | reason | plan
    probe_id: str | None
    about: str | None  # the player a reason is about, when the answer names one
    text: str

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class GameRows:
    """One game's occurrences; ``rows`` are (round, msg_seq, player, source, probe_id, about, text)."""

    game_id: str
    sig: tuple[tuple[int, int], ...]
    rows: list[tuple[int, int, str, str, str | None, str | None, str]] = field(default_factory=list)


def _sig(gdir: Path) -> tuple[tuple[int, int], ...]:
    out = []
    for name in (GAME_FILE, PROBE_FILE):
        try:
            st = (gdir / name).stat()
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((-1, -1))
    return tuple(out)


def _texts(value: Any, about: str | None = None) -> Iterable[tuple[str | None, str]]:
    """(about, text) for every free-text leaf of a parsed answer."""
    if isinstance(value, dict):
        who = value.get("player") if isinstance(value.get("player"), str) else about
        if isinstance(value.get("target"), str) and who is None:
            who = value["target"]
        for k, v in value.items():
            if isinstance(v, str):
                if k not in LABEL_KEYS and len(v.strip()) >= MIN_CHARS:
                    yield who, v.strip()
            elif isinstance(v, (dict, list)):
                yield from _texts(v, who)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v, about)


def read_game_rows(gdir: Path) -> GameRows:
    """Every searchable text of one game directory (ours or the original format)."""
    gid = gdir.name
    rows: list[tuple[int, int, str, str, str | None, str | None, str]] = []
    try:
        log = read_game(gdir, skip_corrupt=True)
    except (FileNotFoundError, LogFormatError):  # no game.jsonl or no setup record: only the probe log is searched
        log = None
    if log is not None:
        gid = log.game_id
        for rec in log.records:
            text = rec.get("response")
            if isinstance(text, str) and text.strip() and isinstance(rec.get("player"), str):
                rows.append((_int(rec.get("round")), _int(rec.get("msg_seq"), -1), rec["player"], "utterance", None, None, text.strip()))
    for rec in iter_probe_records(gdir):
        if rec.get("inherited"):
            continue
        parsed = rec.get("answer_parsed")
        who = rec.get("player_name")
        if parsed is None or not isinstance(who, str):
            continue
        pid = str(rec.get("probe_id") or "")
        source = "plan" if "plan" in pid else "reason"
        seen: set[tuple[str | None, str]] = set()
        for about, text in _texts(parsed):
            if (about, text) in seen:
                continue
            seen.add((about, text))
            rows.append((_int(rec.get("round")), _int(rec.get("public_msg_seq"), -1), who, source, pid or None, about, text))
    return GameRows(gid, _sig(gdir), rows)


def _int(v: Any, default: int = 0) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


class SearchIndex:
    """Occurrences as a table whose ``text`` column is categorical (distinct texts once)."""

    COLUMNS = ("game_id", "round", "msg_seq", "player", "source", "probe_id", "about", "text")

    def __init__(self, table: pd.DataFrame) -> None:
        self.table = table.reset_index(drop=True)
        text = self.table["text"]
        if not isinstance(text.dtype, pd.CategoricalDtype):
            text = text.astype("category")
            self.table["text"] = text
        self.texts: list[str] = [str(t) for t in text.cat.categories]
        self._codes = text.cat.codes.to_numpy()
        self._lower = [t.lower() for t in self.texts]
        self._hay = SEP.join(self._lower)
        self._starts = np.cumsum([0] + [len(t) + 1 for t in self._lower[:-1]]).tolist() if self._lower else []

    @classmethod
    def from_games(cls, games: Iterable[GameRows]) -> "SearchIndex":
        return cls(_frame([g for g in games]))

    def __len__(self) -> int:
        return len(self.table)

    def _matching_texts(self, term: str) -> set[int]:
        out: set[int] = set()
        hay, start, starts = self._hay, 0, self._starts
        while True:
            i = hay.find(term, start)
            if i < 0:
                return out
            tid = bisect.bisect_right(starts, i) - 1
            out.add(tid)
            start = starts[tid + 1] if tid + 1 < len(starts) else len(hay)  # one hit per text is enough

    def search(self, query: str, *, sources: Iterable[str] = SOURCES, limit: int = 200) -> tuple[list[Hit], int]:
        """Hits (in game and step order, at most ``limit``) and the total number of matches."""
        terms = [t for t in query.lower().split() if t and SEP not in t]
        if not terms or not self.texts:
            return [], 0
        ids = self._matching_texts(max(terms, key=len))
        for t in terms:
            ids = {i for i in ids if t in self._lower[i]}
        if not ids:
            return [], 0
        mask = np.isin(self._codes, np.fromiter(ids, dtype=np.int64, count=len(ids)))
        mask &= self.table["source"].isin(list(sources)).to_numpy()
        sel = self.table[mask].sort_values(["game_id", "round", "msg_seq", "player"], kind="stable")
        hits = [Hit(str(r.game_id), int(r.round), int(r.msg_seq), str(r.player), str(r.source),
                    None if pd.isna(r.probe_id) else str(r.probe_id), None if pd.isna(r.about) else str(r.about), str(r.text))
                for r in sel.head(limit).itertuples(index=False)]
        return hits, int(mask.sum())


def build_index_for(game_dirs: Iterable[str | Path], *, cache_dir: str | Path | None = None, use_cache: bool = True) -> SearchIndex:
    """One index over game directories from any number of corpora (one cache per parent directory)."""
    by_parent: dict[Path, list[Path]] = {}
    for d in game_dirs:
        d = Path(d)
        by_parent.setdefault(d.parent, []).append(d)
    parts = [build_index(parent, game_dirs=dirs, cache_dir=cache_dir, use_cache=use_cache).table for parent, dirs in by_parent.items()]
    if not parts:
        return SearchIndex(_frame([]))
    objs = {c: "object" for c in ("game_id", "player", "source", "probe_id", "about", "text")}
    return SearchIndex(_frame_dtypes(pd.concat([p.astype(objs) for p in parts], ignore_index=True)))


def _frame(games: list[GameRows]) -> pd.DataFrame:
    cols: dict[str, list[Any]] = {c: [] for c in SearchIndex.COLUMNS}
    for g in games:
        for rnd, seq, player, source, pid, about, text in g.rows:
            cols["game_id"].append(g.game_id)
            cols["round"].append(rnd)
            cols["msg_seq"].append(seq)
            cols["player"].append(player)
            cols["source"].append(source)
            cols["probe_id"].append(pid)
            cols["about"].append(about)
            cols["text"].append(text)
    df = pd.DataFrame(cols)
    for c in ("game_id", "player", "source", "probe_id", "about", "text"):
        df[c] = df[c].astype("category")
    df["round"] = df["round"].astype("int32")
    df["msg_seq"] = df["msg_seq"].astype("int32")
    return df


def _cache_paths(root: Path, cache_dir: str | Path | None) -> tuple[Path, Path]:
    from .cache import cache_dir_for

    d = cache_dir_for(root, cache_dir)
    return d / f"search-v{INDEX_VERSION}.parquet", d / f"search-v{INDEX_VERSION}.json"


def build_index(root: str | Path, *, game_dirs: list[Path] | None = None, cache_dir: str | Path | None = None,
                use_cache: bool = True) -> SearchIndex:
    """The search index of the games under ``root`` (or of ``game_dirs``), re-reading only changed games."""
    root = Path(root)
    dirs = game_dirs if game_dirs is not None else list_game_dirs(root)
    table_path, manifest_path = _cache_paths(root, cache_dir) if use_cache else (None, None)
    manifest: dict[str, Any] = {}
    table: pd.DataFrame | None = None
    if table_path is not None and manifest_path is not None and table_path.is_file() and manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            table = pq.read_table(table_path).to_pandas()
        except (OSError, ValueError, pa.ArrowException):
            manifest, table = {}, None
    if not isinstance(manifest.get("games"), dict) or manifest.get("version") != INDEX_VERSION or table is None:
        manifest, table = {"version": INDEX_VERSION, "games": {}}, None
    known: dict[str, Any] = manifest["games"]
    keep_ids: list[str] = []
    fresh: list[GameRows] = []
    games_now: dict[str, Any] = {}
    for d in dirs:
        key, sig = str(d.resolve()), [list(x) for x in _sig(d)]
        entry = known.get(key)
        if entry is not None and entry.get("sig") == sig:
            keep_ids.append(entry["game_id"])
            games_now[key] = entry
        else:
            g = read_game_rows(d)
            fresh.append(g)
            games_now[key] = {"sig": sig, "game_id": g.game_id}
    parts = []
    if table is not None and keep_ids:
        parts.append(table[table["game_id"].isin(keep_ids)].astype({"text": "object", "game_id": "object", "player": "object",
                                                                      "source": "object", "probe_id": "object", "about": "object"}))
    if fresh:
        parts.append(_frame(fresh).astype({c: "object" for c in ("game_id", "player", "source", "probe_id", "about", "text")}))
    full = pd.concat(parts, ignore_index=True) if parts else _frame([])
    full = _frame_dtypes(full)
    if table_path is not None and manifest_path is not None and (fresh or set(games_now) != set(known)):
        _write_cache(table_path, manifest_path, full, {"version": INDEX_VERSION, "games": games_now})
    return SearchIndex(full)


def _frame_dtypes(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for c in ("game_id", "player", "source", "probe_id", "about", "text"):
        df[c] = df[c].astype("category")
    df["round"] = df["round"].astype("int32")
    df["msg_seq"] = df["msg_seq"].astype("int32")
    return df


def _write_cache(table_path: Path, manifest_path: Path, table: pd.DataFrame, manifest: dict[str, Any]) -> None:
    try:
        table_path.parent.mkdir(parents=True, exist_ok=True)
        for path, write in ((table_path, lambda p: pq.write_table(pa.Table.from_pandas(table, preserve_index=False), p)),
                            (manifest_path, lambda p: Path(p).write_text(json.dumps(manifest), encoding="utf-8"))):
            fd, tmp = tempfile.mkstemp(dir=table_path.parent, prefix=".search-", suffix=".tmp")
            os.close(fd)
            write(tmp)
            os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time
