"""Blocks of games on worker threads (:mod:`mafiascope.analytics.executor`): results in block order,
the same arrays as the sequential loop, errors raised to the caller, the thread count configurable."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from mafiascope.analytics import dynamics, executor, f1, f3, f3_match, runtime
from mafiascope.analytics.corpus import SEAT_ARRAY, Cached
from mafiascope.analytics.modes import COMPAT, Mode
from tests.loader_digest import loaded_corpora

BUILD = Cached("test_build")


def test_results_come_back_in_block_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(runtime.ENV, "3")
    names: set[str] = set()

    def slow_first(i: int) -> int:
        names.add(threading.current_thread().name)
        time.sleep(0.05 if i % 3 == 0 else 0.0)  # early blocks finish last
        return i * i

    assert executor.map_blocks(slow_first, list(range(12))) == [i * i for i in range(12)]
    assert all(n.startswith("mafiascope-block") for n in names) and len(names) > 1


def test_one_thread_is_the_plain_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(runtime.ENV, "1")
    main = threading.current_thread()
    assert executor.map_blocks(lambda i: threading.current_thread() is main, [0, 1, 2]) == [True] * 3
    assert executor.map_blocks(lambda i: i, []) == []


def test_thread_count_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(runtime.ENV, raising=False)
    assert 1 <= runtime.workers() <= 2
    monkeypatch.setenv(runtime.ENV, "0")
    assert runtime.workers() == 1
    monkeypatch.setenv(runtime.ENV, "two")
    with pytest.raises(ValueError, match=runtime.ENV):
        runtime.workers()


def test_a_block_error_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(runtime.ENV, "2")

    def boom(i: int) -> int:
        if i == 3:
            raise IndexError("block 3")
        return i

    with pytest.raises(IndexError, match="block 3"):
        executor.map_blocks(boom, list(range(6)))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return loaded_corpora(tmp_path_factory.mktemp("pool"), ("demo",))["demo"]


CASES = [  # (module, block size attribute, tiny size, memo key head, builder)
    (dynamics, "_STATE_ITEMS", 40, dynamics.DYN_STATES, dynamics.suspicion_states),
    (f1, "_RUNS", 3, f1.F1_ARRAYS, f1.f1_arrays),
    (f3_match, "_BLOCK_ITEMS", 30, f3.F3_PAIR_ARRAYS, lambda c, mode: f3._pair_arrays(c, mode)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[3].name for c in CASES])
def test_threaded_blocks_equal_the_sequential_loop(demo: Any, case: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    module, attr, size, memo, build = case
    monkeypatch.setattr(module, attr, size)  # many blocks
    for mode in (Mode(), COMPAT):
        got = {}
        for threads in ("1", "2", "4"):
            monkeypatch.setenv(runtime.ENV, threads)
            demo.forget(memo.key(mode))
            got[threads] = build(demo, mode)
        demo.forget(memo.key(mode))
        assert len(next(iter(got["1"].values()))) > 0
        for threads in ("2", "4"):
            assert list(got[threads]) == list(got["1"])
            for k, want in got["1"].items():
                have = got[threads][k]
                assert have.dtype == want.dtype and np.array_equal(have, want, equal_nan=True), (memo, threads, k)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_block_reading_the_corpus_fails_at_once(demo: Any, monkeypatch: pytest.MonkeyPatch, threads: str) -> None:
    """A block function that calls a memoised helper (``mafia_mask(c)``) while a memoised build maps the
    blocks would wait forever on the corpus lock the build holds (two threads); it fails at once
    instead, naming what it read, with two threads and with one."""
    from mafiascope.analytics.frames import mafia_mask

    monkeypatch.setenv(runtime.ENV, threads)
    demo.forget(SEAT_ARRAY.key("role_code"), BUILD.key())

    def build() -> list[Any]:
        return executor.map_blocks(lambda g: mafia_mask(demo)[g].sum(), list(range(demo.m)))

    started = time.monotonic()
    with pytest.raises(runtime.BlockReadError, match="seat_array"):
        demo.memo(BUILD.key(), build)
    assert time.monotonic() - started < 30
    # what the blocks need built first and handed to them: the same sums, on any thread count
    maf = mafia_mask(demo)
    assert executor.map_blocks(lambda g: int(maf[g].sum()), list(range(demo.m))) == maf.sum(1).tolist()


def test_a_game_view_made_in_a_block_is_the_blocks_own(demo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A corpus made inside a block (a game view) may be read there; from another block it may not."""
    from mafiascope.analytics.corpus import Corpus

    monkeypatch.setenv(runtime.ENV, "2")
    made: list[Any] = []

    def own(i: int) -> int:
        view = Corpus(demo.games.iloc[i:i + 1].reset_index(drop=True), {})
        made.append(view)
        return view.memo(BUILD.key(), lambda: i)

    assert executor.map_blocks(own, [0, 1, 2]) == [0, 1, 2]
    with pytest.raises(runtime.BlockReadError):
        executor.map_blocks(lambda i: made[0].memo(BUILD.key(), lambda: i), [0])
    assert made[0].memo(BUILD.key(), lambda: -1) == 0  # outside any block: readable


def test_free_memory_is_handed_back_without_error() -> None:
    import numpy as np

    blocks = [np.ones(300_000) for _ in range(50)]  # mid-sized arrays freed in the allocator's arenas
    del blocks
    runtime.release_free_memory()
    runtime.release_free_memory()  # nothing left to hand back: still no error


@pytest.mark.parametrize("mode", [Mode(boot=50), Mode(boot=50, compat="mafiascope-2026-07")], ids=["default", "compat"])
def test_whole_report_is_the_same_on_one_thread(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, mode: Mode) -> None:
    """A full lean report from a warm cache (lazy tables: their game rows matched on a worker thread,
    the blocks on two and four threads) equals the report computed on one thread, key for key."""
    import json

    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.report import build_report

    src = _repo_root() / "data" / "demo"
    load_corpus(src, cache_dir=tmp_path, probed_only=False)  # builds the cache: the loads below are warm
    monkeypatch.setattr(f3_match, "_BLOCK_ITEMS", 500)  # many blocks in every threaded loop
    monkeypatch.setattr(dynamics, "_STATE_ITEMS", 300)
    monkeypatch.setattr(f1, "_RUNS", 20)
    reports = {}
    for threads in ("1", "2", "4"):
        monkeypatch.setenv(runtime.ENV, threads)
        c = load_corpus(src, cache_dir=tmp_path, probed_only=False)
        reports[threads] = json.dumps(build_report(c, mode, transcripts=True), sort_keys=True, default=str)
    assert len(reports["1"]) > 10_000
    assert reports["2"] == reports["1"] and reports["4"] == reports["1"]


def _repo_root() -> Any:
    from pathlib import Path

    return Path(__file__).resolve().parents[1]
