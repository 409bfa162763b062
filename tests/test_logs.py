"""Log I/O: append+flush writer, torn last line, corrupt middle line, game ids, schema round trip."""

from __future__ import annotations

import json
import warnings

import pytest

from mafiascope.logs.io import JsonlWriter, LogFormatError, TornLineWarning, game_dir, read_jsonl
from mafiascope.logs.schema import ProbeRecord, Setup, Snapshot, parse_event, validate_game_id


def test_writer_flushes_each_record(tmp_path):
    path = tmp_path / "g" / "game.jsonl"
    w = JsonlWriter(path)
    w.write({"kind": "a", "x": 1})
    # visible to a reader before close: a crash loses at most the record being written
    assert read_jsonl(path) == [{"kind": "a", "x": 1}]
    w.write({"kind": "b", "text": "Привет"})
    w.close()
    assert [r["kind"] for r in read_jsonl(path)] == ["a", "b"]
    assert "Привет" in path.read_text(encoding="utf-8")


def test_writer_refuses_nan(tmp_path):
    with JsonlWriter(tmp_path / "x.jsonl") as w, pytest.raises(ValueError):
        w.write({"confidence": float("nan")})


def test_torn_last_line_is_skipped_with_a_warning_naming_file_and_line(tmp_path):
    path = tmp_path / "game.jsonl"
    path.write_text('{"kind": "a"}\n{"kind": "b"}\n{"kind": "c", "resp')
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        rows = read_jsonl(path)
    assert [r["kind"] for r in rows] == ["a", "b"]
    assert any(issubclass(w.category, TornLineWarning) and f"{path}:3" in str(w.message) for w in got)


def test_corrupt_middle_line_is_an_error_unless_skipped(tmp_path):
    path = tmp_path / "game.jsonl"
    path.write_text('{"kind": "a"}\nnot json\n{"kind": "c"}\n')
    with pytest.raises(LogFormatError, match=r"game.jsonl:2"):
        read_jsonl(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [r["kind"] for r in read_jsonl(path, skip_corrupt=True)] == ["a", "c"]


@pytest.mark.parametrize("bad", ["../x", "a/b", "/abs", ".hidden", "", "a\\b", "x" * 200, "..", "a..b"])
def test_game_ids_with_path_characters_are_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="invalid game id"):
        validate_game_id(bad)
    with pytest.raises(ValueError):
        game_dir(tmp_path, bad)


def test_valid_game_ids():
    for ok in ["36594b66-05d1-434c-be65-13360eafca9e", "demo-classic-01", "g.1_2"]:
        assert validate_game_id(ok) == ok


def test_schema_round_trip_keeps_unknown_fields():
    rec = {"game_id": "g", "kind": "day_vote", "round": 1, "msg_seq": 3, "player": "A", "response": "VOTE: B", "ts": 1.0, "future_field": [1, 2]}
    ev = parse_event(rec)
    assert type(ev).__name__ == "Utterance"
    again = json.loads(ev.model_dump_json(exclude_unset=True))
    assert again == rec
    unknown = parse_event({"game_id": "g", "kind": "team_vote", "round": 2, "whatever": 1})
    assert unknown.kind == "team_vote" and unknown.model_extra == {"whatever": 1}


def test_setup_probe_and_snapshot_models_validate():
    s = Setup.model_validate({"game_id": "g", "players": [{"name": "A", "role": "Mafia", "personality": {"O": 10}}]})
    assert s.players[0].personality.N == 50
    p = ProbeRecord.model_validate({"game_id": "g", "round": 0, "public_msg_seq": -1, "player_idx": 2, "player_name": "A", "probe_seq": 1, "probe_id": "x"})
    assert p.answer_parse_ok is False and p.error is None
    snap = Snapshot.model_validate({"game_id": "g", "round": 1, "msg_seq": -1, "phase": "round_end", "pending": {"stage": "night_mafia"}})
    assert snap.pending.stage == "night_mafia"
