"""Compact snapshots (schema_version 2): deltas and derived contexts decode to the full records."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mafiascope.config import load_game_config
from mafiascope.play.game import play_game
from mafiascope.engine.snapshots import SnapshotDecoder, SnapshotEncoder, iter_snapshots
from mafiascope.logs.io import LogFormatError, read_jsonl

ROOT = Path(__file__).resolve().parents[1]
V1 = ROOT / "tests" / "fixtures" / "logs" / "v1" / "fixture-v1-classic-sheriff" / "state.jsonl"


def test_full_records_survive_encode_then_decode():
    full = read_jsonl(V1)
    enc, dec = SnapshotEncoder(), SnapshotDecoder()
    for i, rec in enumerate(full, start=1):
        small = enc.encode(rec)
        assert "messages" not in json.dumps(small.get("players", [])) and small["contexts"] == "derived"
        back = dec.decode(json.loads(json.dumps(small)), i)
        for key in ("state", "probe_memory", "round", "msg_seq", "pending", "alive"):
            assert back[key] == rec[key], (i, key)
        # the contexts rebuilt from the state are the ones the seats had (stored in full by version 1)
        assert [p["messages"] for p in back["players"]] == [p["messages"] for p in rec["players"]], i


@pytest.mark.slow
async def test_a_probed_game_writes_a_third_of_the_snapshot_bytes(tmp_path):
    cfg = load_game_config(ROOT / "configs" / "classic.yaml")
    res = await play_game(cfg, logs_dir=tmp_path, seed=3, game_id="g")
    path = Path(res.path) / "state.jsonl"
    compact = path.stat().st_size
    decoded = list(iter_snapshots(path))
    full_bytes = sum(len(json.dumps(r, ensure_ascii=False)) + 1 for r in decoded)
    assert compact * 3 < full_bytes, (compact, full_bytes)
    assert all(p["messages"] for r in decoded for p in r["players"])


def test_a_delta_without_its_base_names_the_line(tmp_path):
    lines = (ROOT / "tests" / "fixtures" / "logs" / "v2" / "fixture-v2-classic-sheriff" / "state.jsonl").read_text().splitlines(True)
    assert json.loads(lines[3])["events_from"] > 0
    bad = tmp_path / "state.jsonl"
    bad.write_text("".join(lines[3:]), encoding="utf-8")
    with pytest.raises(LogFormatError, match=r"state.jsonl:1: snapshot continues \d+ earlier events"):
        list(iter_snapshots(bad))


def test_probe_memory_refers_to_probe_records_and_a_lost_one_names_the_line(tmp_path):
    """Schema 3: memory entries equal to their probe record's value are stored as its step index."""
    cfg = load_game_config(ROOT / "configs" / "classic.yaml")
    cfg.rules.max_rounds = 1
    res = asyncio.run(play_game(cfg, logs_dir=tmp_path, seed=2, game_id="g"))
    gdir = Path(res.path)
    stored = [r["probe_memory"]["seats"] for r in read_jsonl(gdir / "state.jsonl") if r.get("probe_memory")]
    refs = [e for seats in stored for per in seats.values() for e in per.values()]
    assert refs and all(isinstance(e, int) for e in refs)  # nothing of the answers is repeated
    decoded = list(iter_snapshots(gdir / "state.jsonl"))
    assert all(isinstance(e["value"], str) for r in decoded for per in r["probe_memory"]["seats"].values() for e in per.values())
    (gdir / "introspection.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(LogFormatError, match=r"state.jsonl:\d+: probe memory of .* which introspection.jsonl does not hold"):
        list(iter_snapshots(gdir / "state.jsonl"))
