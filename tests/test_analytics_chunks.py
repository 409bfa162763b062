"""The cache parses games in batches streamed into Parquet row groups: the tables must not
depend on the batch size, on incremental rebuilds, or on whether a cache could be written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from mafiascope.analytics.cache import load_dir_games
from mafiascope.analytics.corpus import find_game_dirs, load_corpus
from mafiascope.analytics.load import TABLES, parse_game

ROOT = Path(__file__).parents[1]
CORPUS = ROOT / "data" / "corpus"  # the bundled copies of the original corpora
SOURCES = [ROOT / "data" / "demo", CORPUS / "mafiascope_en_demo", CORPUS / "mafiascope_ru_legacy"]


def _load(root: Path, cache: Path, chunk: int, **kw) -> dict[str, pd.DataFrame]:
    return load_dir_games(root, find_game_dirs(root), cache_dir=cache, with_text=True, workers=1, chunk=chunk, **kw).tables


def _same(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    for t in TABLES:
        pd.testing.assert_frame_equal(a[t], b[t], check_exact=True, obj=t)


@pytest.mark.parametrize("src", SOURCES, ids=["demo", "en", "ru"])
def test_chunked_load_equals_one_batch(src, tmp_path):
    if not src.is_dir():
        pytest.skip("corpus not available")
    whole = _load(src, tmp_path / "c_all", chunk=1000)
    for chunk in (1, 3):
        _same(_load(src, tmp_path / f"c{chunk}", chunk=chunk), whole)
    _same(_load(src, tmp_path / "c_none", chunk=2, use_cache=False), whole)
    # the batches really are separate row groups, and a warm load reads them back the same
    n_games = len(find_game_dirs(src))
    key_dir = next((tmp_path / "c1").iterdir())
    assert pq.ParquetFile(key_dir / "games.parquet").num_row_groups == n_games
    _same(_load(src, tmp_path / "c1", chunk=1), whole)


@pytest.mark.slow  # ~20 s; tests/test_analytics_loader_equiv.py checks every table against the previous loader
def test_tables_match_per_game_parser(tmp_path):
    """Independent of the batch builder: the stacked per-game frames of parse_game."""
    src = ROOT / "data" / "demo"
    got = _load(src, tmp_path / "c", chunk=4)
    for t in TABLES:
        parts = []
        for d in find_game_dirs(src):
            gt = parse_game(d)
            parts.append(gt.tables[t].assign(game_id=gt.game_id))
        want = pd.concat(parts, ignore_index=True)
        assert len(got[t]) == len(want), t
        for c in want.columns:
            pd.testing.assert_series_equal(got[t][c], want[c].astype(got[t][c].dtype), check_names=False,
                                           check_exact=True, obj=f"{t}.{c}")


def _by_game(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values("g", kind="stable").reset_index(drop=True)


def test_incremental_rebuild_and_unwritable_cache(tmp_path):
    root = tmp_path / "logs"
    shutil.copytree(ROOT / "data" / "demo", root)
    names = sorted(d.name for d in root.iterdir() if d.is_dir())
    held = tmp_path / "held"
    held.mkdir()
    for n in names[:3]:
        shutil.move(str(root / n), held / n)
    cache = tmp_path / "cache"
    first = load_dir_games(root, find_game_dirs(root), cache_dir=cache, workers=1, chunk=2)
    assert first.n_parsed == len(names) - 3
    for n in names[:3]:  # new games, one changed and one vanished
        shutil.move(str(held / n), root / n)
    changed = root / names[4] / "game.jsonl"
    changed.write_bytes(changed.read_bytes() + b'{"kind": "oops", "round": 1}\n')
    shutil.rmtree(root / names[5])
    again = load_dir_games(root, find_game_dirs(root), cache_dir=cache, workers=1, chunk=2)
    assert again.n_parsed == 4
    fresh = load_corpus(root, cache_dir=tmp_path / "fresh", probed_only=False)
    inc = load_corpus(root, cache_dir=cache, probed_only=False)
    assert inc.game_ids == fresh.game_ids and names[5] not in fresh.game_ids
    for t in TABLES:  # kept games' rows come first after an incremental rebuild (as before): same rows per game
        pd.testing.assert_frame_equal(_by_game(getattr(inc, t)), _by_game(getattr(fresh, t)), check_exact=True, obj=t)
    assert inc.audit == fresh.audit and inc.audit[fresh.game_ids[0]] is not None
    # a cache that cannot be written: the tables are built in a temporary directory instead
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    ro = load_corpus(root, cache_dir=blocker, probed_only=False)
    for t in TABLES:
        pd.testing.assert_frame_equal(getattr(ro, t), getattr(fresh, t), check_exact=True, obj=t)
    assert not list(tmp_path.glob("cache/*/.*.tmp"))  # no temporary table left behind


def test_prepare_corpus_reports_progress_then_loads_warm(tmp_path):
    """The app builds the cache with a progress bar (prepare_corpus), then loads it warm."""
    from mafiascope.analytics.corpus import pending_corpus, prepare_corpus

    src = ROOT / "data" / "demo"
    cache = tmp_path / "cache"
    n = len(find_game_dirs(src))
    assert pending_corpus(src, cache_dir=cache) == n
    seen: list[tuple[int, int]] = []
    assert prepare_corpus(src, cache_dir=cache, workers=1, chunk=3, progress=lambda k, t: seen.append((k, t))) == n
    assert seen == [(k, n) for k in (*range(3, n, 3), n)]  # one call per batch of 3, the last one complete
    assert pending_corpus(src, cache_dir=cache) == 0
    assert prepare_corpus(src, cache_dir=cache, progress=lambda k, t: seen.append((k, t))) == 0 and len(seen) == (n + 2) // 3
    warm = load_dir_games(src, find_game_dirs(src), cache_dir=cache, workers=1)
    assert warm.n_parsed == 0
    _same(warm.tables, load_dir_games(src, find_game_dirs(src), cache_dir=tmp_path / "fresh", workers=1).tables)
