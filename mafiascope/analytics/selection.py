"""What a corpus load selects and leaves out, and why: manifests of game ids, which copy of a game id
found twice is kept, games written by two writers, and the selection's account printed by every front
end (docs/report_schema.md, ``audit.selection``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..logs.io import loads_line


def read_manifest(path: str | Path) -> list[str]:
    text = Path(path).read_text(encoding="utf-8")
    try:
        obj = loads_line(text)
    except ValueError:
        return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if isinstance(obj, dict):
        obj = obj.get("game_ids", [])
    return [str(x) for x in obj]


DUPLICATE = "duplicate_game_id"  # a copy of a game whose id a folder sorting earlier holds: that copy is kept
DUPLICATE_IN_FOLDER = "duplicate_game_id_in_folder"  # one id in two directories of one folder: every copy left out


class GameCopies:
    """Which copy of a game id a load keeps. Folders are read in sorted order: the first folder holding an id
    keeps it and a later folder's copy is left out (its rows would be counted a second time under the same
    id). An id held by two directories of one folder is left out altogether: that folder's cache keys rows
    by game id, so the two copies' rows cannot be told apart. Every copy left out is counted and listed."""

    def __init__(self) -> None:
        self.kept: dict[str, str] = {}  # game id -> the directory kept
        self.dropped: dict[str, list[str]] = {}  # game id -> later folders' copies left out
        self.ambiguous: dict[str, list[str]] = {}  # game id -> the directories of one folder sharing it

    def keep(self, parent: Path, dir_ids: dict[str, str]) -> set[str]:
        """The ids of one folder's parsed games (directory name -> game id) whose rows the load reads."""
        by_id: dict[str, list[str]] = {}
        for name, gid in sorted(dir_ids.items()):
            by_id.setdefault(str(gid), []).append(str(parent / name))
        ids = set()
        for gid, paths in by_id.items():
            if len(paths) > 1 or gid in self.ambiguous:
                self.ambiguous.setdefault(gid, []).extend(paths)
                if gid in self.kept:  # an earlier folder's single copy is no longer the only one: left out too
                    self.ambiguous[gid].insert(0, self.kept.pop(gid))
                    self.ambiguous[gid][1:1] = self.dropped.pop(gid, [])
            elif gid in self.kept:
                self.dropped.setdefault(gid, []).extend(paths)
            else:
                self.kept[gid] = paths[0]
                ids.add(gid)
        return ids

    def settle(self, kept_ids: list[set[str]]) -> None:
        """Take the ids found twice in one folder out of the folders' kept ids (an earlier folder kept one
        before the later folder's two copies were seen)."""
        for ids in kept_ids:
            ids -= set(self.ambiguous)

    def excluded(self) -> dict[str, int]:
        """Copies left out per reason (the selection's ``excluded`` counts)."""
        return {DUPLICATE: sum(len(v) for v in self.dropped.values()),
                DUPLICATE_IN_FOLDER: sum(len(v) for v in self.ambiguous.values())}

    def n_found(self) -> int:
        """Parsed game directories, every copy counted."""
        return len(self.kept) + sum(self.excluded().values())

    def listed(self) -> list[dict[str, Any]]:
        """``[{game_id, kept, left_out}]``: every id found more than once (``kept`` None: no copy kept)."""
        out = [{"game_id": gid, "kept": self.kept[gid], "left_out": paths} for gid, paths in self.dropped.items()]
        out += [{"game_id": gid, "kept": None, "left_out": paths} for gid, paths in self.ambiguous.items()]
        return sorted(out, key=lambda d: d["game_id"])


DOUBLED = "multiple_setup_or_game_over"  # the selection's exclusion reason for a game written by two writers


def doubled_games(audit: dict[str, Counter]) -> list[dict[str, Any]]:
    """Games whose game.jsonl holds more than one setup or game_over record (two writers on one id):
    ``[{"game_id", "setup", "game_over"}]`` with the record counts (None: at most one). Their events
    would be counted twice, so the selection excludes them."""
    out = []
    for gid, a in sorted(audit.items()):
        n_setup, n_over = a.get("game.multiple_setup"), a.get("game.multiple_game_over")
        if n_setup or n_over:
            out.append({"game_id": gid, "setup": n_setup or None, "game_over": n_over or None})
    return out


def selection_record(sources: Any, copies: GameCopies, n_selected: int, excluded: Counter, filters: dict[str, Any],
                     audit: dict[str, Counter], doubled: list[dict[str, Any]]) -> dict[str, Any]:
    """A load's ``audit.selection`` (docs/report_schema.md): what was found, kept and left out, and why."""
    return {
        "sources": [str(s) for s in (sources if isinstance(sources, list) else [sources])],
        "n_found": copies.n_found(),
        "n_selected": n_selected,
        "excluded": dict(excluded),
        "filters": filters,
        "unparseable_games": sorted(k for k, v in audit.items() if v.get("game.no_setup")),
        "doubled_games": doubled,
        "duplicate_games": copies.listed(),
    }


# why a game was left out, as every front end prints it: (noun for one, for several, what counts them again)
REASONS: dict[str, tuple[str, str, str]] = {
    DUPLICATE: ("copy of a game id an earlier folder holds", "copies of game ids earlier folders hold",
                "the earlier folder's copy is counted"),
    DUPLICATE_IN_FOLDER: ("copy of a game id held by two directories of one folder",
                          "copies of game ids held by two directories of one folder", "no copy is counted"),
    DOUBLED: ("game written by two writers", "games written by two writers", "more than one setup or game_over"),
    "not_in_manifest": ("game not in the manifest", "games not in the manifest", "--corpus"),
    "fork": ("fork", "forks", "--include-forks counts them"),
    "invalid": ("game over its fault budget", "games over their fault budget", "--include-invalid counts them"),
    "no_probes": ("game without probe logs", "games without probe logs", "the original's selection, compat mode"),
    "language": ("game in another language", "games in other languages", "--language"),
    "model": ("game without the selected model", "games without the selected model", "--model / --games-with-model"),
    "rule_set": ("game of another rule set", "games of other rule sets", "--rule-set"),
    "incomplete": ("game that did not finish", "games that did not finish", "--completed-only"),
}


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def reason_text(why: str, n: int | None = None) -> str:
    """Why games were left out, in words, with what counts them again: ``fork (--include-forks counts them)``;
    with ``n``, counted: ``512 forks (--include-forks counts them)``."""
    one, many, note = REASONS.get(why, (why.replace("_", " "), why.replace("_", " "), ""))
    head = one if n is None else _count(int(n), one, many)
    return head + (f" ({note})" if note else "")


def selection_head(sel: dict[str, Any], n_games: int, n_probed: int | None = None) -> str:
    """Games found and analysed and, in a corpus mixing probed and transcript-only games, which sections count
    which (``n_probed``: the analysed games with probe logs)."""
    head = f"{_count(int(sel.get('n_found', n_games)), 'game', 'games')} found, {n_games:,} analysed"
    if n_probed is not None and 0 < n_probed < n_games:
        head += (f" ({n_probed:,} with probe logs, counted by the probe-based sections; {n_games - n_probed:,} "
                 "transcript-only, counted by outcomes, votes and the per-model outcome and vote figures)")
    return head + "."


def selection_lines(sel: dict[str, Any], n_games: int, n_probed: int | None = None) -> list[str]:
    """What a report's games are, in words (the text report and compare): :func:`selection_head`, each reason
    games were left out with its count, ids not found, unreadable games and models left out."""
    excluded = sel.get("excluded") or {}
    left = [reason_text(why, n) for why, n in excluded.items() if n and why != "manifest_ids_not_found"]
    out = ["Selection: " + selection_head(sel, n_games, n_probed), "Left out: " + ("; ".join(left) if left else "none") + "."]
    if excluded.get("manifest_ids_not_found"):
        out.append(f"Manifest ids not found: {int(excluded['manifest_ids_not_found']):,}.")
    if sel.get("unparseable_games"):
        out.append(f"Not readable (no usable setup record): {_count(len(sel['unparseable_games']), 'game', 'games')}.")
    if sel.get("models_left_out"):
        out.append("Models left out of the per-model figures (--min-games): "
                   + ", ".join(f"{m} ({g} games)" for m, g in sel["models_left_out"].items()) + ".")
    return out
