"""The original MafiaScope log format: detection and lossless import.

Our schema uses the original's field names, so the loader reads original directories
directly (the app can open them as they are). :func:`import_corpus` converts a directory
of original games into our layout losslessly:

* every original record and field is kept unchanged (``introspection.jsonl``,
  ``state.jsonl`` and other files are copied byte for byte);
* the setup record gains ``schema_version`` (1) and ``imported_from`` (source format and path);
* each ``day_vote`` reply gains ``action="vote"``, ``target``, ``target_valid`` and
  ``parse_note`` as read by our vote parser, beside the original tally (which stays in
  ``vote_tally.votes``); ``tally_target`` records what the original tally said, so
  disagreements (e.g. Markdown-bold votes the original missed) are visible.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

from ..logs import kinds as K
from ..logs.io import GAME_FILE, dumps, is_game_dir, list_game_dirs, read_jsonl
from ..logs.paths import UnsafePathError, game_dir, inside
from ..logs.schema import SCHEMA_VERSION, parse_event
from .votes import parse_vote_target

ORIGINAL_FORMAT = "mafiascope-original"


def is_original_game(game_dir: str | Path) -> bool:
    for rec in read_jsonl(Path(game_dir) / GAME_FILE, skip_corrupt=True):
        if K.of(rec) == K.SETUP:
            return "schema_version" not in rec
    return False


def convert_game_records(records: list[dict[str, Any]], source: str = "") -> tuple[list[dict[str, Any]], dict[str, int]]:
    stats = {"votes": 0, "parsed": 0, "tally_missed": 0, "disagree": 0}
    setup = next((r for r in records if K.of(r) == K.SETUP), None)
    names = [p["name"] for p in (setup or {}).get("players", []) if isinstance(p, dict) and "name" in p]
    dead: set[str] = set()
    tallies: dict[int, dict[str, str]] = {}
    for r in records:
        if K.of(r) == K.VOTE_TALLY and isinstance(r.get("votes"), dict):
            tallies.setdefault(r.get("round", 0), {}).update(r["votes"])
    out = []
    for r in records:
        r = dict(r)
        kind = K.of(r)
        if kind == K.SETUP and "schema_version" not in r:
            r["schema_version"] = SCHEMA_VERSION
            r["imported_from"] = {"format": ORIGINAL_FORMAT, "source": source}
        elif kind in (K.NIGHT_KILL, K.DAY_ELIMINATE):
            v = r.get("victim") if kind == K.NIGHT_KILL else r.get("eliminated")
            if isinstance(v, str):
                dead.add(v)
        elif kind == K.DAY_VOTE and "target" not in r:
            alive = [n for n in names if n not in dead]
            pv = parse_vote_target(r.get("response") or "", alive)
            stats["votes"] += 1
            r["action"] = "vote"
            r["target"] = pv.target
            r["target_valid"] = pv.valid
            r["parse_note"] = pv.note
            tt = tallies.get(r.get("round", 0), {}).get(r.get("player"))
            r["tally_target"] = tt
            if pv.valid:
                stats["parsed"] += 1
                if tt is None:
                    stats["tally_missed"] += 1
                elif tt != pv.target:
                    stats["disagree"] += 1
        out.append(r)
    return out, stats


class SymlinkSkipped(UserWarning):
    """A symlink in an imported corpus was skipped: its target is never read or copied."""


def _regular_files(d: Path) -> list[Path]:
    """The regular files of ``d`` (not following symlinks; each skipped symlink is warned about)."""
    out = []
    for f in sorted(d.iterdir()):
        if f.is_symlink():
            warnings.warn(f"{f}: skipping a symlink (not followed)", SymlinkSkipped, stacklevel=2)
        elif f.is_file():
            out.append(f)
    return out


def import_game(src: Path, dest: Path, files: list[Path] | None = None) -> dict[str, int]:
    """Convert one game into ``dest`` (a directory checked by :func:`plan_import`)."""
    dest.mkdir(parents=True, exist_ok=True)
    records = read_jsonl(src / GAME_FILE, skip_corrupt=True)
    converted, stats = convert_game_records(records, str(src))
    for r in converted:
        parse_event(r)  # validates against our schema (raises on a contract break)
    with open(dest / GAME_FILE, "w", encoding="utf-8") as fh:
        for r in converted:
            fh.write(_dumps_lossless(r) + "\n")
    for f in _regular_files(src) if files is None else files:
        if f.name != GAME_FILE:
            shutil.copy2(f, dest / f.name, follow_symlinks=False)
    return stats


def plan_import(src: Path, dest: Path) -> tuple[list[tuple[Path, Path, list[Path]]], list[Path]]:
    """(source game, destination game dir, its files) per game and the top-level files to copy.

    Symlinks in the source (a game directory, a file in one, a top-level file) are skipped with a
    :class:`SymlinkSkipped` warning. A destination that would leave ``dest`` or pass through a
    symlink, or a source directory name that is not a valid game id, raises
    :class:`~mafiascope.logs.paths.UnsafePathError` / ValueError before anything is written."""
    games: list[tuple[Path, Path, list[Path]]] = []
    for gd in [src] if is_game_dir(src) else list_game_dirs(src):
        if gd != src:
            try:
                inside(src, gd)
            except UnsafePathError as exc:
                warnings.warn(f"{exc}; game skipped", SymlinkSkipped, stacklevel=2)
                continue
        files = _regular_files(gd)
        if gd / GAME_FILE not in files:
            continue  # its game.jsonl is a symlink: warned about above
        target = game_dir(dest, gd.name)
        for f in files:
            inside(dest, target / f.name)
        games.append((gd, target, files))
    top = [] if is_game_dir(src) else _regular_files(src)
    for f in top:
        inside(dest, dest / f.name)
    return games, top


def _dumps_lossless(r: dict[str, Any]) -> str:
    try:
        return dumps(r)
    except ValueError:  # NaN/inf in a foreign record: keep it as the original wrote it
        return json.dumps(r, ensure_ascii=False, separators=(", ", ": "))


def import_corpus(src: str | Path, dest: str | Path) -> dict[str, Any]:
    src, dest = Path(src), Path(dest)
    games, top = plan_import(src, dest)  # every destination is checked before anything is written
    total = {"games": 0, "votes": 0, "parsed": 0, "tally_missed": 0, "disagree": 0}
    for gd, target, files in games:
        s = import_game(gd, target, files)
        total["games"] += 1
        for k, v in s.items():
            total[k] += v
    if top:
        dest.mkdir(parents=True, exist_ok=True)
    for f in top:
        shutil.copy2(f, dest / f.name, follow_symlinks=False)
    return total
