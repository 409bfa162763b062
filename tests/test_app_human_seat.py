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


def _demo_copy(logs):
    """demo-classic-01 copied under ``logs``, and its setup record."""
    gdir = logs / "demo-classic-01"
    shutil.copytree(DEMO / "demo-classic-01", gdir)
    return gdir, json.loads((gdir / "game.jsonl").read_text().splitlines()[0])


def _pending(gdir, seat: str, rid: str, purpose: str, instruction: str, fmt: str, **more) -> None:
    """An open move of ``seat`` as the engine's human backend writes it."""
    (gdir / "human").mkdir(exist_ok=True)
    (gdir / "human" / f"{seat}.pending.json").write_text(json.dumps({
        "request_id": rid, "seat": seat, "purpose": purpose, "kind": "act", "messages": [], "instruction": instruction,
        "format": fmt, "created": 0, **more}))


@pytest.mark.slow
def test_target_writes_the_vote_line_into_the_reply(tmp_path, monkeypatch):
    """An open VOTE move (the engine's pending file): choosing a target fills the text box before Send."""
    logs = tmp_path / "logs"
    gdir, setup = _demo_copy(logs)
    seat = setup["players"][0]["name"]
    _pending(gdir, seat, "r1", "vote", "Vote now. End with a line: VOTE: <name>", "VOTE: <name>")
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


def _human_game(logs, seat: str, *, running: bool):
    """demo-classic-01 with ``seat`` played by a person (backend app_human); without its game_over while ``running``."""
    gdir = logs / "demo-classic-01"
    shutil.copytree(DEMO / "demo-classic-01", gdir)
    lines = (gdir / "game.jsonl").read_text().splitlines()
    setup = json.loads(lines[0])
    for p in setup["players"]:
        if p["name"] == seat:
            p["backend"], p["model"] = "app_human", "human"
    recs = [json.dumps(setup)] + [ln for ln in lines[1:] if running is False or '"game_over"' not in ln]
    (gdir / "game.jsonl").write_text("\n".join(recs) + "\n")  # written now: a running game's log is fresh
    return gdir


@pytest.mark.slow
def test_an_eliminated_human_is_told_so_not_to_wait(tmp_path, monkeypatch):
    """Morgan (killed in night 1 of demo-classic-01) played by a person, the game still running: the page says the
    seat was eliminated instead of "Waiting for your turn"."""
    logs = tmp_path / "logs"
    _human_game(logs, "Morgan", running=True)
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(logs))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(game="demo-classic-01").run()
    assert_clean(at)
    said = " ".join(w.value for w in at.warning) + " ".join(i.value for i in at.info)
    assert "killed in night 1" in said and "Waiting for your turn" not in said, said


@pytest.mark.slow
def test_a_human_mafia_is_offered_only_the_engine_s_targets(tmp_path, monkeypatch):
    """The engine lists the move's targets in the pending file; a Mafia's kill never offers its partner."""
    logs = tmp_path / "logs"
    gdir, setup = _demo_copy(logs)
    mafia = [p["name"] for p in setup["players"] if p["role"] == "Mafia"]
    town = [p["name"] for p in setup["players"] if p["role"] != "Mafia"]
    _pending(gdir, mafia[0], "k1", "night_mafia", "Choose a player to kill. End with a line: ACTION: Kill <name>",
             "ACTION: Kill <name>", targets=town)
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(logs))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(game="demo-classic-01").run()
    assert_clean(at)
    options = at.selectbox(key="hp_tgt_k1").options
    assert mafia[1] not in options and options == ["—", *town]


@pytest.mark.slow
def test_the_engine_lists_a_human_mafia_s_targets_without_its_partner(tmp_path):
    """A real game with a human Mafia seat: its night move's pending file lists the living town, not the partner."""
    import subprocess
    import sys
    import time

    import yaml

    cfg = yaml.safe_load((ROOT / "configs" / "classic.yaml").read_text())
    cfg["rules"]["intro_round"] = False
    roles = ["Mafia", "Mafia", "Doctor", "Villager", "Villager", "Villager", "Villager"]  # a role for every seat or none
    cfg["seats"] = [{**seat, "role": role} for seat, role in zip(cfg["seats"], roles)]
    cfg["seats"][0]["backend"] = "me"
    cfg["backends"]["me"] = {"type": "human", "timeout_s": 60}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    proc = subprocess.Popen([sys.executable, "-m", "mafiascope", "run", "-c", str(tmp_path / "c.yaml"), "--seed", "3",
                             "--logs", str(tmp_path), "--game-id", "hm", "--no-probes", "-q"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, req = time.time() + 60, None
        while time.time() < deadline and req is None:
            found = list((tmp_path / "hm" / "human").glob("*.pending.json")) if (tmp_path / "hm" / "human").is_dir() else []
            req = json.loads(found[0].read_text()) if found else None
            time.sleep(0.1)
        assert req is not None and req["purpose"] == "night_mafia", req
        setup = json.loads((tmp_path / "hm" / "game.jsonl").read_text().splitlines()[0])
        partner = [p["name"] for p in setup["players"] if p["role"] == "Mafia" and p["name"] != req["seat"]]
        town = sorted(p["name"] for p in setup["players"] if p["role"] != "Mafia")
        assert partner and sorted(req["targets"]) == town
    finally:
        proc.kill()
        proc.wait(10)
