"""The cold load's fast paths give what the general computation gives (branch cold7).

- ``scan_jsonl`` parses a line with orjson before looking for blank lines: the same objects,
  offsets, exactness flags and skipped-line reasons as the general rule (strip, orjson, then the
  standard library), on lines of every kind.
- ``ProbeScanner`` reuses the base answer's facts for a patch that changes nothing
  (``probe_lines.unchanged``, called by the scanner): the same scanned records as with the fast path switched off, and
  ``unchanged`` is true only where ``apply_patch`` gives an equal copy (same JSON text).
- The scanner reads plainly valid seat, probe and step table lines without pydantic (branch cold9):
  the same entries as the models, and the same lines fail.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from mafiascope.logs import probe_scan
from mafiascope.logs.io import scan_jsonl
from mafiascope.logs.probe_lines import apply_patch
from mafiascope.logs.probe_codec import ProbeDecodeError

ROOT = Path(__file__).resolve().parents[1]


def _scan_general(path: Path) -> tuple[list, list]:
    """scan_jsonl's rule written the plain way: skip blank lines, orjson, else the standard library."""
    data = path.read_bytes()
    out, bad, pos = [], [], 0
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if raw.strip():
            obj: Any = None
            exact, why = False, "not a JSON object"
            try:
                obj, exact = orjson.loads(raw), True
            except ValueError:
                pass
            if not exact:
                try:
                    obj = json.loads(raw)
                except UnicodeDecodeError:
                    obj, why = None, "not UTF-8"
                except ValueError:
                    obj, why = None, "not JSON"
            if isinstance(obj, dict):
                out.append((pos, obj, exact))
            else:
                bad.append((lineno, not data[pos + len(raw) + 1 :].strip(), why))
        pos += len(raw) + 1
    return out, bad


LINES = [b'{"a": 1}', b"", b"   ", b"\t", b' {"b": [1, 2]} ', b"[1, 2]", b"3", b'"x"', b"null", b'{"c": NaN}',
         b'{"d": Infinity}', b'{"e": 123456789012345678901234567890}', b"\xef\xbb\xbf{\"f\": 1}", b'{"g": "\xff"}',
         b'{"h": "\\ud800"}', b"{not json", b'{"i": 1}\r', b'{"j": {"k": [true, false, null]}}', b'{"l": 1',]


@pytest.mark.parametrize("tail", [b"", b"\n", b"\n\n", b'\n{"torn": '])
def test_scan_jsonl_fast_path_matches_the_general_rule(tmp_path, tail):
    rng = random.Random(7)
    for trial in range(30):
        lines = [rng.choice(LINES) for _ in range(rng.randint(0, 12))]
        p = tmp_path / f"f{trial}.jsonl"
        p.write_bytes(b"\n".join(lines) + tail)
        got, want = scan_jsonl(p), _scan_general(p)
        assert got == want, lines
        # exactness is part of the result (== treats True and 1 alike, so compare the flags' types too)
        assert [type(x[2]) for x in got[0]] == [type(x[2]) for x in want[0]]


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth < 2 and r < 0.35:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 2 and r < 0.7:
        return {rng.choice("abcde"): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return rng.choice([0, 1, 2.5, "x", "y", None, True])


def _random_patch(rng: random.Random, base: Any) -> Any:
    choices: list[Any] = [None, 3, [], {"set": {}}, {"set": {}, "sub": {}}, {"set": {}, "sub": {}, "keys": []},
                          {"set": {}, "sub": {}, "keys": list(base) if isinstance(base, dict) else ["a"]},
                          {"set": {"a": 1}, "sub": {}}, {"set": {}, "sub": {"a": {"n": 0, "set": {}}}},
                          {"set": [], "sub": {}}, {"set": {}, "sub": []}]
    if isinstance(base, list):
        n = len(base)
        choices += [{"n": n, "set": {}}, {"n": float(n), "set": {}}, {"n": str(n), "set": {}}, {"n": n + 1, "set": {}},
                    {"n": max(n - 1, 0), "set": {}}, {"n": n, "set": {"0": 1}}, {"n": n, "set": []}, {"n": n},
                    {"n": True, "set": {}}]
    return rng.choice(choices)


def test_unchanged_only_where_the_patch_gives_an_equal_copy():
    rng = random.Random(17)
    hits = 0
    for _ in range(20000):
        base = _random_value(rng)
        patch = _random_patch(rng, base)
        if not probe_scan.unchanged(base, patch):
            continue
        hits += 1
        try:
            got = apply_patch(base, patch)
        except (LookupError, TypeError, ValueError, ProbeDecodeError) as exc:  # pragma: no cover - the failure to find
            raise AssertionError(f"unchanged({base!r}, {patch!r}) but apply_patch raises {exc!r}") from exc
        assert json.dumps(got) == json.dumps(base), (base, patch)
    assert hits > 1000


def _scanned(path: Path) -> list[tuple]:
    lines, _ = scan_jsonl(path)
    scan = probe_scan.ProbeScanner()
    out = []
    for _, o, exact in lines:
        try:
            got = scan.feed(o, exact)
        except ProbeDecodeError as exc:
            out.append(("error", str(exc)))
            continue
        if got is not None and got.__class__ is tuple:  # a compact record's fields (probe_scan.Fast's order)
            out.append((*got[:5], orjson.dumps(got[4]), *got[5:]))
        elif got is not None:
            out.append((got.rec, got.q_chars, got.a_chars, got.parsed_json))
    return out


def test_scanner_reuse_of_unchanged_answers_matches_the_general_path(monkeypatch, tmp_path):
    """The demo games and the en_demo games written compact, some damaged, scanned with and without
    the fast path: the same records, lengths, JSON keys and values."""
    from tests.test_probe_scan import EN_DEMO, _damage, _encode_demo, _encode_original, _games

    games = [_encode_demo(d, tmp_path / f"demo-{d.name}") for d in _games(ROOT / "data" / "demo")]
    games += [_encode_original(d, tmp_path / f"en-{d.name}") for d in _games(EN_DEMO)]
    for d in _games(ROOT / "data" / "demo")[:3]:  # with lost, torn and hand-made lines
        _damage(_encode_demo(d, tmp_path / f"damaged-{d.name}"))
        games.append(tmp_path / f"damaged-{d.name}")
    calls = {"true": 0}
    real = probe_scan.unchanged

    def counting(base: Any, patch: Any) -> bool:
        got = real(base, patch)
        calls["true"] += got
        return got

    monkeypatch.setattr(probe_scan, "unchanged", counting)
    fast = [_scanned(g / "introspection.jsonl") for g in games]
    assert calls["true"] > 50  # the fast path is exercised
    monkeypatch.setattr(probe_scan, "unchanged", lambda base, patch: False)
    general = [_scanned(g / "introspection.jsonl") for g in games]
    assert fast == general


def _batch_general(games: list) -> dict:
    """batch_tables' result built the plain way: each game's columns (GameRows.columns) joined, numbers
    through numpy in the wide dtype, then narrowed."""
    import numpy as np
    import pyarrow as pa

    from mafiascope.analytics.batches import NUMERIC, SCHEMAS
    from mafiascope.analytics.load import COLUMNS, TABLES

    out = {}
    ok = [g for g in games if g.ok]
    for t in TABLES:
        ids: list[str] = []
        cols: list[list] = [[] for _ in COLUMNS[t]]
        for g in ok:
            got = g.columns(t)
            if got:
                ids += [g.game_id] * len(got[0])
                for j, c in enumerate(got):
                    cols[j] += c
        arrays = [pa.array(ids, type=pa.string())]
        for c, v in zip(COLUMNS[t], cols):
            dt = NUMERIC[t].get(c)
            arrays.append(pa.array(v, type=pa.string()) if dt is None else pa.array(np.array(v, dtype=dt[0]).astype(dt[1])))
        out[t] = pa.Table.from_arrays(arrays, schema=SCHEMAS[t])
    return out


def test_batch_tables_match_the_per_game_columns(tmp_path):
    from mafiascope.analytics.batches import batch_tables
    from mafiascope.analytics.load import parse_rows
    from tests.test_probe_scan import EN_DEMO, _damage, _encode_demo, _games

    dirs = _games(ROOT / "data" / "demo") + _games(EN_DEMO)
    dirs.append(_encode_demo(dirs[0], tmp_path / "compact"))
    dirs.append(_damage(_encode_demo(dirs[1], tmp_path / "damaged")) or tmp_path / "damaged")
    odd = tmp_path / "odd"  # out-of-range counters and times, an unknown victim
    odd.mkdir()
    lines = (dirs[0] / "game.jsonl").read_text(encoding="utf-8").splitlines()
    lines.append(json.dumps({"kind": "night_kill", "round": 2**40, "ts": 1e300, "victim": "nobody", "msg_seq": 2**62}))
    (odd / "game.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    dirs.append(odd)
    games = [parse_rows(d) for d in dirs]
    assert sum(g.n_rows("ra") for g in games) > 1000
    for batch in (games, games[:1], games[-1:], [g for g in games if g.n_rows("pa") == 0] or games[:0]):
        got, want = batch_tables(batch), _batch_general(batch)
        for t, table in want.items():  # schema, then values with NaN equal to NaN (Table.equals says NaN != NaN)
            assert got[t].schema == table.schema, t
            for c in table.column_names:
                assert got[t][c].to_pandas().equals(table[c].to_pandas()), (t, c)


@pytest.mark.parametrize("value", [
    ["a<b", "c"], {"x": "<think>"}, {"x": "<THINK"}, {"x": "<ThInK>é"}, ["<tHink", 1], ["é<", "<"], ["```"], ["é```"],
    [{"player": "Riley", "reason": "x < y"}], "<", "plain", ["é", "ü"], {"k": "\u0130<think"}, {"k": "\u0130 < think"},
])
def test_plain_answer_flag_matches_its_text(value):
    """A stored value's raw text holds no fence or ``<think`` (any case): the scanner's shortcut (no "<"
    at all, or the bytes lowered) agrees with the rule on the text itself."""
    from mafiascope.logs.probe_lines import dumps_answer

    t, _ = probe_scan.ProbeScanner()._answer("Riley", "role_assessment", {"A": value})
    text = dumps_answer(value)
    assert (t.plain, t.raw_len) == ("```" not in text and "<think" not in text.lower(), len(text))


def test_table_lines_without_pydantic_match_the_models():
    """The scanner's seat, probe and step table lines read without pydantic (``probe_scan._ScanTables``)
    give the entries the models give (same keys, order, values and types) and fail where they fail,
    on 20,000 random lines of every kind, with missing, extra and mistyped fields."""
    from mafiascope.logs.probe_codec import ProbeTables

    rng = random.Random(17)
    values = [1, 0, -3, 2**70, True, False, 1.0, "x", "", None, [1], ["a"], {"a": 1}]
    fields = ["i", "s", "k", "player_name", "model", "role", "probe_id", "template", "round", "public_msg_seq",
              "phase", "when", "timestamp", "players", "roles", "mark", "x", "schema_version"]  # fmt: skip
    fast = 0
    for _ in range(20_000):
        kind = rng.choice(["seat", "probe", "step", "seat", "probe", "step", "h", "other", 1, None])
        line: dict[str, Any] = {"@": kind}
        for f in rng.sample(fields, rng.randint(0, 5)):
            line[f] = rng.choice(values)
        if rng.random() < 0.5:  # mostly well-formed: the key field an int
            line[{"seat": "i", "probe": "s"}.get(kind, "k")] = rng.choice([0, 1, 7, 2**70])
        got, want = probe_scan._ScanTables(), ProbeTables()
        outcome = []
        for t in (got, want):
            try:
                t.table(line)
                outcome.append(None)
            except (LookupError, TypeError, ValueError) as exc:  # what the scanner reports as an undecodable line
                outcome.append(type(exc).__name__)
        assert (outcome[0] is None) == (outcome[1] is None), (line, outcome)
        for attr in ("seat", "probe", "step"):
            a, b = getattr(got, attr), getattr(want, attr)
            assert [(k, list(v.items())) for k, v in a.items()] == [(k, list(v.items())) for k, v in b.items()], line
            assert repr(a) == repr(b), line  # the value types too (True is not 1)
        fast += outcome[0] is None and kind in ("seat", "probe", "step")
    assert fast > 1000
