"""The compact logs (schema 3) hold the same information as the full ones (schema 2).

The same seeded probed game (7 bots, the chained battery) is written by the schema-2 writer
(the commit before the compact records, run from git history) and by today's writer. Both read
back to the same probe records and snapshots (wall-clock fields aside); the old game transcoded
to the compact form gives byte-identical analytics reports and tables; and forking either
version at the same step with the same seed gives the same continuation.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from mafiascope.engine.snapshots import SnapshotEncoder, iter_snapshots
from mafiascope.logs.io import GAME_FILE, PROBE_FILE, STATE_FILE, dumps, iter_probe_records, read_jsonl
from mafiascope.logs.probe_codec import ProbeEncoder
from mafiascope.probes.dsl import parse_battery

ROOT = Path(__file__).resolve().parents[1]
OLD = "b9faaf2"  # the last commit that writes schema 2 (full probe records, probe memory with its values)
WALL_CLOCK = {"timestamp", "finished_ts", "latency_ms", "ts"}
pytestmark = pytest.mark.slow


def _play(src: Path, logs: Path) -> Path:
    cmd = [sys.executable, "-m", "mafiascope", "run", "-c", str(ROOT / "configs" / "classic.yaml"), "--seed", "3",
           "--game-id", "g", "--logs", str(logs), "--json"]  # fmt: skip
    out = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(src)})
    assert out.returncode == 0, out.stderr[-2000:]
    return logs / "g"


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> tuple[Path, Path]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    probe = subprocess.run(["git", "-C", str(ROOT), "archive", OLD, "mafiascope"], capture_output=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"commit {OLD} is not in this checkout's history")
    tmp = tmp_path_factory.mktemp("equiv")
    src = tmp / "old-src"
    with tarfile.open(fileobj=io.BytesIO(probe.stdout)) as tar:
        tar.extractall(src, filter="data")
    return _play(src, tmp / "old"), _play(ROOT, tmp / "new")


def _clean(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k not in WALL_CLOCK}


def test_the_writers_hold_the_same_records(games):
    old, new = games
    assert read_jsonl(new / GAME_FILE)[0]["schema_version"] == 3  # the old writer left setup at 1
    a, b = list(iter_probe_records(old, skip_corrupt=False)), list(iter_probe_records(new, skip_corrupt=False))
    assert len(a) == len(b) > 300
    key = lambda r: (r["step_index"], r["player_idx"], r["probe_seq"])  # noqa: E731 -- probe calls finish in any order
    assert [_clean(r) for r in sorted(a, key=key)] == [_clean(r) for r in sorted(b, key=key)]
    sa, sb = list(iter_snapshots(old / STATE_FILE)), list(iter_snapshots(new / STATE_FILE))
    assert len(sa) == len(sb) > 10
    for x, y in zip(sa, sb):
        assert _clean({**x, "schema_version": 0}) == _clean({**y, "schema_version": 0})
    size = lambda d: sum((d / f).stat().st_size for f in (GAME_FILE, PROBE_FILE, STATE_FILE))  # noqa: E731
    assert size(new) * 4 < size(old)


def _transcode(old: Path, dest: Path) -> Path:
    """The old game's records written by today's encoders (the generic path forks use)."""
    dest.mkdir(parents=True)
    shutil.copy(old / GAME_FILE, dest / GAME_FILE)
    setup = read_jsonl(old / GAME_FILE)[0]
    battery = parse_battery({k: v for k, v in setup["probes"].items() if k in ("name", "language", "description", "probes")})
    enc = ProbeEncoder("g", [p["name"] for p in setup["players"]], {p.id: p.question_text() for p in battery.active})
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
    new = _transcode(old, tmp_path / "new" / "g")
    assert (new / PROBE_FILE).stat().st_size * 5 < (old / PROBE_FILE).stat().st_size
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
        events = [_clean({k: v for k, v in e.items() if k not in ("cost", "backends")}) for e in read_jsonl(branch / GAME_FILE)[1:]]
        probes = sorted((_clean(r) for r in iter_probe_records(branch, skip_corrupt=False)),
                        key=lambda r: (r["step_index"], r["player_idx"], r["probe_seq"]))  # fmt: skip
        snaps = [_clean({**s, "schema_version": 0}) for s in iter_snapshots(branch / STATE_FILE)]
        outs.append((events, probes, snaps))
    (ea, pa, sa), (eb, pb, sb) = outs
    assert len(ea) > 20 and ea == eb
    assert len(pa) > 100 and pa == pb
    assert len(sa) > 10 and sa == sb
