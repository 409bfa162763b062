"""Parse one game directory (ours or the original MafiaScope format) into columnar tables.

Hot tables hold numbers only: seats are integer indices into the game's setup roster
(-1 = not a seat name), roles and attitudes are small codes (labels.py). Raw answer text
and questions are never kept: each probe row stores the byte offset of its JSONL line,
so :func:`read_probe_record` loads one record on demand.

Lines are read as bytes and parsed with orjson when it is installed (about twice as fast on
long answer lines); a line orjson refuses (``NaN``/``Infinity``, lone surrogates, a BOM,
integers past 64 bits, ...) is parsed again with the standard library, which was the only
parser before, so the accepted lines and their values are unchanged. Tables are built
column by column in their final dtypes.

Bad input never raises: a torn last line, a corrupt middle line, a missing
``introspection.jsonl``, unknown record kinds, answers of the wrong shape, NaN or
out-of-range confidences and unknown player names are counted in the game's audit dict.
A game without a usable ``setup`` record is returned with ``ok=False``.
"""

from __future__ import annotations

import gc
import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..logs.game_facts import event_text, game_language
from ..logs.io import GAME_FILE, PROBE_FILE, STATE_FILE, probe_records_at, scan_jsonl
from ..logs.layers import layer_invalid, probe_dir
from ..logs.schema import EVENT_MODELS
from . import labels as L
from .answer_rows import TRAITS
from .answer_rows import num as _num
from .votes import parse_vote_target
from ..logs import kinds as K
from .probe_rows import probe_rows as build_probe_rows
from .row_values import ITEM_TABLES, K_LIST, K_NONE, NO_SEQ, ItemBlock, to_count  # noqa: F401 - re-exported: other modules read them here

KNOWN_KINDS = frozenset({"setup", *EVENT_MODELS})
PUBLIC_MESSAGE_KINDS = ("intro", "day_discuss", "day_vote", "last_words", "best_move", "defence")
GAME_CALL_KINDS = ("intro", "night_mafia", "night_doctor", "day_discuss", "day_vote")


@dataclass
class GameTables:
    game_id: str
    ok: bool
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    audit: Counter = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)  # "<file>:<line>: skipping ... (why)", for the stderr warnings


MAX_SKIP_NOTES = 200  # per game; the audit counts every skipped line





@dataclass
class GameRows:
    """One parsed game as row tuples per table (columns in :data:`COLUMNS` order): the cache
    stacks the rows of many games into one columnar batch, so no per-game table is built.

    The item tables (ra, sr, sm, pp, pa) are held as one block per answer (:data:`ItemBlock`:
    the columns of an answer's rows are built once per distinct answer and shared by its repeats);
    :attr:`rows` gives their row tuples too, and :meth:`columns` every table's columns."""

    game_id: str
    ok: bool
    base: dict[str, list[tuple]] = field(default_factory=dict)  # games, players, events, votes, probes
    items: dict[str, list[ItemBlock]] = field(default_factory=dict)
    audit: Counter = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)  # as GameTables.skipped

    @property
    def rows(self) -> dict[str, list[tuple]]:
        """Every table's row tuples (the item tables' built from their blocks)."""
        out = dict(self.base)
        for t, blocks in self.items.items():
            out[t] = [(rec, *r) for rec, cols in blocks for r in zip(*cols)]
        return out

    def n_rows(self, t: str) -> int:
        if t in self.base:
            return len(self.base[t])
        return sum(len(cols[0]) for _, cols in self.items.get(t, ()))

    def columns(self, t: str) -> list[list[Any]]:
        """The table's columns (:data:`COLUMNS` order) as lists; [] for no rows."""
        if t in self.base:
            rows = self.base[t]
            return [list(c) for c in zip(*rows)] if rows else []
        blocks = self.items.get(t, ())
        if not blocks:
            return []
        recs = list(chain.from_iterable(repeat(rec, len(cols[0])) for rec, cols in blocks))
        return [recs] + [list(chain.from_iterable(cols[j] for _, cols in blocks)) for j in range(len(blocks[0][1]))]


def _read_lines(path: Path, audit: Counter, prefix: str, skipped: list[str] | None = None) -> list[tuple[int, dict[str, Any], bool]]:
    """(byte offset, object, parsed by orjson) per good line, read by :func:`mafiascope.logs.io.scan_jsonl`;
    torn last / corrupt lines are counted, not raised, and noted in ``skipped`` as
    ``<file name>:<line>: skipping ... (why)``."""
    rows, bad = scan_jsonl(path)
    for lineno, last, why in bad:
        audit[f"{prefix}.torn_last_line" if last else f"{prefix}.corrupt_line"] += 1
        if skipped is not None and len(skipped) < MAX_SKIP_NOTES:
            skipped.append(f"{path.name}:{lineno}: skipping {'torn last' if last else 'corrupt'} line ({why})")
    return rows


def _frame(table: str, rows: list[tuple], columns: list[str]) -> pd.DataFrame:
    """A table from row tuples, built column by column: numeric columns straight into their
    :data:`DTYPES`, the rest inferred by pandas as before (same dtypes and values as
    ``typed(table, pd.DataFrame(rows, columns=columns))``)."""
    if not rows:
        return typed(table, pd.DataFrame(rows, columns=columns))
    spec = DTYPES.get(table, {})
    data: dict[str, Any] = {}
    for name, col in zip(columns, zip(*rows)):
        dt = spec.get(name)
        data[name] = np.array(col, dtype=dt) if dt else pd.Series(col, dtype=object if name == "text" else None)
    return pd.DataFrame(data)


def read_probe_record(game_path: str | Path, offset: int, layer: str | None = None) -> dict[str, Any]:
    """The full introspection record (raw answer text included) at a byte offset of the game's probe
    file (``layer``: a probe layer's, mafiascope.logs.layers)."""
    d = probe_dir(game_path, layer)
    rec = probe_records_at(d, [offset]).get(offset)
    if rec is None:
        raise ValueError(f"{d / PROBE_FILE}: no probe record at byte {offset}")
    return rec


def parse_game(path: str | Path, full_decode: bool = False) -> GameTables:
    """One game's tables (wide :data:`DTYPES`), text included."""
    gr = parse_rows(path, full_decode)
    gt = GameTables(gr.game_id, gr.ok, audit=gr.audit, skipped=gr.skipped)
    if gr.ok:
        rows = gr.rows
        gt.tables = {t: _table(t, rows[t]) for t in TABLES}
    return gt


def _table(t: str, rows: list[tuple]) -> pd.DataFrame:
    if t == "games":  # one row; dtypes inferred as from a record
        return pd.DataFrame([dict(zip(COLUMNS[t], rows[0]))])
    if t == "players":
        return pd.DataFrame(rows, columns=COLUMNS[t])
    return typed(t, _frame(t, rows, COLUMNS[t]))


def parse_rows(path: str | Path, full_decode: bool = False, layer: str | None = None) -> GameRows:
    """One game as row tuples (:class:`GameRows`); never raises on bad input. ``full_decode``
    decodes compact probe records with the full decoder (same rows, slower: for the tests).
    ``layer``: the probe records of that probe layer instead of the game's own (mafiascope.logs.layers);
    a layer over its fault budget makes the game ``invalid``."""
    # parsed records hold no reference cycles: pause the cyclic collector, which would
    # otherwise rescan every live record many times over a large game
    paused = gc.isenabled()
    gc.disable()
    try:
        return _parse_game(Path(path), full_decode, layer)
    finally:
        if paused:
            gc.enable()


def _parse_game(path: Path, full_decode: bool = False, layer: str | None = None) -> GameRows:
    audit: Counter = Counter()
    skipped: list[str] = []
    lines = _read_lines(path / GAME_FILE, audit, "game", skipped)
    setup = next((o for _, o, _ in lines if o.get("kind") == K.SETUP), None)
    gid = (setup or {}).get("game_id") or path.name
    gt = GameRows(str(gid), False, audit=audit, skipped=skipped)
    if setup is None or not isinstance(setup.get("players"), list) or not setup["players"]:
        audit["game.no_setup"] += 1
        return gt
    players = [p for p in setup["players"] if isinstance(p, dict) and isinstance(p.get("name"), str)]
    names = [p["name"] for p in players]
    seat = {n: i for i, n in enumerate(names)}
    roles = [str(p.get("role", "")) for p in players]

    # ------------------------------------------------------------------ events
    ev_rows: list[tuple] = []
    votes_rows: list[tuple] = []
    death_ts = [math.inf] * len(names)
    death_round = [-1] * len(names)
    death_kind = [""] * len(names)
    game_over: dict[str, Any] | None = None
    n_setup = n_over = 0
    for ev, (_, o, _) in enumerate(lines):
        kind = o.get("kind")
        if not isinstance(kind, str):  # e.g. "kind": [] (found by tests/test_fuzz_inputs.py): not an event
            audit["game.unknown_kind"] += 1
            continue
        if kind not in KNOWN_KINDS:
            audit["game.unknown_kind"] += 1
        if kind == K.SETUP:
            n_setup += 1
            continue
        ts = _num(o.get("ts", math.nan))
        rnd = to_count(o.get("round", 0), 0)
        ms = o.get("msg_seq")
        ms = to_count(ms, NO_SEQ) if isinstance(ms, int) else NO_SEQ
        who = o.get("player")
        p = seat.get(who, -1) if isinstance(who, str) else -1
        if isinstance(who, str) and p < 0:
            audit["game.unknown_player"] += 1
        tgt = -1
        text = event_text(o)
        if kind == K.NIGHT_KILL or kind == K.DAY_ELIMINATE:
            victim = o.get("victim") if kind == K.NIGHT_KILL else o.get("eliminated")
            tgt = seat.get(victim, -1) if isinstance(victim, str) else -1
            if tgt >= 0:
                if ts < death_ts[tgt] or math.isnan(death_ts[tgt]):
                    death_ts[tgt], death_round[tgt], death_kind[tgt] = ts, rnd, kind
            else:
                audit["game.unknown_player"] += 1
        elif kind == K.GAME_OVER:
            game_over = o
            n_over += 1
        elif kind == K.VOTE_TALLY:
            vmap = o.get("votes") or {}
            if isinstance(vmap, dict):
                for voter, target in vmap.items():
                    vs, ts_ = seat.get(voter, -1), seat.get(target, -1) if isinstance(target, str) else -1
                    if vs < 0 or ts_ < 0:
                        audit["game.unknown_player"] += 1
                    votes_rows.append((ev, rnd, ts, vs, ts_))
        elif isinstance(o.get("target"), str):
            tgt = seat.get(o["target"], -1)
        elif kind == K.DAY_VOTE and isinstance(text, str):
            # original logs keep the vote target only in the tally: re-read it from the reply
            pv = parse_vote_target(text, names, None)
            tgt = seat.get(pv.target, -1) if pv.valid and pv.target else -1
        ev_rows.append((ev, str(kind), rnd, ms, ts, p, tgt, o.get("visible_to") is None,
                        text if isinstance(text, str) else None))

    # two writers on one game id leave two games in one file: flagged here, excluded by the selection
    if n_setup > 1:
        audit["game.multiple_setup"] = n_setup
    if n_over > 1:
        audit["game.multiple_game_over"] = n_over
    language = game_language(setup, (o for _, o, _ in lines))

    # ------------------------------------------------------------------ probes
    probe_path = probe_dir(path, layer) / PROBE_FILE
    has_probe_file = probe_path.is_file()
    if not has_probe_file:
        audit["probes.missing_file"] += 1
    plines = _read_lines(probe_path, audit, "probes", skipped) if has_probe_file else []
    # compact records (schema_version 3) are decoded; table lines drop out (mafiascope.logs.probe_codec)
    skipped: Counter = Counter()  # per seat: calls skipped for lagging (never asked: no probe row)
    probe_rows, items = build_probe_rows(plines, seat, audit, full_decode, skipped)

    pl_rows = []
    for i, p in enumerate(players):
        pers = p.get("personality") if isinstance(p.get("personality"), dict) else {}
        pl_rows.append(
            (i, p["name"], roles[i], L.true_role_code(roles[i]), str(p.get("model", "")), str(p.get("backend", "")),
             *(_num(pers.get(k)) for k in TRAITS), death_ts[i], death_round[i], death_kind[i], skipped.get(i, 0))
        )
    rounds = [r[2] for r in ev_rows] + [r[2] for r in probe_rows]
    game_row = (
        str(path),
        "mafiascope" if "schema_version" in setup else "original",
        str(language),
        str(setup.get("rule_set") or setup.get("game_type") or "classic"),
        ",".join(sorted({str(p.get("model", "")) for p in players})),
        len(players),
        sum(1 for r in roles if r in ("Mafia", "Don")),
        game_over is not None,
        str(game_over.get("winner", "")) if game_over else "",
        str(game_over.get("reason", "")) if game_over else "",
        (bool(game_over.get("invalid")) if game_over else False) or layer_invalid(path, layer) is not None,  # over a budget
        int(max(rounds)) if rounds else 0,
        str(setup.get("forked_from") or ""),
        bool(setup.get("feedback_to_context", False)),
        _num(setup.get("ts", math.nan)),
        has_probe_file,
        len(probe_rows),
        sum(1 for r in ev_rows if r[1] in GAME_CALL_KINDS),
        (path / STATE_FILE).is_file(),
    )
    gt.base = {"games": [game_row], "players": pl_rows, "events": ev_rows, "votes": votes_rows, "probes": probe_rows}
    gt.items = items
    gt.ok = True
    return gt

TABLES = ("games", "players", "events", "votes", "probes", "ra", "sr", "sm", "pp", "pa")
COLUMNS: dict[str, list[str]] = {
    "games": ["path", "format", "language", "rule_set", "models", "n_players", "n_mafia", "completed", "winner",
              "end_reason", "invalid", "last_round", "forked_from", "feedback_to_context", "setup_ts", "has_probe_file",
              "n_probes", "game_calls", "has_state"],
    "players": ["seat", "name", "role", "role_code", "model", "backend", *TRAITS, "death_ts", "death_round",
                "death_kind", "probes_skipped"],
    "events": ["ev", "kind", "round", "msg_seq", "ts", "player", "target", "public", "text"],
    "votes": ["ev", "round", "ts", "voter", "target"],
    "probes": ["rec", "offset", "round", "pms", "seat", "probe_seq", "probe_id", "timestamp", "phase", "parse_ok",
               "stored_kind", "eff_kind", "src", "repaired", "transport", "latency_ms", "q_chars", "a_chars",
               "hash", "tokens_prompt", "tokens_completion"],
    "ra": ["rec", "pos", "src", "tgt", "role_en", "role", "exact", "conf"],
    "sr": ["rec", "pos", "src", "tgt", "score"],
    "sm": ["rec", "pos", "src", "tgt", "att", "att_empty", "conf"],
    "pp": ["rec", "pos", "src", "tgt", *TRAITS],
    "pa": ["rec", "src", "action", "tgt"],
}


_I, _F, _B = "int64", "float64", "bool"
DTYPES: dict[str, dict[str, str]] = {
    "events": {"ev": _I, "round": _I, "msg_seq": _I, "ts": _F, "player": _I, "target": _I, "public": _B},
    "votes": {"ev": _I, "round": _I, "ts": _F, "voter": _I, "target": _I},
    "probes": {"rec": _I, "offset": _I, "round": _I, "pms": _I, "seat": _I, "probe_seq": _I, "timestamp": _F,
               "parse_ok": _B, "stored_kind": _I, "eff_kind": _I, "src": _I, "repaired": _B, "transport": _B,
               "latency_ms": _F, "q_chars": _I, "a_chars": _I, "hash": _I, "tokens_prompt": _F, "tokens_completion": _F},
    "ra": {"rec": _I, "pos": _I, "src": _I, "tgt": _I, "role_en": _I, "role": _I, "exact": _I, "conf": _F},
    "sr": {"rec": _I, "pos": _I, "src": _I, "tgt": _I, "score": _F},
    "sm": {"rec": _I, "pos": _I, "src": _I, "tgt": _I, "att": _I, "att_empty": _B, "conf": _F},
    "pp": {"rec": _I, "pos": _I, "src": _I, "tgt": _I, **{k: _F for k in TRAITS}},
    "pa": {"rec": _I, "src": _I, "tgt": _I},
}


# In-memory (hot) dtypes of a loaded corpus: seat indices and codes in int8, counters in
# int32, repeated strings as categoricals. The cache keeps the wide DTYPES above.
_I8, _I32 = "int8", "int32"
HOT_DTYPES: dict[str, dict[str, str]] = {
    "events": {"ev": _I32, "round": _I32, "msg_seq": _I32, "player": _I8, "target": _I8, "kind": "category"},
    "votes": {"ev": _I32, "round": _I32, "voter": _I8, "target": _I8},
    "probes": {"rec": _I32, "round": _I32, "pms": _I32, "seat": _I8, "probe_seq": _I32, "stored_kind": _I8,
               "eff_kind": _I8, "src": _I8, "q_chars": _I32, "a_chars": _I32, "probe_id": "category", "phase": "category"},
    "ra": {"rec": _I32, "pos": _I32, "src": _I8, "tgt": _I8, "role_en": _I8, "role": _I8, "exact": _I8},
    "sr": {"rec": _I32, "pos": _I32, "src": _I8, "tgt": _I8},
    "sm": {"rec": _I32, "pos": _I32, "src": _I8, "tgt": _I8, "att": _I8},
    "pp": {"rec": _I32, "pos": _I32, "src": _I8, "tgt": _I8},
    "pa": {"rec": _I32, "src": _I8, "tgt": _I8, "action": "category"},
}
# string columns read from the cache as dictionaries (categoricals) straight away
DICT_COLUMNS: dict[str, list[str]] = {t: [k for k, v in d.items() if v == "category"] for t, d in HOT_DTYPES.items()}


def hot(table: str, df: pd.DataFrame, categories: bool = True) -> pd.DataFrame:
    """A table in its hot dtypes (values unchanged; ``g`` int32); the cache stores them as such.
    ``categories=False`` leaves string columns as they are (per-game tables, concatenated later)."""
    want = {**DTYPES.get(table, {}), **HOT_DTYPES.get(table, {}), "g": _I32}
    if not categories:
        want = {k: v for k, v in want.items() if v != "category"}
    have = df.dtypes
    spec = {k: v for k, v in want.items() if k in have.index and str(have[k]) != v}
    return df.astype(spec) if spec else df


def typed(table: str, df: pd.DataFrame) -> pd.DataFrame:
    """Enforce the column dtypes (empty tables would otherwise come back as object/null)."""
    want = DTYPES.get(table)
    if not want:
        return df
    have = df.dtypes
    spec = {k: v for k, v in want.items() if k in have.index and str(have[k]) != v}
    return df.astype(spec) if spec else df

