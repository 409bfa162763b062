"""The probe records as the columnar analytics loader reads them, decoded without what it never reads.

The full decoder (:class:`.probe_codec.ProbeDecoder`) rebuilds every field of a compact record:
it renders the question, serialises the stored answer value to its raw text and parses that text
back, and normalises the answer against the seats. The loader reads the question and the raw
answer only for their lengths and never reads ``answer_norm``, ``chain_used_raw_fallback`` or
``think_stripped``. :class:`ProbeScanner` gives it each record's other fields exactly as the full
decoder does, plus the two lengths: the question's from its template's literal text and the
lengths of the values it quotes, the raw answer's from its text computed once per distinct answer
value in the file. It raises :class:`ProbeDecodeError` on the same lines as the full decoder.
tests/test_probe_scan.py compares the loader's tables built either way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

try:  # optional speed-up (requirements.txt): the memo key of an answer value
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None  # type: ignore[assignment]

from .answers import chain_text, finite, parse_answer
from .json_shape import json_shape, separators
from .probe_codec import ProbeTables
from .probe_lines import (
    ABSENT,
    EAGER_FIELDS,
    MARK,
    RESERVED_KEYS,
    ProbeDecodeError,
    apply_patch,
    chain_names,
    dumps_answer,
    malformed,
    unchanged,
)
from .templates import NA, PLACEHOLDER

_RAW = object()  # the record's raw answer is the JSON text of its value (Fast.a_chars holds its length)
RAW = _RAW


class Scanned(NamedTuple):
    """One probe record given as a dict for the loader: its fields (``question`` and ``answer_raw`` may
    be left out for their lengths), the two lengths, and the orjson text of ``answer_parsed`` when it
    is exact. A compact record that states none of its fields itself (the common case) comes as a
    plain tuple instead (:class:`Fast`), so no per-record dict is built and read back."""

    rec: dict[str, Any]
    q_chars: int
    a_chars: int
    parsed_json: bytes | None


class Fast(NamedTuple):
    """The field order of the plain tuple :meth:`ProbeScanner.feed` returns for a compact record with
    nothing of its own (a NamedTuple's constructor would cost a Python call per record): ``step`` is
    its step table row (timestamp, round, public_msg_seq, phase), ``raw`` the raw answer, or
    :data:`RAW` when it is the JSON text of ``parsed`` (then ``parsed_json`` is that value's orjson
    text); ``q_chars`` and ``a_chars`` the question's and the raw answer's lengths."""

    step: dict[str, Any]
    player_name: str
    probe_id: str
    probe_seq: Any
    parsed: Any
    raw: Any
    parse_ok: bool
    repaired: bool
    error: Any
    latency_ms: Any
    tokens_prompt: Any
    tokens_completion: Any
    q_chars: int
    a_chars: int
    parsed_json: bytes | None


@lru_cache(maxsize=64)
def _template_parts(
    template: str,
) -> tuple[int, tuple[tuple[str, int], ...], tuple[tuple[str, int], ...], tuple[tuple[str, str], ...]]:
    """(length of the literal text, then (name, length of ``{name}``) per placeholder occurrence:
    the other placeholders', the quoting ones' (``{prev_*}``/``{last_*}``), then (name, quoted probe
    id) per quoting placeholder, in the order of the record's ``c``)."""
    occ = [(m.group(1), m.end() - m.start()) for m in PLACEHOLDER.finditer(template)]
    names = chain_names(template)
    chain = set(names)
    return (len(template) - sum(n for _, n in occ), tuple(x for x in occ if x[0] not in chain),
            tuple(x for x in occ if x[0] in chain), tuple((ph, ph.split("_", 1)[1]) for ph in names))  # fmt: skip


def _value_len(v: Any) -> int:
    """Length of what :func:`.templates.render` puts for a value (TypeError where it would fail)."""
    if v is None or v == "":
        return len(NA)
    if v.__class__ is not str:
        raise TypeError(f"expected str instance, {type(v).__name__} found")
    return len(v)


class _Text:
    """A stored answer value and the facts about its raw text that the loader and later quotes use:
    one per distinct value in a file (equal orjson texts give equal ``json.dumps`` texts)."""

    __slots__ = ("value", "raw_len", "plain", "text", "key", "seps")

    def __init__(self, value: Any, raw_len: int, plain: bool, text: str | None, key: bytes | None, seps: int) -> None:
        self.value, self.raw_len, self.plain, self.text, self.key = value, raw_len, plain, text, key
        self.seps = seps  # separators(value), or -1 until a quote needs it

    def raw(self) -> str:
        if self.text is None:
            self.text = dumps_answer(self.value)
        return self.text


# table line kind -> (its integer key field, its fields of any JSON value, its fields of a string or null),
# each group in the model's field order (probe_lines.SeatLine, ProbeLine, StepLine)
_TABLE_FIELDS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "seat": ("i", ("player_name", "model", "role"), ()),
    "probe": ("s", ("probe_id",), ("template",)),
    "step": ("k", ("round", "public_msg_seq", "phase", "when", "timestamp"), ("players", "roles")),
}
_TABLE_KEYS = {kind: frozenset((MARK, key, *anys, *strs)) for kind, (key, anys, strs) in _TABLE_FIELDS.items()}


class _ScanTables(ProbeTables):
    """:class:`.probe_codec.ProbeTables` reading a plainly valid seat, probe or step line without pydantic:
    only the line's own keys, an ``int`` key and strings or nulls where the model wants them give the
    entry the model dumps (the same keys in the same order, the same values); any other line (the
    header, anything odd) is validated by the model as before (tests/test_cold_fastpaths.py)."""

    def table(self, line: Mapping[str, Any]) -> None:
        kind = line[MARK]
        spec = _TABLE_FIELDS.get(kind) if kind.__class__ is str else None
        if spec is not None and line.keys() <= _TABLE_KEYS[kind]:
            key, anys, strs = spec
            n = line[key] if key in line else None
            if n.__class__ is int and all(v is None or v.__class__ is str for v in map(line.get, strs)):
                entry = {f: line.get(f) for f in anys}
                for f in strs:
                    entry[f] = line.get(f)
                (self.seat if kind == "seat" else self.probe if kind == "probe" else self.step)[n] = entry
                return
        super().table(line)


class ProbeScanner:
    """Feeds the lines of one ``introspection.jsonl`` in order, like :class:`.probe_codec.ProbeDecoder`.

    :meth:`feed` takes a line's object and whether orjson parsed it (its orjson text is then exact)
    and returns a :class:`Scanned` record, a plain tuple in :class:`Fast`'s order, or None for a table line."""

    def __init__(self) -> None:
        self.tables = _ScanTables()
        # (player_name, probe_id) -> {step_index: length a quote of it renders to | _Text | full record}
        self.chain: dict[tuple[Any, Any], dict[int, Any]] = {}
        self.clean = _orjson is not None  # every line so far parsed by orjson: no NaN/Infinity in any value
        self.texts: dict[bytes, _Text] = {}  # orjson text of a value -> its _Text
        self.bases: dict[tuple[str, str, str | None, str | None], int] = {}  # question length without its quotes
        # (player_name, probe_id) -> (the value _answer returned last, its _Text): a patch that changes
        # nothing gives an equal value, so the same _Text (held by identity: the value is kept alive)
        self.last: dict[tuple[Any, Any], tuple[Any, _Text]] = {}

    def feed(self, line: Mapping[str, Any], exact: bool) -> Scanned | tuple | None:
        if not exact:
            self.clean = False
        kind = line.get(MARK)
        try:
            if kind is None:  # a full record (schema_version <= 2, imported, or kept whole)
                self.tables.set_answer(line, ABSENT)
                self._remember(line, line)
                q, raw = line.get("question"), line.get("answer_raw")
                return Scanned(line, len(q) if isinstance(q, str) else 0, len(raw) if isinstance(raw, str) else 0, None)  # type: ignore[arg-type]
            if kind == "p":
                return self._record(line)
            self.tables.table(line)
            return None
        except (LookupError, TypeError, ValueError) as exc:
            raise malformed(exc) from None

    # ------------------------------------------------------------------ chain values
    def _remember(self, rec: Mapping[str, Any], entry: Any) -> None:
        name, pid, k = rec.get("player_name"), rec.get("probe_id"), rec.get("step_index")
        if isinstance(name, str) and isinstance(pid, str) and isinstance(k, int):
            self.chain.setdefault((name, pid), {})[k] = entry

    def _quote_len(self, name: Any, pid: str, k: int) -> int | None:
        """Length of the text a ``{prev_*}``/``{last_*}`` quote of the seat's record at step ``k``
        renders to (None: the file does not hold it); probe_lines.chain_value's rule."""
        per = self.chain.get((name, pid))
        hit = per.get(k) if per is not None else None
        if hit is None or hit.__class__ is int:
            return hit
        if hit.__class__ is _Text:  # parsed, no error: the compact text of the value
            if hit.seps < 0:
                hit.seps = separators(hit.value)
            n = hit.raw_len - hit.seps
        elif hit.__class__ is _Odd:
            n = hit.quote_len()
        else:  # a record: its chain value, as probe_lines.chain_value gives it
            n = _chain_len(hit, hit.get("answer_raw"))
        per[k] = n  # type: ignore[index]
        return n

    # ------------------------------------------------------------------ records
    def _question_len(self, name: Any, step: Mapping[str, Any], template: str, core: Mapping[str, Any]) -> int:
        """Length of :func:`.templates.render` of the record's question (probe_codec.ProbeTables.derive)."""
        players, roles = step.get("players"), step.get("roles")
        literal, fixed, chain, quoting = _template_parts(template)
        key = (template, name, players, roles) if name.__class__ is str else None
        base = self.bases.get(key) if key is not None else None
        if base is None:  # the text around the quotes, the same for a seat's probe at every step of a round
            values: dict[str, Any] = {"player": name, "players": players, "roles": roles}
            base = literal
            for ph, n in fixed:
                base += _value_len(values[ph]) if ph in values else n
            if key is not None:
                self.bases[key] = base
        if not chain:
            return base
        lens: dict[str, int] = {}
        done = self.chain
        for (ph, quoted), c in zip(quoting, core.get("c") or (), strict=False):
            if isinstance(c, int) and not isinstance(c, bool):
                per = done.get((name, quoted))  # a quote's length once known (an int), else _quote_len's rule
                known = per.get(c) if per is not None else None
                qlen = known if type(known) is int else self._quote_len(name, quoted, c)
                if qlen is None:
                    raise ProbeDecodeError(
                        f"record of step {core['k']}, seat {core['i']}: {{{ph}}} quotes step {c}, which the file does not hold"
                    )
                lens[ph] = qlen
            else:
                lens[ph] = _value_len(c)
        for ph, n in chain:
            base += lens.get(ph, n)
        return base

    def _answer(self, name: Any, pid: Any, core: Mapping[str, Any]) -> tuple[Any, Any]:
        """(raw answer or a _Text of its stored value, the value or ABSENT), as ProbeTables.answer_value."""
        if "A" in core:
            value = core["A"]
        elif "D" in core:
            base_k, patch = core["D"]
            base = self.tables.answer.get((name, pid))
            if base is None or base[0] != base_k:
                raise ProbeDecodeError(
                    f"answer of {name!r:.40} to {pid!r:.40} patches its answer at step {base_k}, which the file does not hold"
                )
            if self.clean and unchanged(base[1], patch):  # ~40% of an engine log's records repeat the answer
                last = self.last.get((name, pid))
                if last is not None and last[0] is base[1]:  # the base's own facts, for an equal value
                    return last[1], base[1]
            value = apply_patch(base[1], patch)
        else:
            raw = core.get("a")
            return (raw if isinstance(raw, str) else None), ABSENT
        key: bytes | None = _orjson.dumps(value) if self.clean else None
        hit = self.texts.get(key) if key is not None else None
        if hit is not None:
            self.last[(name, pid)] = (value, hit)
            return hit, value
        seps = json_shape(value) if key is not None else -1
        if key is not None and seps >= 0:  # the text is the orjson text with spaced separators: its facts from the key
            if key.isascii():
                # (no "<" at all: no "<think" in any case, without lowering a copy of the text)
                n, plain = len(key) + seps, b"```" not in key and (b"<" not in key or b"<think" not in key.lower())
            else:  # the same characters (every string escaped alike); "<think" never spans a separator
                s = key.decode()
                n, plain = len(s) + seps, "```" not in s and ("<" not in s or "<think" not in s.lower())
            t = _Text(value, n, plain, None, key, seps)
        else:
            text = dumps_answer(value)
            t = _Text(value, len(text), "```" not in text and "<think" not in text.lower(), text, key, -1)
        if key is not None:
            self.texts[key] = t
            self.last[(name, pid)] = (value, t)
        return t, value

    def _record(self, core: Mapping[str, Any]) -> Scanned | tuple:
        k, s = core["k"], core["s"]
        tables = self.tables
        step, seat, probe = tables.rows(core)
        name, pid, template = seat["player_name"], probe["probe_id"], probe["template"]
        q_len = self._question_len(name, step, template, core) if isinstance(template, str) else None
        raw, value = self._answer(name, pid, core)
        plain = raw.__class__ is _Text and raw.plain
        if plain:  # the JSON text of a stored value: re-parsing it gives the value back, unrepaired
            parsed, ok, repaired = value, True, False
        else:
            if raw.__class__ is _Text:
                raw = raw.raw()
            pa = parse_answer(raw) if isinstance(raw, str) else None
            ok = bool(pa and pa.ok)
            parsed = finite(pa.value) if pa is not None and ok else None
            repaired = bool(pa and pa.repaired)
        overridden = not RESERVED_KEYS.issuperset(core) or "-" in core or "x" in core
        if not overridden:
            return self._plain_record(core, k, s, step, name, pid, q_len, raw, value, plain, parsed, ok, repaired)
        rec: dict[str, Any] = {
            "timestamp": step["timestamp"], "round": step["round"], "public_msg_seq": step["public_msg_seq"],
            "player_name": name, "probe_seq": s, "probe_id": pid, "question": _RAW if q_len is not None else None,
            "answer_raw": _RAW if plain else raw, "answer_parsed": parsed, "answer_parse_ok": ok,
            "answer_repaired": repaired, "phase": step["phase"], "latency_ms": core.get("l"), "error": core.get("e"),
            "tokens_prompt": core.get("tp"), "tokens_completion": core.get("tc"), "step_index": k,
        }  # fmt: skip
        # fields the line states itself (rare): applied as probe_codec._expand does
        for drop in core.get("-") or ():
            rec.pop(drop, None)
        for key, v in core.items():
            if key not in RESERVED_KEYS:
                rec[key] = v
        rec.update(core.get("x") or {})
        # the record's own fields replace derived ones: resolve both placeholders
        if rec.get("answer_raw") is _RAW:
            rec["answer_raw"] = raw.raw()
        have = rec.get("answer_raw")
        a_chars = len(have) if isinstance(have, str) else 0
        q = rec.get("question")
        q_chars = q_len if q is _RAW else len(q) if isinstance(q, str) else 0
        if q is _RAW:
            del rec["question"]
        if plain and not any(x in core for x in EAGER_FIELDS):  # probe_codec stores the raw text: quoted lazily
            have = rec["answer_raw"]
            self._remember(rec, raw if have is _RAW else _Odd(have))
        else:
            self._remember(rec, _chain_len(rec, raw.raw() if rec.get("answer_raw") is _RAW else rec.get("answer_raw")))
        tables.set_answer(rec, value)
        exact_json = raw.key if plain and rec.get("answer_parsed") is value else None
        return Scanned(rec, q_chars, a_chars, exact_json)  # type: ignore[arg-type]

    def _plain_record(
        self,
        core: Mapping[str, Any],
        k: Any,
        s: Any,
        step: dict[str, Any],
        name: Any,
        pid: Any,
        q_len: int | None,
        raw: Any,
        value: Any,
        plain: bool,
        parsed: Any,
        ok: bool,
        repaired: bool,
    ) -> tuple:
        """:meth:`_record`'s result for a line that states no field itself: the same fields, lengths
        and remembered values, without building the record (a plain tuple in :class:`Fast`'s order)."""
        error = core.get("e")
        if plain:
            a_chars = raw.raw_len
            if "e" not in core:  # (the line states no other field of EAGER_FIELDS) probe_codec stores the raw text: quoted lazily
                entry: Any = raw
            else:
                entry = _chain_len_of(error, ok, parsed, raw.raw())
        else:
            a_chars = len(raw) if isinstance(raw, str) else 0
            entry = _chain_len_of(error, ok, parsed, raw)
        if isinstance(name, str) and isinstance(pid, str) and isinstance(k, int):
            self.chain.setdefault((name, pid), {})[k] = entry
        self.tables.set_answer_of(name, pid, k, value)
        return (step, name, pid, s, parsed, _RAW if plain else raw, ok, repaired, error, core.get("l"), core.get("tp"),
                core.get("tc"), q_len if q_len is not None else 0, a_chars, raw.key if plain else None)  # fmt: skip


class _Odd:
    """A lazily quoted record whose ``answer_raw`` its line replaced (only a hand-made line does):
    quoted as probe_codec.ProbeTables.lookup quotes it."""

    __slots__ = ("raw",)

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def quote_len(self) -> int:
        hit = (chain_text(json.loads(self.raw)), False) if isinstance(self.raw, str) else self.raw
        hit[1]  # noqa: B018 -- the full decoder reads it (and fails where it fails)
        return _value_len(hit[0])


def _chain_len(rec: Mapping[str, Any], raw: Any) -> int:
    """Rendered length of probe_lines.chain_value(rec) (a missing text renders as N/A)."""
    return _chain_len_of(rec.get("error"), rec.get("answer_parse_ok"), rec.get("answer_parsed"), raw)


def _chain_len_of(error: Any, parse_ok: Any, parsed: Any, raw: Any) -> int:
    if error is not None:
        return len(NA)
    if parse_ok:
        return _value_len(chain_text(parsed))
    text = (raw.strip() or None) if isinstance(raw, str) else None
    return _value_len(text)
