"""The study ledger: atomic rows, claims under a lock, dead runners, two processes at once."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
from pathlib import Path

import pytest

from mafiascope.play.ledger import LedgerError, Runner, StudyLedger, runner_alive

GAMES = [{"game_id": f"s-a-{i:04d}", "arm": "a", "index": i, "seed": i, "rules": "classic"} for i in range(12)]


def _init(d: Path, spec_hash: str = "h1") -> StudyLedger:
    led = StudyLedger(d)
    led.init({"name": "s", "spec_hash": spec_hash, "games": len(GAMES)}, GAMES)
    return led


def test_rows_claims_and_settle(tmp_path):
    led = _init(tmp_path)
    assert led.counts() == {"pending": 12, "running": 0, "finished": 0, "failed": 0, "invalid": 0, "cut": 0}
    with Runner(tmp_path) as r:
        row, why = led.claim(r)
        assert row["game_id"] == "s-a-0000" and why is None
        led.settle(row["game_id"], r, "finished", winner="Mafia", money=0.5)
        row2, _ = led.claim(r)
        assert row2["game_id"] == "s-a-0001"
        led.settle(row2["game_id"], r, "invalid", invalid_reason="fault budget")
    rows = led.rows()
    assert rows["s-a-0000"]["state"] == "finished" and rows["s-a-0000"]["money"] == 0.5 and rows["s-a-0000"]["attempts"] == 1
    assert rows["s-a-0001"]["state"] == "invalid"
    # the same study again: no new rows; another study in the same directory: refused
    assert _init(tmp_path).counts()["pending"] == 10
    with pytest.raises(LedgerError, match="different study"):
        _init(tmp_path, "other")


def test_admit_refusal_leaves_the_game_pending(tmp_path):
    led = _init(tmp_path)
    with Runner(tmp_path) as r:
        row, why = led.claim(r, lambda row, rows: "budget: no")
    assert row is None and why == "budget: no"
    assert led.counts()["pending"] == 12


def _claim_and_die(d: str) -> None:
    led = StudyLedger(d)
    r = Runner(d)
    led.claim(r)
    os._exit(0)  # no settle, no close: like kill -9 mid-game


@pytest.mark.slow
def test_a_dead_runners_game_is_taken_again_and_a_live_ones_is_not(tmp_path):
    led = _init(tmp_path)
    ctx = mp.get_context("spawn")
    p = ctx.Process(target=_claim_and_die, args=(str(tmp_path),))
    p.start()
    p.join(60)
    rows = led.rows()
    assert rows["s-a-0000"]["state"] == "running" and not runner_alive(tmp_path, rows["s-a-0000"]["runner"])
    with Runner(tmp_path) as r:
        first, _ = led.claim(r)  # pending games come first, the stale one after them
        assert first["game_id"] == "s-a-0001" and runner_alive(tmp_path, r.id)
        taken = [first["game_id"]]
        while (row := led.claim(r)[0]) is not None:
            taken.append(row["game_id"])
    assert sorted(taken) == sorted(g["game_id"] for g in GAMES)
    assert led.rows()["s-a-0000"]["attempts"] == 2


def _claim_all(d: str, q: mp.Queue) -> None:
    led = StudyLedger(d)
    got = []
    with Runner(d) as r:
        while (row := led.claim(r)[0]) is not None:
            got.append(row["game_id"])
            led.settle(row["game_id"], r, "finished")
    q.put(got)


@pytest.mark.slow
def test_two_processes_never_take_the_same_game(tmp_path):
    _init(tmp_path)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_claim_all, args=(str(tmp_path), q)) for _ in range(3)]
    for p in procs:
        p.start()
    got = [q.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
    flat = [g for part in got for g in part]
    assert sorted(flat) == sorted(g["game_id"] for g in GAMES) and len(flat) == len(set(flat))
    claims = [r for r in StudyLedger(tmp_path).records() if r.get("state") == "running"]
    assert len(claims) == len(GAMES)


def test_a_torn_last_line_is_skipped_and_not_glued_to_the_next_record(tmp_path):
    led = _init(tmp_path)
    with open(led.path, "ab") as fh:
        fh.write(b'{"event": "state", "game_id": "s-a-0000", "sta')  # a writer killed mid-line
    with Runner(tmp_path) as r:
        row, _ = led.claim(r)
    assert row["game_id"] == "s-a-0000"
    lines = led.path.read_text().splitlines()
    assert json.loads(lines[-1])["state"] == "running"
    assert led.rows()["s-a-0000"]["state"] == "running"


def test_incremental_reads_see_other_writers_torn_tails_and_a_replaced_file(tmp_path):
    """The ledger reads only the bytes appended since its last read; what it returns is always what a
    fresh read of the file gives."""
    a, b = StudyLedger(tmp_path), StudyLedger(tmp_path)
    a.init({"spec_hash": "h", "games": 3}, [{"game_id": f"g{i}", "arm": "x", "index": i, "seed": i} for i in range(3)])
    assert list(b.rows()) == ["g0", "g1", "g2"]
    with Runner(tmp_path) as r:
        row, _ = a.claim(r)
        assert b.rows()[row["game_id"]]["state"] == "running"  # another instance's append is seen
        b.settle(row["game_id"], r, "finished", winner="Mafia", reason="x" * 5000)  # a long line
        assert a.rows() == StudyLedger(tmp_path).rows() and a.counts()["finished"] == 1
        with open(a.path, "ab") as fh:  # a writer killed mid-line
            fh.write(b'{"event": "state", "game_id": "g1", "state": "fini')
        assert a.rows() == StudyLedger(tmp_path).rows() and a.counts()["finished"] == 1
        a.settle("g1", r, "finished", winner="Villagers")  # the next append starts on a new line
        assert a.rows()["g1"]["winner"] == "Villagers" and a.rows() == StudyLedger(tmp_path).rows()
    records = a.path.read_bytes().splitlines(keepends=True)
    tmp = a.path.with_suffix(".new")
    tmp.write_bytes(b"".join(records[:4]))  # the file replaced by a shorter one (a restore)
    os.replace(tmp, a.path)
    assert a.rows() == StudyLedger(tmp_path).rows() and a.counts()["finished"] == 0


TAMPERED = [
    ('{"event": "row", "game_id": ["x"], "arm": "a"}', "game_id: not a valid game id"),
    ('{"event": "row", "game_id": "s-a-0099"}', "arm: expected a string"),
    ('{"event": "row", "game_id": "s-a-0098", "arm": "a", "seed": "abc"}', "seed: expected a whole number"),
    ('{"event": "state", "game_id": "s-a-0001", "state": {"a": 1}}', "state: expected one of pending"),
    ('{"event": "state", "game_id": "s-a-0001", "state": "pending", "attempts": "x"}', "attempts: expected a whole number"),
    ('{"event": "state", "game_id": "s-a-0001", "state": "finished", "usage": {"calls": "zz"}}', "usage: expected a mapping"),
    ('{"event": "state", "game_id": "s-a-0001", "state": "failed", "money": "lots"}', "money: expected a number"),
    ('{"event": "state", "game_id": "../../etc", "state": "running"}', "game_id: not a valid game id"),
    ("[1, 2]", "not a JSON object"),
]


def test_tampered_records_are_named_by_line_and_left_out(tmp_path):
    """Issue 31 item 6. Seen: a tampered ledger row crashed `study status` and `study run` (TypeError,
    ValueError, KeyError) on every later run."""
    led = _init(tmp_path)
    n = len(led.path.read_text().splitlines())
    with open(led.path, "a") as fh:
        fh.write("".join(line + "\n" for line, _ in TAMPERED))
    fresh = StudyLedger(tmp_path)
    with pytest.warns(UserWarning) as caught:
        rows = fresh.rows()
    assert list(rows) == [g["game_id"] for g in GAMES] and fresh.counts()["pending"] == len(GAMES)
    assert [str(w.message) for w in caught] == fresh.problems
    for i, (_, why) in enumerate(TAMPERED):
        assert fresh.problems[i].startswith(f"{led.path}:{n + i + 1}: skipping a bad ledger record ({why}")
    with Runner(tmp_path) as r, pytest.warns(UserWarning):
        row, _ = StudyLedger(tmp_path).claim(r)
    assert row["game_id"] == "s-a-0000"
