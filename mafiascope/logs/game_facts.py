"""What a game is, read off its records: each question every reader asks of a game answered by one
function here, so the analytics loader, the app's game list, replay and the audit never disagree.

* :func:`event_text` -- the text an event carries (a seat's reply, the host's night result or line);
* :func:`game_language` -- the game's language, declared or, for the original's logs, read from its text;
* :func:`planned_probes` -- the probe ids the game's battery asks;
* :func:`game_index_row` -- the index row of a game directory (the app's game list, `mafiascope.logs.INDEX_COLUMNS`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from . import kinds
from .io import PROBE_FILE, STATE_FILE, LogFormatError

_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
CYRILLIC_TEXTS = 2  # texts holding Cyrillic that make an undeclared game Russian

INDEX_COLUMNS = ["game_id", "ts", "players", "player_names", "models", "language", "winner", "rounds", "events", "probed",
                 "probe_bytes", "is_branch", "forked_from", "fork_batch_id", "has_snapshots", "invalid", "invalid_reason"]  # fmt: skip


def event_text(event: Mapping[str, Any]) -> Any:
    """The text of a game.jsonl record: a seat's ``response`` for the utterance kinds, else the night result or
    the host's ``text`` (None when it has none; not necessarily a string in a hostile log)."""
    kind = kinds.of(event)  # None for a kind that is no string (hostile logs)
    if kind is not None and kind in kinds.UTTERANCE_KINDS:
        return event.get("response")
    return event.get("night_result", event.get("text"))


def declared_language(setup: Mapping[str, Any]) -> str | None:
    """The language the setup record states: its own, else its config's, else the first seat's that has one."""
    config = setup.get("config")
    players = setup.get("players")
    found = (
        setup.get("language")
        or (config.get("language") if isinstance(config, Mapping) else None)
        or next((p.get("language") for p in players or () if isinstance(p, Mapping) and p.get("language")), None)
    )
    return str(found) if found else None


def game_language(setup: Mapping[str, Any], events: Iterable[Mapping[str, Any]] = ()) -> str:
    """The game's language: the declared one (:func:`declared_language`), else ``"ru"`` when at least
    :data:`CYRILLIC_TEXTS` of its records' texts hold Cyrillic letters (the original's Russian logs state
    no language), else ``"en"``. ``events`` are read only when the setup states nothing, and only as far as needed."""
    declared = declared_language(setup)
    if declared:
        return declared
    seen = 0
    for ev in events:
        if not isinstance(ev, Mapping) or kinds.of(ev) in (None, kinds.SETUP):
            continue
        text = event_text(ev)
        if isinstance(text, str) and _CYRILLIC.search(text):
            seen += 1
            if seen >= CYRILLIC_TEXTS:
                return "ru"
    return "en"


def planned_probes(setup: Mapping[str, Any]) -> list[str]:
    """The probe ids the game's battery asks (its setup record), empty for a game played without probes."""
    battery = setup.get("probes")
    ids = battery.get("probe_ids") if isinstance(battery, Mapping) else None
    return [str(i) for i in ids] if isinstance(ids, list) else []


def game_index_row(game_dir: str | Path) -> dict[str, Any] | None:
    """One game directory as a row of the game list (:data:`INDEX_COLUMNS`), read tolerantly (torn and corrupt
    lines skipped quietly); None when it holds no readable setup. Only ``game.jsonl`` is read, plus the sizes
    of the other two files."""
    from .game_log import read_game

    gdir = Path(game_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            log = read_game(gdir, skip_corrupt=True)
        except (LogFormatError, OSError):
            return None
    setup, records = log.raw_setup, log.records
    over = next((e for e in reversed(records) if kinds.of(e) == kinds.GAME_OVER), None)
    players = [p for p in setup.get("players") or [] if isinstance(p, Mapping)]
    pfile = gdir / PROBE_FILE
    probe_bytes = pfile.stat().st_size if pfile.is_file() else 0
    return {
        "game_id": str(setup.get("game_id") or gdir.name),
        "ts": float(setup.get("ts") or 0.0),
        "players": len(players),
        "player_names": ", ".join(str(p.get("name")) for p in players),
        "models": ", ".join(sorted({str(p.get("model") or p.get("backend") or "?") for p in players})),
        "language": game_language(setup, records),
        "winner": str(over.get("winner")) if over else "Pending",
        "rounds": max((int(e.get("round") or 0) for e in [setup, *records]), default=0),
        "events": 1 + len(records),
        "probed": probe_bytes > 0 or bool(planned_probes(setup)),  # probed, also before its first answers are in
        "probe_bytes": probe_bytes,
        "is_branch": bool(setup.get("forked_from")),
        "forked_from": setup.get("forked_from"),
        "fork_batch_id": setup.get("fork_batch_id"),
        "has_snapshots": (gdir / STATE_FILE).is_file(),
        "invalid": bool(over.get("invalid")) if over else False,  # over its fault budget (game_over.invalid)
        "invalid_reason": str(over.get("invalid_reason") or "") if over else "",
    }
