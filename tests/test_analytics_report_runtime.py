"""The report's pause of the cyclic garbage collector (analytics/runtime.py): held only while a report runs."""

from __future__ import annotations

import gc
import threading
from pathlib import Path
from typing import Any

import pytest

from mafiascope.analytics import accounting
from mafiascope.analytics.runtime import collector_paused

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def gc_on() -> Any:
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_collector_pause_nests_and_restores(gc_on: Any) -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with collector_paused():
            raise RuntimeError("a report failed")
    assert gc.isenabled()  # an error in the report still puts the collector back


def test_collector_left_off_if_it_was_off(gc_on: Any) -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_concurrent_reports_share_one_pause(gc_on: Any) -> None:
    """Report A starts, report B starts, A ends: B still runs without the collector; B ends: back on."""
    a_in, b_in, a_out, b_may_end = (threading.Event() for _ in range(4))
    seen: dict[str, bool] = {}

    def a() -> None:
        with collector_paused():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b() -> None:
        a_in.wait(5)
        with collector_paused():
            b_in.set()
            a_out.wait(5)
            seen["b_after_a_ended"] = gc.isenabled()
            b_may_end.wait(5)

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start(), tb.start()
    a_out.wait(5)
    ta.join(5)
    b_may_end.set()
    tb.join(5)
    assert not ta.is_alive() and not tb.is_alive()
    assert seen == {"b_after_a_ended": False}
    assert gc.isenabled()


def test_report_pauses_the_collector_only_while_it_runs(tmp_path: Path, gc_on: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.modes import Mode
    from mafiascope.analytics.report import build_report

    during: dict[str, Any] = {}
    real = accounting.outcomes

    def spy(c: Any) -> Any:
        during["gc"] = gc.isenabled()
        return real(c)

    monkeypatch.setattr(accounting, "outcomes", spy)
    c = load_corpus(ROOT / "data" / "demo", cache_dir=tmp_path, probed_only=False)
    rep = build_report(c, Mode(boot=20))
    assert rep["outcome"] and during == {"gc": False}
    assert gc.isenabled()

    def broken(c: Any) -> Any:
        raise RuntimeError("a section failed")

    monkeypatch.setattr(accounting, "outcomes", broken)
    with pytest.raises(RuntimeError, match="a section failed"):
        build_report(c, Mode(boot=20))
    assert gc.isenabled()  # a failed report puts the collector back too
