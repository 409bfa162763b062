"""Compact probe records (``introspection.jsonl``, schema_version 3) and their one decoder.

A full probe record (:class:`~.schema.ProbeRecord` plus the engine's extension fields) repeats
what the file already holds: the rendered question (its template and the previous answers it
quotes), the answer three times (raw, parsed, normalised), and per-step and per-seat fields.
Since schema_version 3 the file holds, besides records written by older versions (kept as they
are), lines with an ``"@"`` key:

* ``{"@": "h", "schema_version": 3, "codec": 1, "parser": 1, "norm": 1, "game_id", "seats"}`` --
  a header per writer (the seat names normalised answers are matched against);
* ``{"@": "seat", "i", "player_name", "model", "role"}``, ``{"@": "probe", "s", "probe_id",
  "template"}`` and ``{"@": "step", "k", "round", "public_msg_seq", "phase", "when",
  "timestamp", "players", "roles"}`` -- tables, written once and again only when they change;
* ``{"@": "p", "k", "i", "s", ...}`` -- one probe call: its step, seat and probe, the quoted
  earlier answers ``c`` (one per ``{prev_*}``/``{last_*}`` placeholder of the template: the
  step index of this seat's record of that probe, or the text itself, or null), the raw answer
  ``a``, ``answer_valid`` ``v``, latency ``l``, tokens ``tp``/``tc`` (``te`` when not
  estimated), finish time ``f``, error ``e``, ``sp`` when the seat was the step's speaker and
  ``n`` attempts when not 1.

Every other field is *derived*: the question re-rendered from its template
(:mod:`.templates`), ``answer_parsed``/``answer_parse_ok``/``answer_repaired`` by re-parsing the
raw answer with the same parser (:mod:`.answers`), ``answer_norm`` with the exact resolvers of
:mod:`.answer_norm`, ``chain_used_raw_fallback`` from the quoted records. The encoder computes
each derived field the way the decoder will and stores the field under its full name wherever
the derivation gives something else (a repaired answer, a fuzzy name match, a custom probe's
normalised answer, an unknown extra field), so decoding gives back exactly the record that was
encoded. Read the file with :func:`mafiascope.logs.io.iter_probe_records`; a reader that parses
lines itself passes each object through :meth:`ProbeDecoder.feed`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeGuard

from pydantic import ValidationError

from .answer_norm import NORM_VERSION, Underivable, normalise
from .answers import PARSER_VERSION, ParsedAnswer, chain_text, finite, parse_answer
from .probe_lines import (  # noqa: F401  (some re-exported: the codec's public pieces)
    ABSENT,
    CHAIN_PREFIXES,
    CODEC_VERSION,
    EAGER_FIELDS,
    FULL_FIELDS,
    MARK,
    RESERVED_KEYS,
    SCHEMA_VERSION_COMPACT,
    SEAT_FIELDS,
    SHORT_KEYS,
    STANDARD_SHAPES,
    STEP_FIELDS,
    TABLE_LINES,
    Header,
    ProbeDecodeError,
    ProbeLine,
    SeatLine,
    StepLine,
    apply_patch,
    chain_names,
    chain_value,
    dumps_answer,
    loads_answer,
    make_patch,
    malformed,
    same,
    template_re,
)
from .templates import render


def _is_int(x: Any) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


class ProbeTables:
    """What the lines so far define: header, seats, probes, steps and every record's chain value."""

    def __init__(self) -> None:
        self.has_header = False
        self.game_id: str | None = None
        self.seats: tuple[str, ...] | None = None
        self.seat: dict[int, dict[str, Any]] = {}
        self.probe: dict[int, dict[str, Any]] = {}
        self.step: dict[int, dict[str, Any]] = {}
        self.last_value: Any = ABSENT  # the answer value of the record derive() saw last
        self.last_shortcut = False  # ... and whether its parse was the stored value's
        # (player_name, probe_id) -> {step_index: (text, raw)}
        self.chain: dict[tuple[str, str], dict[int, tuple[str | None, bool]]] = {}
        # (player_name, probe_id) -> (step_index, JSON value) of the latest answer stored as a value
        self.answer: dict[tuple[str, str], tuple[int, Any]] = {}

    def table(self, line: Mapping[str, Any]) -> None:
        model = TABLE_LINES.get(line[MARK])
        if model is None:
            raise ProbeDecodeError(f"unknown line kind {line[MARK]!r:.40}")
        try:
            t = model.model_validate(line)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ProbeDecodeError(f"{line[MARK]} line: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
        if isinstance(t, Header):
            if t.codec > CODEC_VERSION:
                raise ProbeDecodeError(
                    f"written with probe codec {t.codec}; this mafiascope reads up to {CODEC_VERSION} (upgrade it)"
                )
            self.has_header = True
            self.game_id = t.game_id
            self.seats = tuple(t.seats) if t.seats is not None else None
        elif isinstance(t, SeatLine):
            self.seat[t.i] = t.model_dump(include=set(SEAT_FIELDS))
        elif isinstance(t, ProbeLine):
            self.probe[t.s] = t.model_dump(include={"probe_id", "template"})
        elif isinstance(t, StepLine):
            self.step[t.k] = t.model_dump(include={*STEP_FIELDS, "players", "roles"})

    def remember(self, rec: Mapping[str, Any], line: Mapping[str, Any] | None = None) -> None:
        """Note the record's chain value; for a compact ``line`` whose answer is its stored JSON value
        (the common case) only the raw text is kept and the value computed when it is looked up."""
        name, pid, k = rec.get("player_name"), rec.get("probe_id"), rec.get("step_index")
        if isinstance(name, str) and isinstance(pid, str) and isinstance(k, int):
            lazy = line is not None and self.last_shortcut and not any(x in line for x in EAGER_FIELDS)
            self.chain.setdefault((name, pid), {})[k] = rec["answer_raw"] if lazy else chain_value(rec)

    def set_answer(self, rec: Mapping[str, Any], value: Any) -> None:
        self.set_answer_of(rec.get("player_name"), rec.get("probe_id"), rec.get("step_index"), value)

    def set_answer_of(self, name: Any, pid: Any, k: Any, value: Any) -> None:
        if isinstance(name, str) and isinstance(pid, str):
            if value is ABSENT or not isinstance(k, int):
                self.answer.pop((name, pid), None)
            else:
                self.answer[(name, pid)] = (k, value)

    def answer_value(self, name: str, pid: str, core: Mapping[str, Any]) -> tuple[str | None, Any]:
        """(raw answer, its JSON value or ABSENT) of a compact record: ``a`` text, ``A`` value, ``D`` patch."""
        if "A" in core:
            return dumps_answer(core["A"]), core["A"]
        if "D" in core:
            base_k, patch = core["D"]
            base = self.answer.get((name, pid))
            if base is None or base[0] != base_k:
                raise ProbeDecodeError(
                    f"answer of {name!r:.40} to {pid!r:.40} patches its answer at step {base_k}, which the file does not hold"
                )
            value = apply_patch(base[1], patch)
            return dumps_answer(value), value
        raw = core.get("a")
        return (raw if isinstance(raw, str) else None), ABSENT

    def lookup(self, name: str, pid: str, k: int) -> tuple[str | None, bool] | None:
        per = self.chain.get((name, pid))
        hit = per.get(k) if per is not None else None
        if isinstance(hit, str):  # a raw answer stored as its JSON value: parsed, no error
            hit = per[k] = (chain_text(json.loads(hit)), False)
        return hit

    def rows(self, core: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """The step, seat and probe table lines a compact record refers to; a missing one is an error."""
        k, i, s = core["k"], core["i"], core["s"]
        if not self.has_header:
            raise ProbeDecodeError(f"record of step {k}, seat {i}, probe {s}: the file's header line is missing")
        step, seat, probe = self.step.get(k), self.seat.get(i), self.probe.get(s)
        if step is None or seat is None or probe is None:
            missing = "step" if step is None else "seat" if seat is None else "probe"
            raise ProbeDecodeError(f"record of step {k}, seat {i}, probe {s}: its {missing} table line is missing")
        return step, seat, probe

    def derive(self, core: Mapping[str, Any]) -> dict[str, Any]:
        """The full record a compact one stands for, before its explicit fields are applied."""
        k, i, s = core["k"], core["i"], core["s"]
        step, seat, probe = self.rows(core)
        name, pid, template = seat["player_name"], probe["probe_id"], probe["template"]
        question: str | None = None
        fallback = False
        if isinstance(template, str):
            values: dict[str, str | None] = {"player": name, "players": step.get("players"), "roles": step.get("roles")}
            for ph, c in zip(chain_names(template), core.get("c") or (), strict=False):
                if isinstance(c, int) and not isinstance(c, bool):
                    hit = self.lookup(name, ph.split("_", 1)[1], c)
                    if hit is None:
                        raise ProbeDecodeError(
                            f"record of step {k}, seat {i}: {{{ph}}} quotes step {c}, which the file does not hold"
                        )
                    values[ph] = hit[0]
                    fallback = fallback or bool(hit[1] and hit[0])
                else:
                    values[ph] = c
            question = render(template, values)
        raw, self.last_value = self.answer_value(name, pid, core)
        self.last_shortcut = (
            self.last_value is not ABSENT and isinstance(raw, str) and "```" not in raw and "<think" not in raw.lower()
        )
        pa: ParsedAnswer | None
        if self.last_shortcut and isinstance(raw, str):  # the JSON text of a stored value: re-parsed gives it back, unrepaired
            pa, ok, parsed = ParsedAnswer(raw, None, True), True, json.loads(raw)
        else:
            pa = parse_answer(raw) if isinstance(raw, str) else None
            ok = bool(pa and pa.ok)
            parsed = finite(pa.value) if pa is not None and ok else None
        norm = None
        if ok and pid in STANDARD_SHAPES and self.seats is not None:  # seats: a tuple (cached lookups)
            try:
                norm = normalise(pid, parsed, self.seats)
            except Underivable:
                norm = ABSENT  # only the full resolvers map it: the record stores answer_norm
        te = core.get("te", True)
        return {
            "timestamp": step["timestamp"], "game_id": self.game_id, "round": step["round"],
            "public_msg_seq": step["public_msg_seq"], "player_idx": i, "player_name": name, "probe_seq": s,
            "probe_id": pid, "question": question, "answer_raw": raw, "answer_parsed": parsed, "answer_parse_ok": ok,
            "answer_repaired": bool(pa and pa.repaired), "answer_valid": core.get("v"), "model": seat["model"],
            "role": seat["role"], "phase": step["phase"], "latency_ms": core.get("l"), "chain_used_raw_fallback": fallback,
            "error": core.get("e"), "speaker": bool(core.get("sp")), "tokens_prompt": core.get("tp"),
            "tokens_completion": core.get("tc"), "tokens_estimated": te, "step_index": k, "when": step["when"],
            "answer_norm": norm, "think_stripped": bool(pa and pa.think_stripped), "finished_ts": core.get("f"),
            "attempts": core.get("n", 1),
        }  # fmt: skip


def _expand(tables: ProbeTables, line: Mapping[str, Any]) -> dict[str, Any]:
    full = tables.derive(line)
    for name in line.get("-") or ():
        full.pop(name, None)
    for key, v in line.items():
        if key in RESERVED_KEYS:
            continue
        full[key] = v
    full.update(line.get("x") or {})
    if full.get("answer_norm") is ABSENT:
        full["answer_norm"] = None  # cannot happen for lines this module wrote
    return full


class ProbeDecoder:
    """Turns the lines of an ``introspection.jsonl``, in order, into full probe records.

    :meth:`feed` returns the full record for a record line (older records unchanged) and None
    for a table line; it raises :class:`ProbeDecodeError` for a record whose tables or quoted
    records are missing (lines lost from the middle of the file)."""

    def __init__(self) -> None:
        self.tables = ProbeTables()

    def feed(self, line: Mapping[str, Any]) -> dict[str, Any] | None:
        kind = line.get(MARK)
        try:
            if kind is None:  # a full record (schema_version <= 2, imported, or kept whole)
                rec = dict(line)
                self.tables.set_answer(rec, ABSENT)
            elif kind == "p":
                rec = _expand(self.tables, line)
                self.tables.remember(rec, line)
                self.tables.set_answer(rec, self.tables.last_value)
                return rec
            else:
                self.tables.table(line)
                return None
        except (LookupError, TypeError, ValueError) as exc:
            raise malformed(exc) from None
        self.tables.remember(rec)
        return rec

    def chain_value(self, player_name: str, probe_id: str, step_index: int) -> tuple[str | None, bool] | None:
        """(text, raw) of the seat's record of ``probe_id`` at ``step_index``, if the lines so far hold it."""
        return self.tables.lookup(player_name, probe_id, step_index)

    def templates(self) -> dict[str, str]:
        """probe id -> question template, as defined by the lines so far."""
        return {p["probe_id"]: p["template"] for p in self.tables.probe.values() if isinstance(p.get("template"), str)}


class ProbeEncoder:
    """Turns full probe records into compact lines, in write order (one encoder per file writer).

    ``seats`` are the game's seat names (answers are normalised against them); ``templates``
    maps probe ids to question templates. :meth:`encode` returns the lines to append for one
    record: any table lines it needs first, then the record. ``values`` (placeholder -> text)
    saves matching the question against its template when the caller rendered it."""

    def __init__(self, game_id: str, seats: list[str] | None, templates: Mapping[str, str] | None = None) -> None:
        self.tables = ProbeTables()
        self.templates = dict(templates or {})
        self._header: dict[str, Any] | None = {MARK: "h", "schema_version": SCHEMA_VERSION_COMPACT, "codec": CODEC_VERSION,
                                               "parser": PARSER_VERSION, "norm": NORM_VERSION, "game_id": game_id,
                                               "seats": list(seats) if seats is not None else None}  # fmt: skip

    def encode(
        self, rec: Mapping[str, Any], template: str | None = None, values: Mapping[str, str | None] | None = None
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self._header is not None:
            out.append(self._header)
            self.tables.table(self._header)
            self._header = None
        k, i, s = rec.get("step_index"), rec.get("player_idx"), rec.get("probe_seq")
        if not (_is_int(k) and _is_int(i) and _is_int(s)):
            out.append(dict(rec))  # not a record of ours: kept whole
            self.tables.remember(rec)
            self.tables.set_answer(rec, ABSENT)
            return out
        pid = rec.get("probe_id")
        if template is None and isinstance(pid, str):
            template = self.templates.get(pid)
        if template is not None and values is None:
            values = self._match(template, rec)
        self._tables_for(rec, k, i, s, template, values, out)
        core: dict[str, Any] = {MARK: "p", "k": k, "i": i, "s": s}
        tpl = self.tables.probe[s]["template"]
        if isinstance(tpl, str) and values is not None:
            c = [self._ref(rec, ph, values.get(ph), k) for ph in chain_names(tpl)]
            if c:
                core["c"] = c
        value = self._answer(rec, core)
        for short, name in SHORT_KEYS.items():
            v = rec.get(name)
            if v is not None and not (short == "a" and value is not ABSENT):
                core[short] = v
        if rec.get("tokens_estimated", True) is not True:
            core["te"] = rec.get("tokens_estimated")
        if rec.get("speaker"):
            core["sp"] = 1
        if rec.get("attempts", 1) != 1:
            core["n"] = rec.get("attempts")
        derived = self.tables.derive(core)
        absent = []
        for name in FULL_FIELDS:
            have = rec.get(name, ABSENT)
            if have is ABSENT:
                absent.append(name)
            elif derived[name] is ABSENT or not same(derived[name], have):
                core[name] = have
        if absent:
            core["-"] = absent
        extras = {key: v for key, v in rec.items() if key not in derived}
        clash = {key: v for key, v in extras.items() if key in RESERVED_KEYS}
        core.update({key: v for key, v in extras.items() if key not in RESERVED_KEYS})
        if clash:
            core["x"] = clash
        out.append(core)
        self.tables.remember(rec, core)
        self.tables.set_answer(rec, value)
        return out

    # ------------------------------------------------------------------ internals
    def _tables_for(self, rec: Mapping[str, Any], k: int, i: int, s: int, template: str | None,
                    values: Mapping[str, str | None] | None, out: list[dict[str, Any]]) -> None:  # fmt: skip
        seat = {f: rec.get(f) for f in SEAT_FIELDS}
        if self.tables.seat.get(i) != seat:
            out.append({MARK: "seat", "i": i, **seat})
        probe = {"probe_id": rec.get("probe_id"), "template": template}
        have = self.tables.probe.get(s)
        if have is None or have["probe_id"] != probe["probe_id"] or (template is not None and have["template"] != template):
            out.append({MARK: "probe", "s": s, **probe})
        step = {f: rec.get(f) for f in STEP_FIELDS}
        old = self.tables.step.get(k)
        for ph in ("players", "roles"):
            step[ph] = values[ph] if values is not None and ph in values else old[ph] if old is not None else None
        if old is None or old != step:
            out.append({MARK: "step", "k": k, **step})
        for line in out:
            if line.get(MARK) in ("seat", "probe", "step"):
                self.tables.table(line)

    def _answer(self, rec: Mapping[str, Any], core: dict[str, Any]) -> Any:
        """Store the raw answer as its JSON value when that re-serialises to it byte for byte (``A``),
        or as a patch of this seat's previous answer to the probe (``D``) when that is shorter."""
        raw = rec.get("answer_raw")
        if not isinstance(raw, str) or raw[:1] not in ("[", "{"):
            return ABSENT
        value = loads_answer(raw)
        if value is ABSENT or dumps_answer(value) != raw:
            return ABSENT
        base = self.tables.answer.get((rec.get("player_name"), rec.get("probe_id")))  # type: ignore[arg-type]
        if base is not None:
            patch = make_patch(base[1], value)
            if patch is not None and same(apply_patch(base[1], patch), value):
                core["D"] = [base[0], patch]
                return value
        core["A"] = value
        return value

    def _match(self, template: str, rec: Mapping[str, Any]) -> dict[str, str | None] | None:
        q = rec.get("question")
        m = template_re(template).fullmatch(q) if isinstance(q, str) else None
        return m.groupdict() if m is not None else None

    def _ref(self, rec: Mapping[str, Any], ph: str, text: str | None, k: int) -> int | str | None:
        """A quoted answer as the step index of the record it came from, when one in this file gives the same text."""
        name, pid = rec.get("player_name"), ph.split("_", 1)[1]
        per = self.tables.chain.get((name, pid), {}) if isinstance(name, str) else {}
        for step in sorted((x for x in per if x <= k), reverse=True)[:4]:
            hit = self.tables.lookup(name, pid, step)  # type: ignore[arg-type]
            if hit is not None and (hit[0] == text or (text == "N/A" and hit[0] is None)):
                return step
        return text
