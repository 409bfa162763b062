"""--probes suspicion keeps the parent's suspicion probe only when it stands alone as a battery."""

from __future__ import annotations

from mafiascope.replay.forks import valid_battery

ALONE = {"id": "suspicion_ranking", "max_tokens": 300, "question": "Rank the living players ({players})."}


def test_a_probe_that_stands_alone_is_avalid_battery():
    assert valid_battery([ALONE])


def test_a_probe_chained_to_a_dropped_probe_is_not():
    chained = {**ALONE, "question": "Your role assessment: {prev_role_assessment}. Rank ({players})."}
    assert not valid_battery([chained])


def test_a_malformed_probe_is_not():
    assert not valid_battery([{"id": "suspicion_ranking"}])
