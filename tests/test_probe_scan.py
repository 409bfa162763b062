"""The loader's probe scanner (mafiascope.logs.probe_scan) gives the same tables as the full decoder.

The cold analytics load decodes compact probe records (schema 3) with ProbeScanner, which skips
what the loader never reads (question text, answer_norm, the re-parse of stored values);
``parse_rows(path, full_decode=True)`` runs the full ProbeDecoder instead. Both must give the same
rows, audit counts and skipped-line notes on compact logs of every kind: the bundled demo games
re-encoded (the engine's encoder: templates, quoted answers, patches on previous answers), the
original en_demo corpus re-encoded (LLM answers: fences, repairs, questions stored whole), the
same with damaged and hand-made lines, and a game written by today's engine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mafiascope.analytics.load import parse_rows
from mafiascope.logs.io import GAME_FILE, PROBE_FILE, dumps, read_jsonl
from mafiascope.logs.probe_codec import ProbeDecodeError, ProbeDecoder, ProbeEncoder
from mafiascope.probes.dsl import parse_battery

ROOT = Path(__file__).resolve().parents[1]
EN_DEMO = ROOT / "data" / "corpus" / "mafiascope_en_demo"


def _games(root: Path) -> list[Path]:
    return sorted(d for d in root.iterdir() if (d / GAME_FILE).is_file())


def _write(dest: Path, src: Path, lines: list[dict]) -> Path:
    dest.mkdir(parents=True)
    shutil.copy(src / GAME_FILE, dest / GAME_FILE)
    (dest / PROBE_FILE).write_text("".join(dumps(x) + "\n" for x in lines), encoding="utf-8")
    return dest


def _encode_demo(src: Path, dest: Path) -> Path:
    """A schema-2 demo game written compact by the engine's encoder, with its battery's templates."""
    setup = read_jsonl(src / GAME_FILE)[0]
    battery = parse_battery({k: v for k, v in setup["probes"].items() if k in ("name", "language", "description", "probes")})
    enc = ProbeEncoder(setup["game_id"], [p["name"] for p in setup["players"]], {p.id: p.question_text() for p in battery.active})
    return _write(dest, src, [x for r in read_jsonl(src / PROBE_FILE) for x in enc.encode(r)])


def _encode_original(src: Path, dest: Path) -> Path:
    """An original-format game (LLM answers) written compact: steps numbered by (round, message),
    no templates (so every question is stored whole, as a field the record overrides)."""
    setup = read_jsonl(src / GAME_FILE)[0]
    seats = [p["name"] if isinstance(p, dict) else p for p in setup["players"]]
    enc = ProbeEncoder(setup["game_id"], seats, None)
    steps: dict[tuple, int] = {}
    out = []
    for r in read_jsonl(src / PROBE_FILE):
        r = {**r, "step_index": steps.setdefault((r.get("round"), r.get("public_msg_seq")), len(steps) + 1)}
        out.extend(enc.encode(r))
    return _write(dest, src, out)


def _damage(game: Path) -> None:
    """Lost lines, hand-made lines, a line only the standard library reads (NaN) and a torn last
    line in a compact introspection.jsonl."""
    lines = [json.loads(x) for x in (game / PROBE_FILE).read_text(encoding="utf-8").splitlines()]
    kept = [x for n, x in enumerate(lines) if not (x.get("@") == "p" and n % 23 == 0) and not (x.get("@") == "step" and n % 41 == 0)]
    dec, ok = ProbeDecoder(), []
    for n, x in enumerate(kept):
        try:
            rec = dec.feed(x)
        except ProbeDecodeError:
            continue
        if rec is not None:
            ok.append((n, x, rec))
    ras = [(n, x, rec) for n, x, rec in ok if rec["probe_id"] == "role_assessment"]
    at, a, rec = ras[len(ras) // 2]
    a = {**{k: v for k, v in a.items() if k != "D"}, "A": rec["answer_parsed"]}  # a patch would not fit once a is fed
    d = next(x for n, x, rec in ok if "D" in x)
    again = {**a, "c": [a["k"] if isinstance(c, int) else c for c in a.get("c") or ()]}  # quotes a's own step
    made = [
        {**a, "c": "xy"}, {**a, "c": 5}, {**a, "c": [True]}, {**a, "c": [{"no": 1}]},  # quotes of every wrong kind
        {**a, "x": {"answer_raw": "[1, 2]"}}, again, {**a, "x": {"answer_raw": 7}}, again, {**a, "-": ["answer_raw"]}, again,
        {**a, "-": ["question"]}, {**a, "question": 5}, {**a, "answer_parsed": None}, {**a, "e": "timeout"}, again,
        {**a, "A": None}, {**a, "A": [{"player": "```x```", "confidence": 3}]}, {**a, "A": {"toward_me": "<THINK>"}},
        {**a, "A": "ERROR: 500"}, {**{k: v for k, v in a.items() if k not in ("A", "D")}, "a": "```json\n[{\"player\": 1}]\n```"},
        {**d, "D": [d["k"] + 1000, d["D"][1]]}, {**d, "D": [d["D"][0]]}, {"@": "zzz"}, {"@": "p", "k": 1},
        {"@": "seat", "i": 99, "player_name": 7, "model": "m", "role": "x"}, {**a, "i": 99},
        {"@": "step", "k": 9999, "round": 1, "public_msg_seq": 1, "phase": "day", "when": "w", "timestamp": 1.0, "players": None, "roles": None},
        {**a, "k": 9999},
    ]  # fmt: skip
    fenced = [{**a, "A": [{"player": "```x```", "confidence": 3}]}, {**a, "A": {"toward_me": "<THINK>"}}] * 2  # seen twice
    text = "".join(dumps(x) + "\n" for x in kept[: at + 1] + fenced)  # before any line orjson refuses
    nan = dumps({**{k: v for k, v in a.items() if k != "D"}, "A": [{"player": "Nobody", "confidence": 1.5}]})
    text += nan.replace("1.5}]", "NaN}]") + "\n"  # read by the standard library: no orjson text of its values
    text += "".join(dumps(x) + "\n" for x in kept[at + 1 :] + made)
    (game / PROBE_FILE).write_text(text + '{"@": "p", "k": 3, "i"', encoding="utf-8")


def _assert_same(game: Path) -> dict:
    full, fast = parse_rows(game, full_decode=True), parse_rows(game)
    assert (fast.ok, fast.game_id, fast.audit, fast.skipped) == (full.ok, full.game_id, full.audit, full.skipped), game
    for t, rows in full.rows.items():
        assert len(fast.rows[t]) == len(rows), (game, t)
        for x, y in zip(rows, fast.rows[t]):
            assert repr(x) == repr(y), (game, t, x, y)  # repr: NaN equals NaN, 1 is not 1.0
    return full.rows


def _compact_lines(game: Path) -> list[dict]:
    return [x for x in read_jsonl(game / PROBE_FILE) if x.get("@") == "p"]


def test_demo_games_encoded_compact(tmp_path):
    games = [_encode_demo(d, tmp_path / d.name) for d in _games(ROOT / "data" / "demo")]
    lines = [x for g in games for x in _compact_lines(g)]
    assert sum("D" in x for x in lines) > 100 and sum(isinstance(c, int) for x in lines for c in x.get("c") or ()) > 100
    assert sum(len(_assert_same(g)["probes"]) for g in games) > 1000


def test_llm_games_encoded_compact(tmp_path):
    games = [_encode_original(d, tmp_path / d.name) for d in _games(EN_DEMO)]
    lines = [x for g in games for x in _compact_lines(g)]
    assert sum("question" in x for x in lines) > 100 and sum("```" in (x.get("a") or "") for x in lines) > 10  # fenced
    assert sum("answer_parsed" in x for x in lines) > 5  # where re-parsing the raw answer gives something else
    rows = [_assert_same(g) for g in games]
    assert sum(not r[9] for x in rows for r in x["probes"]) > 5  # answers that did not parse


def test_damaged_and_hand_made_lines(tmp_path):
    games = [_encode_demo(d, tmp_path / "demo" / d.name) for d in _games(ROOT / "data" / "demo")[:3]]
    games += [_encode_original(d, tmp_path / "llm" / d.name) for d in _games(EN_DEMO)[:2]]
    for g in games:
        _damage(g)
        parsed = parse_rows(g)
        assert parsed.audit["probes.undecodable"] >= 5 and parsed.audit["probes.torn_last_line"] == 1
        assert parsed.audit["answers.nan_confidence"] >= 1
        _assert_same(g)


@pytest.mark.slow
def test_a_game_of_todays_engine(tmp_path):
    cmd = [sys.executable, "-m", "mafiascope", "run", "-c", str(ROOT / "configs" / "classic.yaml"), "--seed", "4",
           "--game-id", "g", "--logs", str(tmp_path), "--json", "--no-snapshots"]  # fmt: skip
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert read_jsonl(tmp_path / "g" / PROBE_FILE)[0]["schema_version"] == 3
    assert len(_assert_same(tmp_path / "g")["probes"]) > 300
