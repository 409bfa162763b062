"""mafiascope.logs' read API: read_game on every log version and source, damaged files, StepKey, Timeline,
the battery snapshot, and docs/logs.md's examples run as written."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mafiascope.logs import (ROUND_END, BatterySnapshot, LogFormatError, MissingSetupError, StepKey, Timeline, iter_games,
                             kinds, read_game, step_label)  # fmt: skip
from mafiascope.logs.io import TornLineWarning, iter_jsonl, list_game_dirs
from mafiascope.logs.schema import SCHEMA_VERSION, DayEliminate, Event, GameOver, NightKill, SheriffResult, Utterance

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "logs"
DEMO = ROOT / "data" / "demo"
CORPUS = ROOT / "data" / "corpus"  # the original's real corpora, bundled


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


# ----------------------------------------------------------------------------- read_game on every source


@pytest.mark.parametrize("version", ["v0", "v1", "v2"])
def test_read_game_every_fixture_version(version):
    (d,) = list_game_dirs(FIXTURES / version)
    log = read_game(d)
    assert log.setup.kind == kinds.SETUP and log.game_id == d.name
    assert len(log.records) == _lines(d / "game.jsonl") - 1 == len(log.events)
    assert isinstance(log.events[-1], GameOver) and log.game_over.winner in ("Mafia", "Villagers", "Draw")
    assert all(type(e) is not Event for e in log.events)  # every kind the fixtures hold has its model
    assert len(log.probes) == _lines(d / "introspection.jsonl") > 0
    battery = log.setup.probes
    if version == "v0":  # the original format recorded no battery
        assert battery is None
    else:
        assert battery.name == "suspicion_en" and battery.active_ids == ["suspicion_ranking"] and len(battery.sha256_16) == 16
        assert {p.probe_id for p in log.probes} == {"suspicion_ranking"}
    tl = log.timeline()
    assert [s.idx for s in tl.steps] == list(range(len(tl.steps))) and tl.steps == sorted(tl.steps, key=lambda s: s.key)
    assert len(tl.event_step) == len(log.records)


def test_read_game_accepts_the_game_file_and_rejects_a_non_game(tmp_path):
    d = DEMO / "demo-classic-01"
    assert read_game(d / "game.jsonl").game_id == read_game(d).game_id == "demo-classic-01"
    with pytest.raises(FileNotFoundError, match="no game.jsonl"):
        read_game(tmp_path)
    (tmp_path / "game.jsonl").write_text(json.dumps({"kind": "night_kill", "game_id": "x", "victim": "A"}) + "\n")
    with pytest.raises(MissingSetupError, match=r"game\.jsonl:1: the first record is not a setup"):
        read_game(tmp_path)


def test_read_game_on_demo_games():
    logs = list(iter_games(DEMO))
    assert len(logs) == len(list_game_dirs(DEMO)) >= 10
    for log in logs:
        assert log.game_over is not None and log.setup.probes is not None
        assert set(log.roles) == set(log.names) and len(log.names) == len(log.setup.players)
        says = log.events_of(Utterance)
        assert says and all(e.kind in kinds.UTTERANCE_KINDS for e in says)
        deaths = [e.victim for e in log.events_of(NightKill)] + [e.eliminated for e in log.events_of(DayEliminate)]
        assert len(deaths) == len(set(deaths))  # nobody dies twice
        assert len(log.probes) == len(log.probe_dicts)


def test_demo_classic_01_facts_checked_by_hand():
    """Read off the file by hand (lines 12, 27, 31, 32): Morgan shot and Casey voted out in round 1,
    Kennedy shot in round 2, Mafia parity."""
    log = read_game(DEMO / "demo-classic-01")
    assert log.roles["Alex"] == "Doctor" and sorted(n for n, r in log.roles.items() if r == "Mafia") == ["Indigo", "Riley"]
    assert [(e.round, e.victim) for e in log.events_of(NightKill)] == [(1, "Morgan"), (2, "Kennedy")]
    assert [(e.round, e.eliminated) for e in log.events_of(DayEliminate)] == [(1, "Casey")]
    assert [log.lines[log.records.index(e)] for e in log.records_of(kinds.NIGHT_KILL, kinds.GAME_OVER)] == [12, 31, 32]
    assert (log.game_over.winner, log.game_over.reason) == ("Mafia", "mafia_parity")
    tl = log.timeline()
    assert [s.label for s in tl.steps if s.seq == ROUND_END] == ["R1.end"]
    end = tl.steps[tl.index("R1.end")]
    assert end.phase == "round_end" and end.speaker is None
    assert end.alive == {"Alex", "Indigo", "Kennedy", "Quinn", "Riley"}


def test_arena_games_without_a_battery():
    logs = list(iter_games(ROOT / "data" / "arena"))
    assert logs and all(g.setup.probes is None and g.probes == [] for g in logs)
    assert all(g.setup.game_type for g in logs)


def test_original_corpus_read_as_is_and_after_import(tmp_path):
    from mafiascope.analytics.original_format import import_corpus

    src = CORPUS / "mafiascope_en_demo"
    originals = list(iter_games(src))
    assert originals and all(g.setup.probes is None and g.setup.schema_version == SCHEMA_VERSION for g in originals)  # default: no field
    import_corpus(src, tmp_path / "imported")
    imported = {g.game_id: g for g in iter_games(tmp_path / "imported")}
    assert set(imported) == {g.game_id for g in originals}
    for g in originals:
        i = imported[g.game_id]
        assert len(i.events) == len(g.events) and len(i.probes) == len(g.probes) > 0
        assert i.timeline().labels == g.timeline().labels


# ----------------------------------------------------------------------------- damaged files


def _copy_fixture(tmp_path: Path) -> Path:
    (src,) = list_game_dirs(FIXTURES / "v2")
    return Path(shutil.copytree(src, tmp_path / src.name))


def test_torn_last_line_is_skipped_with_file_and_line(tmp_path):
    d = _copy_fixture(tmp_path)
    gfile = d / "game.jsonl"
    n = _lines(gfile)
    gfile.write_text(gfile.read_text(encoding="utf-8") + '{"kind": "host", "te', encoding="utf-8")
    with pytest.warns(TornLineWarning, match=rf"game\.jsonl:{n + 1}: skipping torn last line"):
        log = read_game(d)
    assert len(log.records) == n - 1 and log.finished


def test_corrupt_middle_line_names_file_and_line(tmp_path):
    d = _copy_fixture(tmp_path)
    gfile = d / "game.jsonl"
    lines = gfile.read_text(encoding="utf-8").splitlines()
    lines[4] = lines[4][:20]
    gfile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(LogFormatError, match=r"game\.jsonl:5: corrupt JSONL line"):
        read_game(d)
    with pytest.warns(TornLineWarning, match=r"game\.jsonl:5: skipping corrupt line"):
        log = read_game(d, skip_corrupt=True)
    assert len(log.records) == len(lines) - 2


def test_invalid_record_names_file_and_line(tmp_path):
    d = _copy_fixture(tmp_path)
    gfile = d / "game.jsonl"
    lines = gfile.read_text(encoding="utf-8").splitlines()
    bad = next(i for i, line in enumerate(lines) if '"night_kill"' in line)
    rec = json.loads(lines[bad])
    del rec["victim"]
    lines[bad] = json.dumps(rec)
    gfile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(LogFormatError, match=rf"game\.jsonl:{bad + 1}: invalid night_kill record: victim"):
        read_game(d).events  # noqa: B018
    with pytest.warns(TornLineWarning, match=rf"game\.jsonl:{bad + 1}: invalid night_kill"):
        events = read_game(d, skip_corrupt=True).events
    assert len(events) == len(lines) - 2


# ----------------------------------------------------------------------------- StepKey

keys = st.builds(StepKey, st.integers(0, 40), st.integers(-1, 500))


@given(keys)
def test_label_round_trip(k):
    assert StepKey.parse(k.label) == k and step_label(k.round, k.msg_seq) == k.label
    if k.is_round_end:
        for form in (f"R{k.round}-end", f"R{k.round}end", f"R{k.round} end", f"r{k.round}.END"):
            assert StepKey.parse(form) == k
        assert k.label == f"R{k.round}.end"


@given(st.lists(keys, max_size=30))
def test_order_is_chronological_round_end_last(ks):
    s = sorted(ks)
    for a, b in zip(s, s[1:]):
        assert a.round < b.round or (a.round == b.round and (b.is_round_end or (not a.is_round_end and a.msg_seq <= b.msg_seq)))


@pytest.mark.parametrize("bad", ["", "1.5", "R1", "R1.x", "R-1.2", "R1..end", "R1.5.6", "step"])
def test_parse_rejects(bad):
    with pytest.raises(ValueError):
        StepKey.parse(bad)


def test_step_key_of_pairs_and_original_spelling():
    assert StepKey.of([2, -1]) == StepKey.of("R2.end") == StepKey(2, ROUND_END)
    assert step_label(3, -1, original=True) == "R3 end" and StepKey.parse("R3 end").label == "R3.end"
    assert StepKey(1, 9) < StepKey(1, ROUND_END) < StepKey(2, 0)
    with pytest.raises(ValueError):
        StepKey(1, -2)


# ----------------------------------------------------------------------------- Timeline on a hand-built log


def _utt(kind: str, rnd: int, seq: int, player: str, ts: float) -> dict:
    return {"game_id": "g", "kind": kind, "round": rnd, "msg_seq": seq, "player": player, "response": "...", "ts": ts}


def _probe(rnd: int, pms: int, who: str, ts: float, answer: object, ok: bool = True, pid: str = "suspicion_ranking") -> dict:
    return {"game_id": "g", "round": rnd, "public_msg_seq": pms, "player_idx": 0, "player_name": who, "probe_seq": 0,
            "probe_id": pid, "timestamp": ts, "answer_parsed": answer, "answer_parse_ok": ok, "phase": "x"}  # fmt: skip


def test_timeline_hand_built():
    """A, B, C, D: A speaks (R0.1), B speaks (R0.2), night kill of C, D votes at R1.1, round 1 ends; D is eliminated after."""
    events = [
        _utt("intro", 0, 1, "A", 1.0),
        _utt("intro", 0, 2, "B", 2.0),
        {"game_id": "g", "kind": "night_kill", "round": 1, "victim": "C", "ts": 3.0},
        _utt("day_vote", 1, 1, "D", 4.0),
        {"game_id": "g", "kind": "day_eliminate", "round": 1, "eliminated": "D", "role": "Villager", "votes": 2, "ts": 4.5},
        {"game_id": "g", "kind": "game_over", "round": 1, "winner": "Mafia", "ts": 6.0},
    ]
    probes = [
        _probe(0, 1, "B", 1.1, ["A"]),
        _probe(1, -1, "B", 5.0, None, ok=False),  # unparsed: the earlier answer is carried
        _probe(1, -1, "A", 5.0, ["B"]),
        _probe(1, 1, "A", 4.1, ["D"]),
    ]
    tl = Timeline.build(["A", "B", "C", "D"], events, probes)
    assert tl.labels == ["R0.1", "R0.2", "R1.1", "R1.end"]
    assert [s.speaker for s in tl.steps] == ["A", "B", "D", None]
    assert [s.phase for s in tl.steps] == ["intro", "intro", "day_vote", "round_end"]
    assert [sorted(s.alive) for s in tl.steps] == [["A", "B", "C", "D"], ["A", "B", "C", "D"], ["A", "B", "D"], ["A", "B"]]
    assert tl.steps[0].ts == 1.1 and tl.steps[1].ts == 2.0  # earliest probe call, else the message's time
    assert tl.event_step == [0, 1, 2, 2, 3, 3]  # kill visible from R1.1; elimination from the round end; game over last
    assert tl.belief("B", 0, "suspicion_ranking") == (["A"], False)
    assert tl.belief("B", 3, "suspicion_ranking") == (["A"], True)
    assert tl.belief("A", 2, "suspicion_ranking") == (["D"], False)
    assert tl.belief("A", 3, "suspicion_ranking") == (["B"], False)
    assert tl.belief("C", 3, "suspicion_ranking") == (None, False) and tl.belief("A", 99, "x") == (None, False)
    assert tl.index("R1-end") == 3 and tl.index([0, 2]) == 1 and tl.index("R7.1") is None and tl.index("nonsense") is None


# ----------------------------------------------------------------------------- the battery snapshot


def test_battery_reads_every_recorded_shape():
    probe = {"id": "suspicion_ranking", "question": "Q {player}", "when": ["after_round"], "custom": 1}
    full = BatterySnapshot.model_validate({"name": "b", "probes": [probe], "sha256_16": "0" * 16, "probe_ids": ["suspicion_ranking"],
                                           "roles": "Mafia|Villager|Unknown", "max_lag_s": 2.5, "future_field": True})  # fmt: skip
    bare = BatterySnapshot.model_validate([probe])
    under = BatterySnapshot.model_validate({"name": "b", "battery": [probe]})
    for b in (full, bare, under):
        assert [p.id for p in b.probes] == ["suspicion_ranking"] and b.active_ids == ["suspicion_ranking"]
        assert b.definitions() == [probe]  # exactly as recorded, unknown fields kept
    assert full.model_extra == {"future_field": True}
    off = BatterySnapshot.model_validate([probe, {"id": "plan", "enabled": False}])
    assert off.active_ids == ["suspicion_ranking"]


def test_parent_game_rebuilds_its_battery_from_the_snapshot():
    from mafiascope.replay.source import ParentGame, battery_list

    (d,) = list_game_dirs(FIXTURES / "v2")
    parent = ParentGame(d)
    cfg = parent.config()
    assert [p["id"] for p in cfg.probes.probes] == ["suspicion_ranking"]  # the recorded definitions, as dicts
    assert battery_list(parent.setup["probes"]) == parent.setup["probes"]["probes"]
    assert battery_list(None) is None and battery_list({"name": "x"}) is None and battery_list([{"no": "id"}]) is None


# ----------------------------------------------------------------------------- snapshots


def test_snapshots_lazy_with_and_without_contexts():
    from mafiascope.engine.snapshots import derive_contexts, iter_snapshots

    (d,) = list_game_dirs(FIXTURES / "v2")
    log = read_game(d)
    bare = log.snapshots()
    full = log.snapshots(contexts=derive_contexts)
    engine = list(iter_snapshots(d / "state.jsonl"))
    assert len(bare) == len(full) == len(engine) > 0
    assert all(s.contexts == "derived" and not any(p.messages for p in s.players) for s in bare)
    assert [[p.messages for p in s.players] for s in full] == [[p["messages"] for p in s["players"]] for s in engine]
    assert [s.state for s in bare] == [s["state"] for s in engine]


# ----------------------------------------------------------------------------- docs/logs.md runs


def test_docs_examples_run(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "logs.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 6
    ns: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the demo data reads cleanly
        for b in blocks:
            exec(compile(b, "docs/logs.md", "exec"), ns)
    out = capsys.readouterr().out
    assert "demo-classic-01 classic" in out and "R1.end round_end" in out and "chained_en" in out


def test_sheriff_results_are_typed():
    (d,) = list_game_dirs(FIXTURES / "v2")
    raw = [r for r in iter_jsonl(d / "game.jsonl") if r.get("kind") == kinds.NIGHT_SHERIFF_RESULT]
    typed = read_game(d).events_of(SheriffResult)
    assert [(e.sheriff, e.checked, e.result) for e in typed] == [(r["sheriff"], r["checked"], r["result"]) for r in raw]


def test_invalid_setup_names_file_and_line_on_first_use(tmp_path):
    d = _copy_fixture(tmp_path)
    gfile = d / "game.jsonl"
    lines = gfile.read_text(encoding="utf-8").splitlines()
    setup = json.loads(lines[0])
    setup["players"] = "nobody"
    gfile.write_text("\n".join([json.dumps(setup), *lines[1:]]) + "\n", encoding="utf-8")
    log = read_game(d)  # the raw records are there (the app's index reads only those)
    assert log.game_id == setup["game_id"] and log.raw_setup["players"] == "nobody"
    with pytest.raises(LogFormatError, match=r"game\.jsonl:1: invalid setup record: players"):
        log.setup  # noqa: B018


def test_every_shipped_battery_snapshot_reads_and_round_trips():
    from mafiascope.probes import dsl

    files = sorted((ROOT / "configs" / "probes").glob("*.yaml"))
    assert files
    for f in files:
        snap = dsl.load_battery(f).snapshot(str(f))
        b = BatterySnapshot.model_validate(snap)
        assert b.definitions() == snap["probes"] and b.active_ids == snap["probe_ids"] and b.sha256_16 == snap["sha256_16"]
