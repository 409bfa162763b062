"""The engine builds and writes its records through the log schema's models (engine/records.py)."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import ValidationError

from mafiascope.config import load_game_config, shipped_config
from mafiascope.engine.records import build, event, line
from mafiascope.play.game import play_game
from mafiascope.logs.schema import EVENT_MODELS, NightKill, NoElimination, Setup, Snapshot, Utterance, parse_event


def test_an_event_keeps_the_writers_keys_and_order_and_adds_no_default():
    ev = event(NoElimination, "g1", round=2, reason="tie", tied=["A", "B"])
    assert list(ev) == ["kind", "round", "reason", "tied"]  # no game_id/ts (the runner adds them), no msg_seq default
    assert ev == {"kind": "no_elimination", "round": 2, "reason": "tie", "tied": ["A", "B"]}
    fault = {"error": "429", "attempts": 3, "fallback": "abstain", "fatal": True}
    ev = event(Utterance, "g1", kind="day_vote", round=1, msg_seq=4, player="A", response="", visible_to=None, fault=fault)
    assert list(ev) == ["kind", "round", "msg_seq", "player", "response", "visible_to", "fault"] and ev["fault"] == fault


@pytest.mark.parametrize("bad", [{"victim": None}, {"victim": ["A"]}, {}])
def test_a_field_the_schema_refuses_fails_where_the_event_is_made(bad):
    with pytest.raises(ValidationError):
        event(NightKill, "g1", round=1, **bad)


def test_a_line_is_checked_against_the_model_of_its_kind():
    ok = {"game_id": "g1", "kind": "vote_tally", "round": 1, "tally": {"A": 2}, "votes": {"B": "A", "C": "A"}, "ts": 1.0}
    assert line(ok) == ok
    with pytest.raises(ValidationError):
        line({**ok, "tally": {"A": "two"}})


def test_opaque_mappings_pass_through_uncopied():
    state = {"events": [{"kind": "x"}]}
    rec = build(Snapshot, {"game_id": "g1", "round": 1, "msg_seq": -1, "phase": "round_end", "state": state}, opaque=("state",))
    assert rec["state"] is state
    with pytest.raises(ValidationError):
        build(Setup, {"game_id": "g1", "kind": "setup", "players": "nobody"})


@pytest.mark.slow
def test_every_kind_a_ten_seat_game_writes_has_its_schema_model(tmp_path):
    cfg = load_game_config(shipped_config("tournament_sport"))  # shot order, nominations, unanimous shots
    asyncio.run(play_game(cfg, logs_dir=tmp_path, seed=14, game_id="g", probes=False, snapshots=False))
    recs = [json.loads(x) for x in (tmp_path / "g" / "game.jsonl").read_text(encoding="utf-8").splitlines()]
    kinds = {r["kind"] for r in recs}
    assert {"shot_order", "nomination", "night_shots", "host", "game_over"} <= kinds
    assert kinds - {"setup"} <= set(EVENT_MODELS), kinds - set(EVENT_MODELS)
    for r in recs:
        parse_event(r)
