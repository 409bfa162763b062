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
from pathlib import Path
from typing import Any

from ..logs.io import GAME_FILE, dumps, is_game_dir, list_game_dirs, read_jsonl
from ..logs.schema import SCHEMA_VERSION, parse_event
from .votes import parse_vote_target

ORIGINAL_FORMAT = "mafiascope-original"


def is_original_game(game_dir: str | Path) -> bool:
    for rec in read_jsonl(Path(game_dir) / GAME_FILE, skip_corrupt=True):
        if rec.get("kind") == "setup":
            return "schema_version" not in rec
    return False


def convert_game_records(records: list[dict[str, Any]], source: str = "") -> tuple[list[dict[str, Any]], dict[str, int]]:
    stats = {"votes": 0, "parsed": 0, "tally_missed": 0, "disagree": 0}
    setup = next((r for r in records if r.get("kind") == "setup"), None)
    names = [p["name"] for p in (setup or {}).get("players", []) if isinstance(p, dict) and "name" in p]
    dead: set[str] = set()
    tallies: dict[int, dict[str, str]] = {}
    for r in records:
        if r.get("kind") == "vote_tally" and isinstance(r.get("votes"), dict):
            tallies.setdefault(r.get("round", 0), {}).update(r["votes"])
    out = []
    for r in records:
        r = dict(r)
        kind = r.get("kind")
        if kind == "setup" and "schema_version" not in r:
            r["schema_version"] = SCHEMA_VERSION
            r["imported_from"] = {"format": ORIGINAL_FORMAT, "source": source}
        elif kind in ("night_kill", "day_eliminate"):
            v = r.get("victim") if kind == "night_kill" else r.get("eliminated")
            if isinstance(v, str):
                dead.add(v)
        elif kind == "day_vote" and "target" not in r:
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


def import_game(src: Path, dest: Path) -> dict[str, int]:
    dest.mkdir(parents=True, exist_ok=True)
    records = read_jsonl(src / GAME_FILE, skip_corrupt=True)
    converted, stats = convert_game_records(records, str(src))
    for r in converted:
        parse_event(r)  # validates against our schema (raises on a contract break)
    with open(dest / GAME_FILE, "w", encoding="utf-8") as fh:
        for r in converted:
            fh.write(_dumps_lossless(r) + "\n")
    for f in src.iterdir():
        if f.is_file() and f.name != GAME_FILE:
            shutil.copy2(f, dest / f.name)
    return stats


def _dumps_lossless(r: dict[str, Any]) -> str:
    try:
        return dumps(r)
    except ValueError:  # NaN/inf in a foreign record: keep it as the original wrote it
        return json.dumps(r, ensure_ascii=False, separators=(", ", ": "))


def import_corpus(src: str | Path, dest: str | Path) -> dict[str, Any]:
    src, dest = Path(src), Path(dest)
    games = [src] if is_game_dir(src) else list_game_dirs(src)
    total = {"games": 0, "votes": 0, "parsed": 0, "tally_missed": 0, "disagree": 0}
    for gd in games:
        s = import_game(gd, dest / gd.name)
        total["games"] += 1
        for k, v in s.items():
            total[k] += v
    if not is_game_dir(src):
        for f in src.iterdir():
            if f.is_file():
                shutil.copy2(f, dest / f.name)
    return total
