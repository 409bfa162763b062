"""Every versioned log fixture still reads with today's schema, loaders and analytics."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafiascope.engine.snapshots import iter_snapshots
from mafiascope.logs.io import list_game_dirs, read_jsonl
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
        probes = [ProbeRecord.model_validate(r) for r in read_jsonl(d / "introspection.jsonl")]
        assert probes and all(p.game_id == events[0].game_id for p in probes)
        if (d / "state.jsonl").exists():
            snaps = [Snapshot.model_validate(r) for r in iter_snapshots(d / "state.jsonl")]
            assert snaps and all(s.players for s in snaps)


@pytest.mark.parametrize("version", VERSIONS)
def test_fixture_loads_in_analytics(version):
    from mafiascope.analytics.corpus import load_corpus

    corpus = load_corpus(FIXTURES / version, use_cache=False)
    assert len(corpus.games) == 1
