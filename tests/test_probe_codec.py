"""Compact probe records (schema 3): every record decodes to exactly what was encoded."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from mafiascope.logs.io import LogFormatError, TornLineWarning, dumps, iter_probe_records, probe_records_at
from mafiascope.logs.probe_codec import ProbeDecoder, ProbeEncoder, chain_value, same
from mafiascope.logs.templates import render

SEATS = ["Ann", "Bo", "Cy"]
TPL = {"role_assessment": 'You are {player}. Labels "{roles}". Before: {last_role_assessment}\nPlayers ({players}) as "{roles}".',
       "social_map": "You are {player}. Roles: {prev_role_assessment}\nOthers ({players})."}  # fmt: skip


def _rec(k: int, i: int, s: int, pid: str, raw: str | None, **over) -> dict:
    parsed = json.loads(raw) if raw and raw[:1] in "[{" else None
    rec = {
        "timestamp": 100.0 + k, "game_id": "g", "round": k // 4, "public_msg_seq": k % 4, "player_idx": i,
        "player_name": SEATS[i], "probe_seq": s, "probe_id": pid, "question": "", "answer_raw": raw,
        "answer_parsed": parsed, "answer_parse_ok": parsed is not None, "answer_repaired": False, "answer_valid": True,
        "model": "m", "role": "Villager", "phase": "day_discuss", "latency_ms": 3, "chain_used_raw_fallback": False,
        "error": None, "speaker": i == 0, "tokens_prompt": 10, "tokens_completion": 5, "tokens_estimated": True,
        "step_index": k, "when": "after_each_message", "answer_norm": None, "think_stripped": False,
        "finished_ts": 100.5 + k, "attempts": 1,
    }  # fmt: skip
    rec.update(over)
    return rec


def _ra(names_conf: list[tuple[str, str, int]]) -> str:
    return json.dumps([{"player": n, "guessed_role": r, "confidence": c} for n, r, c in names_conf], ensure_ascii=False)


def _norm(names_conf):
    return [{"player": n, "role": r, "confidence": float(c)} for n, r, c in names_conf]


FULL_MATCH = {"Ann": "Ann", "Bobby": "Bo", "cy": "Cy"}  # what probes.shapes' fuzzy resolver would say


def _game() -> list[dict]:
    """A small chained game: role_assessment quoted by social_map and by its own next question."""
    out = []
    prev: dict[str, str | None] = {}
    roles = "Mafia|Villager|Unknown"
    for k in range(1, 5):
        for i, seat in enumerate(SEATS):
            rows = [("Ann", "Villager", 50 + k), ("Bobby", "Mafia", 60), ("cy", "Unknown", 10)]
            raw = _ra(rows)
            q = render(TPL["role_assessment"], {"player": seat, "roles": roles, "players": "Ann, Bo, Cy",
                                                "last_role_assessment": prev.get(seat)})  # fmt: skip
            ra = _rec(k, i, 0, "role_assessment", raw, question=q, answer_norm=[{**n, "player": FULL_MATCH[n["player"]]} for n in _norm(rows)])
            out.append(ra)
            text = chain_value(ra)[0]
            prev[seat] = text
            q2 = render(TPL["social_map"], {"player": seat, "prev_role_assessment": text, "players": "Ann, Bo, Cy"})
            out.append(_rec(k, i, 1, "social_map", '{"toward_me": []}', question=q2, answer_norm=[], speaker=False))
    return out


def _roundtrip(records: list[dict], templates=TPL, seats=SEATS) -> tuple[list[dict], list[str]]:
    enc = ProbeEncoder("g", seats, templates)
    lines = [dumps(x) for r in records for x in enc.encode(r)]
    dec = ProbeDecoder()
    back = [y for y in (dec.feed(json.loads(x)) for x in lines) if y is not None]
    return back, lines


def test_a_chained_game_decodes_exactly_and_stores_questions_and_answers_once():
    recs = _game()
    back, lines = _roundtrip(recs)
    assert len(back) == len(recs) and all(same(a, b) and list(a) == list(b) for a, b in zip(back, recs))
    text = "\n".join(lines)
    assert text.count("Labels") == 1  # the template, once
    assert '"Before: ' not in text and "guessed_role" in text
    stored = [json.loads(x) for x in lines if json.loads(x).get("@") == "p"]
    assert all("question" not in x and "answer_parsed" not in x for x in stored)
    assert any("D" in x for x in stored)  # a later answer is a patch of the seat's previous one
    assert all(isinstance(c, int) for x in stored if x["s"] == 1 for c in x["c"])  # quotes refer to records
    # "Bobby" -> Bo is the full resolver's fuzzy match only: those records keep their answer_norm,
    # social_map's (derivable) is not stored
    assert all("answer_norm" in x for x in stored if x["s"] == 0) and not any("answer_norm" in x for x in stored if x["s"] == 1)


def test_records_the_encoder_cannot_derive_are_kept_field_by_field():
    odd = [
        _rec(1, 0, 0, "role_assessment", '```json\n[{"player": "Ann", "guessed_role": "Mafia", "confidence": 5}]\n```',
             question="free text question", answer_repaired=False),  # fenced: re-parsed, not a stored value
        _rec(2, 0, 0, "role_assessment", None, error="timeout", answer_valid=None, question="", lagged=True),
        {**_rec(3, 1, 2, "custom_probe", '{"x": 1}', answer_norm={"x": 1.0}, think_stripped=True, inherited=True), "c": "clash"},
        _rec(4, 2, 0, "role_assessment", "not json at all", answer_valid=False, chain_used_raw_fallback=True, attempts=3,
             tokens_estimated=False),
        _rec(5, 1, 0, "role_assessment", '[{"player": "Ann", "guessed_role": "Mafia", "confidence": NaN}]',
             answer_parsed=[{"player": "Ann", "guessed_role": "Mafia", "confidence": None}]),  # NaN: not JSON, kept as text
        {"game_id": "g", "probe_id": "x", "answer_raw": "kept whole"},  # no step key: stored as it is
    ]
    del odd[3]["tokens_prompt"]  # a missing field stays missing
    back, lines = _roundtrip(odd)
    assert len(back) == len(odd)
    for a, b in zip(back, odd):
        assert same(a, b), (a, b)


def test_a_record_whose_tables_are_missing_names_the_line(tmp_path: Path):
    back, lines = _roundtrip(_game())
    assert json.loads(lines[1])["@"] == "seat"
    (tmp_path / "introspection.jsonl").write_text("\n".join(lines[:1] + lines[2:]) + "\n", encoding="utf-8")  # seat 0's line lost
    with pytest.raises(LogFormatError, match=r"introspection.jsonl:4: record of step 1, seat 0, probe 0: its seat table line is missing"):
        list(iter_probe_records(tmp_path, skip_corrupt=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TornLineWarning)
        kept = list(iter_probe_records(tmp_path))
    assert kept and all(r["player_idx"] != 0 for r in kept) and any("skipping probe record" in str(w.message) for w in caught)
    (tmp_path / "introspection.jsonl").write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    with pytest.raises(LogFormatError, match="header line is missing"):
        list(iter_probe_records(tmp_path, skip_corrupt=False))


def test_records_at_byte_offsets(tmp_path: Path):
    recs = _game()
    _, lines = _roundtrip(recs)
    (tmp_path / "introspection.jsonl").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    offsets, pos = [], 0
    for x in lines:
        if json.loads(x).get("@") == "p":
            offsets.append(pos)
        pos += len(x.encode()) + 1
    got = probe_records_at(tmp_path, offsets[-3:])
    assert [got[o] for o in offsets[-3:]] == recs[-3:]
    assert probe_records_at(tmp_path, [0]) == {}  # the header is not a record


@pytest.mark.parametrize("edit, message", [
    (lambda ls: [ls[0], {**ls[1], "i": "zero"}, *ls[2:]], r"seat line: i: Input should be a valid integer"),
    (lambda ls: [{**ls[0], "codec": 99}, *ls[1:]], r"written with probe codec 99; this mafiascope reads up to 1"),
    (lambda ls: [ls[0], {**ls[1], "@": "nonsense"}, *ls[2:]], r"unknown line kind 'nonsense'"),
])
def test_a_bad_table_line_is_named(tmp_path: Path, edit, message):
    _, lines = _roundtrip(_game())
    bad = edit([json.loads(x) for x in lines])
    (tmp_path / "introspection.jsonl").write_text("".join(json.dumps(x) + "\n" for x in bad), encoding="utf-8")
    with pytest.raises(LogFormatError, match=message):
        list(iter_probe_records(tmp_path, skip_corrupt=False))


EN_DEMO = Path(__file__).resolve().parents[1] / "data" / "corpus" / "mafiascope_en_demo"


def test_llm_answers_of_the_original_corpus_round_trip():
    """Foreign records with LLM answers (fences, prose, repairs), given step indexes: exact both ways."""
    from mafiascope.logs.io import iter_jsonl

    game = next(d for d in sorted(EN_DEMO.iterdir()) if (d / "introspection.jsonl").is_file())
    recs = list(iter_jsonl(game / "introspection.jsonl", skip_corrupt=True))
    steps: dict = {}
    for r in recs:
        r["step_index"] = steps.setdefault((r["round"], r["public_msg_seq"]), len(steps))
    setup = next(iter_jsonl(game / "game.jsonl"))
    back, lines = _roundtrip(recs, templates=None, seats=[p["name"] for p in setup["players"]])
    assert len(back) == len(recs) > 100 and all(same(a, b) for a, b in zip(back, recs))
    stored = [json.loads(x) for x in lines if json.loads(x).get("@") == "p"]
    assert sum("answer_parsed" not in x for x in stored) > len(stored) // 2  # re-parsing the raw answer gives it back
