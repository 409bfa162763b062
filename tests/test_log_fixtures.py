"""Every versioned log fixture still reads with today's schema, loaders and analytics."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafiascope.engine.snapshots import iter_snapshots
from mafiascope.logs.io import iter_probe_records, list_game_dirs, read_jsonl
from mafiascope.logs.schema import SUPPORTED_SCHEMA_VERSIONS, ProbeRecord, Snapshot, parse_event

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "logs"
VERSIONS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def test_every_supported_version_has_a_fixture():
    assert [f"v{v}" for v in SUPPORTED_SCHEMA_VERSIONS] == VERSIONS


@pytest.mark.parametrize("version", VERSIONS)
def test_fixture_records_validate(version):
    dirs = list_game_dirs(FIXTURES / version)
    assert dirs
    for d in dirs:
        events = [parse_event(e) for e in read_jsonl(d / "game.jsonl")]
        assert events[0].kind == "setup" and events[-1].kind == "game_over"
        assert getattr(events[0], "schema_version", 0) in SUPPORTED_SCHEMA_VERSIONS
        probes = [ProbeRecord.model_validate(r) for r in iter_probe_records(d, skip_corrupt=False)]
        assert probes and all(p.game_id == events[0].game_id for p in probes)
        if (d / "state.jsonl").exists():
            snaps = [Snapshot.model_validate(r) for r in iter_snapshots(d / "state.jsonl")]
            assert snaps and all(s.players for s in snaps)


@pytest.mark.parametrize("version", VERSIONS)
def test_fixture_loads_in_analytics(version):
    from mafiascope.analytics.corpus import load_corpus

    corpus = load_corpus(FIXTURES / version, use_cache=False)
    assert len(corpus.games) == 1


WALL_CLOCK = {"timestamp", "finished_ts", "latency_ms", "game_id"}


def test_v2_and_v3_hold_the_same_game():
    """The v2 and v3 fixtures are the same seeded game written by two schema versions: the compact
    v3 probe records and snapshots read back as the v2 ones (wall-clock fields and ids aside)."""
    v2, v3 = (list_game_dirs(FIXTURES / v)[0] for v in ("v2", "v3"))
    a, b = list(iter_probe_records(v2, skip_corrupt=False)), list(iter_probe_records(v3, skip_corrupt=False))
    assert len(a) == len(b) > 100
    for x, y in zip(a, b):
        assert {k: v for k, v in x.items() if k not in WALL_CLOCK} == {k: v for k, v in y.items() if k not in WALL_CLOCK}
    assert (v3 / "introspection.jsonl").stat().st_size * 4 < (v2 / "introspection.jsonl").stat().st_size
    sa, sb = list(iter_snapshots(v2 / "state.jsonl")), list(iter_snapshots(v3 / "state.jsonl"))
    assert [s["state"]["events"][-1]["kind"] for s in sa] == [s["state"]["events"][-1]["kind"] for s in sb]
    assert [s["probe_memory"] for s in sa] == [s["probe_memory"] for s in sb]  # suspicion probes chain nothing
