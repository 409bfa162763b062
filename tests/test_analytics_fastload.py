"""The game parser on a game of malformed lines: what it reads and what it counts as skipped, the same
with orjson and with the standard library alone (answer hashes are written by either: for them the
grouping of equal answers is compared); and the answer hash is a function of the answer's value. (The
tables it builds on the bundled corpora are pinned by tests/test_analytics_loader_equiv.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import load as fast
from mafiascope.analytics import row_values


def _same_partition(a: pd.Series, b: pd.Series) -> bool:
    return np.array_equal(pd.factorize(a)[0], pd.factorize(b)[0])


def _assert_same(old, new, where: str) -> None:
    assert (old.ok, old.game_id, dict(old.audit)) == (new.ok, new.game_id, dict(new.audit)), where
    assert old.tables.keys() == new.tables.keys(), where
    for t, a in old.tables.items():
        b = new.tables[t]
        if t == "probes":  # which answers are equal, whichever JSON writer hashed them
            assert _same_partition(a["hash"], b["hash"]), where
            a, b = a.drop(columns="hash"), b.drop(columns="hash")
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=f"{where}:{t}")


def _malformed_game(d: Path) -> Path:
    d.mkdir(parents=True)
    names = ["Ann", "Bob", "Cy", "Dee", "Eve"]
    setup = {"kind": "setup", "game_id": "bad-1", "ts": 1.0, "schema_version": 1,
             "players": [{"name": n, "role": "Mafia" if i == 0 else "Villager", "model": "m"} for i, n in enumerate(names)]}
    events = [json.dumps(setup), json.dumps({"kind": "intro", "round": 0, "msg_seq": 1, "player": "Ann", "response": "hi", "ts": 2}),
              '{"kind": "day_discuss", "round": 1, "msg_seq": 2, "player": "Bob", "response": "x", "ts": NaN}',
              "[1, 2]", "{corrupt", json.dumps({"kind": "night_kill", "round": 1, "victim": "Cy", "ts": 3.5}),
              json.dumps({"kind": "vote_tally", "round": 1, "votes": {"Ann": "Bob", "Zed": "Ann"}, "ts": 4}),
              json.dumps({"kind": "game_over", "winner": "Mafia", "ts": 9}), '{"kind": "day_disc']
    (d / "game.jsonl").write_text("\n".join(events), encoding="utf-8")

    def probe(i: int, pid: str, parsed, **extra) -> str:
        rec = {"timestamp": 10.0 + i, "round": 1, "public_msg_seq": i, "player_name": names[i % 5], "probe_seq": 0,
               "probe_id": pid, "question": "q?", "answer_raw": json.dumps(parsed), "answer_parsed": parsed,
               "answer_parse_ok": parsed is not None, "latency_ms": 5, "tokens_prompt": 10, "tokens_completion": 3}
        rec.update(extra)
        return json.dumps(rec, ensure_ascii=False)

    ra = [{"player": n, "guessed_role": "Mafia", "confidence": 70} for n in names]
    lines = [probe(0, "role_assessment", ra), probe(1, "role_assessment", ra),
             probe(2, "role_assessment", [{**ra[0], "confidence": float("nan")}]),  # NaN: a stdlib-only line
             probe(3, "role_assessment", ra).replace('"latency_ms": 5', '"latency_ms": Infinity'),
             probe(4, "role_assessment", ra).replace('"confidence": 70', '"confidence": 123456789012345678901234567890', 1),
             probe(0, "role_assessment", [{"player": "Bob", "guessed_role": "Villager or Doctor", "confidence": "high"}, 7]),
             probe(1, "suspicion_ranking", {"thoughts": "t", "ranking": [{"player": "Ann", "score": 0.9}]}),
             probe(2, "social_map", {"toward_me": [{"player": "Ann", "attitude": "suspects"}, {"player": "Bob", "attitude": ""}]}),
             probe(3, "personality_profile", [{"player": "Cy", "O": 0.5, "C": "x"}]),
             probe(4, "planned_action", {"action": "vote", "target": "Dee"}),
             probe(0, "role_beliefs", {"Bob": {"role": "Mafia", "confidence": 40}}),
             probe(1, "role_assessment", None, answer_raw='[{"player": "Cy", "guessed_role": "Mafia", "confidence": 5}'),
             probe(2, "role_assessment", None, answer_raw="ERROR: timeout", error="timeout"),
             probe(3, "role_assessment", ra, answer_raw="\ud83d\ude00 ok").replace("ok", "\\ud800", 1),  # lone surrogate
             "\ufeff" + probe(4, "role_assessment", ra), "", "  ", "not json", probe(0, "role_assessment", ra) + "\r",
             probe(1, "role_assessment", ra)[:-9]]
    (d / "introspection.jsonl").write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    return d


def test_malformed_lines_are_read_or_counted_with_orjson_or_without(tmp_path, monkeypatch):
    if row_values._orjson is None:
        pytest.skip("orjson not installed")
    d = _malformed_game(tmp_path / "bad-1")
    with_orjson = fast.parse_game(d)
    monkeypatch.setattr(row_values, "_orjson", None)  # the answer hashes' writer
    _assert_same(with_orjson, fast.parse_game(d), "malformed")
    a = with_orjson.audit
    assert a["probes.corrupt_line"] == 1 and a["probes.torn_last_line"] == 1
    assert a["game.corrupt_line"] == 2 and a["game.torn_last_line"] == 1
    assert len(with_orjson.tables["probes"]) == 16  # the BOM and lone-surrogate lines are read


def test_answer_hash_is_a_function_of_the_value():
    h = row_values.stable_hash
    v = [{"player": "Ann", "guessed_role": "Mafia", "confidence": 70.5, "reason": "é"}]
    assert h(v, True) == h(v, False) == h(json.loads(json.dumps(v)), False)
    assert h(v, True) != h([{**v[0], "confidence": 70}], True)
    assert h([float("nan")], False) != h([None], True)  # orjson writes NaN as null: not used for it
    assert h([10 ** 30], False) != h([1e30], True)
