"""Human seat on Live Game (issue 16): the seat picker names seats as the game will, and picking a target writes
the closing line into the reply box at once (not only on Send)."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("streamlit")

from .app_support import DEMO, ROOT, assert_clean, new_app, play  # noqa: E402


@pytest.mark.slow
def test_table_seats_match_the_game(tmp_path):
    """The engine shuffles names and seat order by the seed: the picker's names and order are the game's."""
    from app import launcher

    cfg = ROOT / "configs" / "classic.yaml"
    gdir = play(tmp_path, "seat-order", 1, "--no-probes", "--no-snapshots")
    setup = json.loads((gdir / "game.jsonl").read_text().splitlines()[0])
    players = sorted(setup["players"], key=lambda p: p["idx"])
    table = launcher.table_seats(cfg, 1)
    assert [name for _, name in table] == [p["name"] for p in players]
    backends = [s["backend"] for s in __import__("yaml").safe_load(cfg.read_text())["seats"]]
    # each picker label is the config seat that the game gave that name (same backend entry)
    assert [backends[int(lab.split()[-1]) - 1] for lab, _ in table] == [p["backend"] for p in players]
    assert table[0][0] != "seat 1"  # seed 1 puts another config seat first: the old picker's "seat 1" was not the first


@pytest.mark.slow
def test_seat_picker_shows_game_names(tmp_path, monkeypatch):
    from app import launcher

    monkeypatch.setenv("MAFIASCOPE_LOGS", str(tmp_path / "none"))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(mode="launch").run()
    assert_clean(at)
    first_label, first_name = launcher.table_seats(ROOT / "configs" / "classic.yaml", 1)[0]
    box = at.selectbox(key="seat")
    assert box.options[1] == f"{first_name} (seat 1 at the table)", box.options
    at.number_input(key="seed").set_value(5).run()
    first5 = launcher.table_seats(ROOT / "configs" / "classic.yaml", 5)[0][1]
    assert at.selectbox(key="seat").options[1] == f"{first5} (seat 1 at the table)"
    assert first_label.startswith("seat ")


@pytest.mark.slow
def test_target_writes_the_vote_line_into_the_reply(tmp_path, monkeypatch):
    """An open VOTE move (the engine's pending file): choosing a target fills the text box before Send."""
    logs = tmp_path / "logs"
    gdir = logs / "demo-classic-01"
    shutil.copytree(DEMO / "demo-classic-01", gdir)
    setup = json.loads((gdir / "game.jsonl").read_text().splitlines()[0])
    seat = setup["players"][0]["name"]
    (gdir / "human").mkdir()
    (gdir / "human" / f"{seat}.pending.json").write_text(json.dumps({
        "request_id": "r1", "seat": seat, "purpose": "vote", "kind": "act", "messages": [],
        "instruction": "Vote now. End with a line: VOTE: <name>", "format": "VOTE: <name>", "created": 0}))
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(logs))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(game="demo-classic-01").run()
    assert_clean(at)
    target = at.selectbox(key="hp_tgt_r1")
    pick = [o for o in target.options if o != "—"][0]
    at.text_area(key="hp_text_r1").input("I think the quiet one is hiding something.")
    target.set_value(pick).run()
    assert_clean(at)
    assert at.text_area(key="hp_text_r1").value == f"I think the quiet one is hiding something.\nVOTE: {pick}"
    other = [o for o in target.options if o not in ("—", pick)][0]
    at.selectbox(key="hp_tgt_r1").set_value(other).run()  # a second pick replaces the line, it does not add one
    assert at.text_area(key="hp_text_r1").value == f"I think the quiet one is hiding something.\nVOTE: {other}"
    at.button(key="hp_send_r1").click().run()
    reply = json.loads((gdir / "human" / f"{seat}.reply.json").read_text())
    assert reply == {"request_id": "r1", "text": f"I think the quiet one is hiding something.\nVOTE: {other}"}
