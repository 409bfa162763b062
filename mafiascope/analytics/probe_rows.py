"""The probes table's rows and the item tables' blocks of one game's probe file, in one pass
(the loader's :func:`~mafiascope.analytics.load.parse_rows` calls :func:`probe_rows`)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from ..logs.probe_codec import ProbeDecodeError, ProbeDecoder
from ..logs.probe_scan import ProbeScanner, Scanned
from .answer_rows import TABLE_OF, answer_rows
from .answer_rows import num as _num
from .answers import extract_json, is_transport_error
from .row_values import INT_LIMIT, ITEM_TABLES, NO_SEQ, ItemBlock, digest, kind_code, stable_hash, to_int


class _FullDecode:
    """The full decoder behind the scanner's :meth:`feed` (every field rebuilt; the tests compare the two)."""

    def __init__(self) -> None:
        self.dec = ProbeDecoder()

    def feed(self, line: dict[str, Any], exact: bool) -> Scanned | None:
        rec = self.dec.feed(line)
        if rec is None:
            return None
        q, raw = rec.get("question"), rec.get("answer_raw")
        return Scanned(rec, len(q) if isinstance(q, str) else 0, len(raw) if isinstance(raw, str) else 0, None)


StepFacts = tuple[dict[str, Any], int, int, float, str]  # (step row, round, public_msg_seq, timestamp, phase)


def _step_facts(row: dict[str, Any]) -> StepFacts:
    ts = _num(row["timestamp"])
    return row, to_int(row["round"], 0), to_int(row["public_msg_seq"], NO_SEQ), math.inf if math.isnan(ts) else ts, str(row["phase"] or "")


def probe_rows(lines: list[tuple[int, dict[str, Any], bool]], seat: dict[str, int], audit: Counter,
                full_decode: bool, skipped: Counter | None = None) -> tuple[list[tuple], dict[str, list[ItemBlock]]]:
    """The probes table's rows and the item tables' blocks (ra, sr, sm, pp, pa) of a probe file's
    lines, in one pass: each line decoded by :class:`~mafiascope.logs.probe_scan.ProbeScanner` (the
    loader's fields only; table lines drop out, undecodable ones are counted), or with ``full_decode``
    by the full decoder, and its row built straight away.

    What depends only on a record's step (round, message, time, phase) is computed once per step
    row, and what depends only on a stored answer value (its hash and kind, its item rows and audit
    counts) once per distinct (probe, value) in the game: bots repeat ~45% of their answers."""
    probe_rows: list[tuple] = []
    append = probe_rows.append
    items: dict[str, list[ItemBlock]] = {t: [] for t in ITEM_TABLES}
    memo: dict[tuple[str, bytes], tuple[int, int, str | None, tuple[Any, ...], Counter]] = {}
    steps: dict[int, StepFacts] = {}  # id(step row) -> its facts (the row is held in them: its id is never reused)
    feed = _FullDecode().feed if full_decode else ProbeScanner().feed
    for off, o, exact in lines:
        try:
            got = feed(o, exact)
        except ProbeDecodeError:
            audit["probes.undecodable"] += 1
            continue
        if got is None:  # a table line
            continue
        if got.__class__ is not tuple:  # a record dict (probe_scan.Scanned)
            _record_row(len(probe_rows), off, exact, got, seat, audit, probe_rows, items, memo, skipped)
            continue
        # a compact record's fields as one flat tuple (probe_scan.Fast's order), no record dict
        row, who, pid, probe_seq, stored, raw, parse_ok, repaired_flag, error, latency, tp, tc, q_chars, a_chars, parsed_json = got
        st = steps.get(id(row))
        if st is None:
            st = steps[id(row)] = _step_facts(row)
        s = seat.get(who, -1) if who.__class__ is str else -1
        if s < 0:
            audit["probes.unknown_prober"] += 1
        if pid.__class__ is not str:
            pid = ""
        if parsed_json is None or (stored is None and raw.__class__ is str):  # parsed from raw text: the general rule
            _row(len(probe_rows), off, exact, st, s, pid, probe_seq, stored, raw, bool(parse_ok), bool(repaired_flag), error,
                 latency, tp, tc, q_chars, a_chars, seat, audit, probe_rows, items)  # fmt: skip
            continue
        hit = memo.get((pid, parsed_json))
        if hit is None:
            hit = memo[(pid, parsed_json)] = _memo_entry(pid, stored, parsed_json, seat)
        stored_hash, kind, table, cols, delta = hit
        rec = len(probe_rows)
        # to_int's and is_transport_error's rules in line (no call a record for the usual values)
        seq = probe_seq if probe_seq.__class__ is int and -INT_LIMIT <= probe_seq <= INT_LIMIT else to_int(probe_seq, 0)
        append((rec, off, st[1], st[2], s, seq, pid, st[3], st[4], bool(parse_ok), kind, kind, 0, bool(repaired_flag),
                (isinstance(raw, str) and raw.startswith("ERROR")) or (raw is None and bool(error)), _num(latency),
                q_chars, a_chars, stored_hash, _num(tp), _num(tc)))  # fmt: skip
        if delta:
            audit.update(delta)
        if cols:
            items[table].append((rec, cols))  # type: ignore[index]
    return probe_rows, items


class _Counts(dict):
    """One answer's audit counts: a dict counting like a Counter (``d[k] += 1``) without Counter's
    Python-level constructor, built once per distinct answer; ``Counter.update`` adds it alike."""

    __slots__ = ()

    def __missing__(self, key: str) -> int:
        return 0


def _memo_entry(pid: str, stored: Any, parsed_json: bytes, seat: dict[str, int]) -> tuple[int, int, str | None, tuple[Any, ...], Counter]:
    """(hash, kind, item table, item columns, audit counts) of a stored answer value, once per distinct
    (probe, value) in a game."""
    table = TABLE_OF.get(pid) if stored is not None else None
    delta: Any = _Counts()
    cols = tuple(zip(*answer_rows(pid, stored, 0, seat, delta))) if table is not None else ()
    return (digest(parsed_json) if stored is not None else 0), kind_code(stored), table, cols, delta


def _record_row(rec: int, off: int, exact: bool, sc: Scanned, seat: dict[str, int], audit: Counter,
                probe_rows: list[tuple], items: dict[str, list[ItemBlock]], memo: dict[tuple[str, bytes], Any],
                skipped: Counter | None = None) -> None:
    """The rows of a record given as a dict (older schemas, imported logs, lines stating fields). A call
    skipped for lagging (``lagged``) was never asked: no row (never a call, a transport error or a parse
    failure); it is counted in the audit as ``probes.skipped`` and per seat in ``skipped``."""
    o = sc.rec
    if o.get("lagged"):
        audit["probes.skipped"] += 1
        if skipped is not None:
            who = o.get("player_name")
            skipped[seat.get(who, -1) if isinstance(who, str) else -1] += 1
        return
    ts = _num(o.get("timestamp", math.nan))
    if math.isnan(ts):
        ts = math.inf  # missing timestamp = +infinity (docs/metrics.md §1.4)
    st = (o, to_int(o.get("round", 0), 0), to_int(o.get("public_msg_seq", NO_SEQ), NO_SEQ), ts, str(o.get("phase") or ""))
    who, pid, stored, raw = o.get("player_name"), o.get("probe_id"), o.get("answer_parsed"), o.get("answer_raw")
    s = seat.get(who, -1) if isinstance(who, str) else -1
    if s < 0:
        audit["probes.unknown_prober"] += 1
    if not isinstance(pid, str):
        pid = ""
    parse_ok, repaired_flag, error = bool(o.get("answer_parse_ok")), bool(o.get("answer_repaired", False)), o.get("error")
    parsed_json = sc.parsed_json
    if parsed_json is not None and (stored is not None or not isinstance(raw, str)):  # eff is stored, src 0
        hit = memo.get((pid, parsed_json))
        if hit is None:
            hit = memo[(pid, parsed_json)] = _memo_entry(pid, stored, parsed_json, seat)
        stored_hash, kind, table, cols, delta = hit
        probe_rows.append((rec, off, st[1], st[2], s, to_int(o.get("probe_seq", 0), 0), pid, st[3], st[4], parse_ok, kind,
                           kind, 0, repaired_flag, is_transport_error(raw) or (raw is None and bool(error)),
                           _num(o.get("latency_ms")), sc.q_chars, sc.a_chars, stored_hash, _num(o.get("tokens_prompt")),
                           _num(o.get("tokens_completion"))))  # fmt: skip
        if delta:
            audit.update(delta)
        if cols:
            items[table].append((rec, cols))  # type: ignore[index]
        return
    _row(rec, off, exact, st, s, pid, o.get("probe_seq", 0), stored, raw, parse_ok, repaired_flag, error,
         o.get("latency_ms"), o.get("tokens_prompt"), o.get("tokens_completion"), sc.q_chars, sc.a_chars, seat, audit,
         probe_rows, items)  # fmt: skip


def _row(rec: int, off: int, exact: bool, st: StepFacts, s: int, pid: str, probe_seq: Any, stored: Any, raw: Any,
         parse_ok: bool, repaired_flag: bool, error: Any, latency: Any, tp: Any, tc: Any, q_chars: int, a_chars: int,
         seat: dict[str, int], audit: Counter, probe_rows: list[tuple], items: dict[str, list[ItemBlock]]) -> None:
    """A record's rows by the general rule: the answer's value re-extracted from its raw text when none
    is stored (src 1), its hash from its JSON text."""
    src = 0
    eff = stored
    if eff is None and isinstance(raw, str):
        eff, rep = extract_json(raw)
        src = 1 if eff is not None else 0
        repaired_flag = repaired_flag or rep
    stored_hash = stable_hash(stored, exact) if stored is not None else 0
    probe_rows.append((rec, off, st[1], st[2], s, to_int(probe_seq, 0), pid, st[3], st[4], parse_ok, kind_code(stored),
                       kind_code(eff), src, repaired_flag, is_transport_error(raw) or (raw is None and bool(error)),
                       _num(latency), q_chars, a_chars, stored_hash, _num(tp), _num(tc)))  # fmt: skip
    if eff is None:
        return
    table = TABLE_OF.get(pid)
    if table is None:
        return
    rows = answer_rows(pid, eff, src, seat, audit)
    if rows:
        items[table].append((rec, tuple(zip(*rows))))
