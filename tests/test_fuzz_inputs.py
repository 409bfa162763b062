"""Property/fuzz tests (Hypothesis) for every parser and loader that reads untrusted input: each
prints how many inputs it tried (``bench/fuzz.py`` runs the same targets at any size)."""

from __future__ import annotations

import pytest

from .fuzz_targets import TARGETS, HubThread, bus_requests, fuzz, make_bus_check

EXAMPLES = 150


def _report(capsys: pytest.CaptureFixture[str], name: str, tried: int) -> None:
    with capsys.disabled():
        print(f"\nfuzz: {name}: {tried} inputs, 0 crashes")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if "analytics" in n or "JSONL" in n else n
                                  for n in sorted(TARGETS)])
@pytest.mark.slow
def test_fuzz_loader(name: str, capsys: pytest.CaptureFixture[str]):
    strategy, check = TARGETS[name]
    tried = fuzz(strategy, check, EXAMPLES)
    assert tried >= EXAMPLES // 2  # Hypothesis may stop early only when it runs out of distinct inputs
    _report(capsys, name, tried)


@pytest.mark.slow
def test_fuzz_bus_hub_queries(capsys: pytest.CaptureFixture[str]):
    with HubThread() as hub:
        tried = fuzz(bus_requests, make_bus_check(hub), EXAMPLES)
        hub.poll_is_on_time()  # no timer wedged by anything sent
    _report(capsys, "bus hub (random queries and bodies)", tried)
