"""The compact logs (schema 3) hold the same information as the full ones (schema 2).

``tests/fixtures/logs/v2`` and ``v3`` hold the same seeded probed game (``mafiascope run -c
configs/classic_sheriff.yaml --seed 4 --probes-file configs/probes/suspicion_en.yaml``), written by the
schema-2 writer and by the compact one. Both read back to the same events, probe records and snapshots
(wall-clock fields, the game id and fields added to the records since aside); the schema-2 game transcoded
by today's encoders gives identical analytics tables and reports; and forking either at the same step
with the same seed gives the same continuation.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from mafiascope.engine.snapshots import SnapshotEncoder, iter_snapshots
from mafiascope.logs.io import GAME_FILE, PROBE_FILE, STATE_FILE, dumps, iter_probe_records, read_jsonl
from mafiascope.logs.probe_codec import ProbeEncoder
from mafiascope.probes.dsl import parse_battery

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "logs"
# wall-clock fields, the game id, and the fields the game records gained after the schema-2 fixture was written
WALL_CLOCK = {"timestamp", "finished_ts", "latency_ms", "ts", "game_id", "cost", "moves", "moves_fell_back",
              "fault_budget", "schema_version"}
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def games() -> tuple[Path, Path]:
    return FIXTURES / "v2" / "fixture-v2-classic-sheriff", FIXTURES / "v3" / "fixture-v3-classic-sheriff"


def _clean(rec: dict) -> dict:
    return {k: _clean(v) if isinstance(v, dict) else v for k, v in rec.items() if k not in WALL_CLOCK}


def test_the_writers_hold_the_same_records(games):
    old, new = games
    assert read_jsonl(new / GAME_FILE)[0]["schema_version"] == 3 > read_jsonl(old / GAME_FILE)[0]["schema_version"]  # (the schema-2 writer left setup at 1)
    assert [_clean(e) for e in read_jsonl(old / GAME_FILE)[1:]] == [_clean(e) for e in read_jsonl(new / GAME_FILE)[1:]]  # (setup records gained fields)
    a, b = list(iter_probe_records(old, skip_corrupt=False)), list(iter_probe_records(new, skip_corrupt=False))
    assert len(a) == len(b) > 100
    key = lambda r: (r["step_index"], r["player_idx"], r["probe_seq"])  # noqa: E731 -- probe calls finish in any order
    assert [_clean(r) for r in sorted(a, key=key)] == [_clean(r) for r in sorted(b, key=key)]
    sa, sb = list(iter_snapshots(old / STATE_FILE)), list(iter_snapshots(new / STATE_FILE))
    assert len(sa) == len(sb) > 10
    for x, y in zip(sa, sb):
        assert _clean(x) == _clean(y)
    size = lambda d: sum((d / f).stat().st_size for f in (GAME_FILE, PROBE_FILE, STATE_FILE))  # noqa: E731
    assert size(new) * 2 < size(old)


def _transcode(old: Path, dest: Path) -> Path:
    """The old game's records written by today's encoders (the generic path forks use)."""
    dest.mkdir(parents=True)
    shutil.copy(old / GAME_FILE, dest / GAME_FILE)
    setup = read_jsonl(old / GAME_FILE)[0]
    battery = parse_battery({k: v for k, v in setup["probes"].items() if k in ("name", "language", "description", "probes")})
    enc = ProbeEncoder(setup["game_id"], [p["name"] for p in setup["players"]], {p.id: p.question_text() for p in battery.active})
    with open(dest / PROBE_FILE, "w", encoding="utf-8") as fh:
        for r in read_jsonl(old / PROBE_FILE):
            fh.write("".join(dumps(line) + "\n" for line in enc.encode(r)))
    senc = SnapshotEncoder(enc.tables.lookup)
    with open(dest / STATE_FILE, "w", encoding="utf-8") as fh:
        for s in iter_snapshots(old / STATE_FILE):
            fh.write(dumps(senc.encode(s)) + "\n")
    return dest


def test_analytics_reports_and_tables_are_identical(games, tmp_path):
    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.load import TABLES
    from mafiascope.analytics.modes import DEFAULT
    from mafiascope.analytics.report import build_report

    old = games[0]
    new = _transcode(old, tmp_path / "new" / old.name)
    assert (new / PROBE_FILE).stat().st_size * 2 < (old / PROBE_FILE).stat().st_size
    ca, cb = load_corpus(old.parent, use_cache=False), load_corpus(new.parent, use_cache=False)
    for t in TABLES:
        ta, tb = getattr(ca, t), getattr(cb, t)
        ta, tb = (x.drop(columns=[c for c in ("offset", "path") if c in x.columns]) for x in (ta, tb))
        assert ta.equals(tb), t
    ra, rb = build_report(ca, DEFAULT), build_report(cb, DEFAULT)
    text = [json.dumps(r, sort_keys=True, default=str).replace(str(d.parent), "<logs>") for r, d in ((ra, old), (rb, new))]
    assert text[0] == text[1] and '"f1"' in text[0]


def test_forks_of_either_version_continue_the_same(games, tmp_path):
    from mafiascope.replay.forks import plan_fork, run_fork_batch
    from mafiascope.replay.source import ParentGame

    outs = []
    for d, name in zip(games, ("old", "new")):
        parent = ParentGame.load(d)
        key = parent.keys()[len(parent.keys()) // 2]
        plan = plan_fork(parent, key, 1, logs=tmp_path / name, keep_seed=True, batch_seed=5, batch_id="eqv1")
        rec = asyncio.run(run_fork_batch(plan))
        branch = Path(rec["branches"][0]["path"])
        events = [_clean({k: v for k, v in e.items() if k not in ("backends", "forked_from", "parent")})
                  for e in read_jsonl(branch / GAME_FILE)[1:]]
        probes = sorted((_clean(r) for r in iter_probe_records(branch, skip_corrupt=False)),
                        key=lambda r: (r["step_index"], r["player_idx"], r["probe_seq"]))  # fmt: skip
        snaps = [_clean(s) for s in iter_snapshots(branch / STATE_FILE)]
        outs.append((events, probes, snaps))
    (ea, pa, sa), (eb, pb, sb) = outs
    assert len(ea) > 10 and ea == eb
    assert len(pa) > 30 and pa == pb
    assert len(sa) > 10 and sa == sb
