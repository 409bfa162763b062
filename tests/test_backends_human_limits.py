"""Human file protocol, stdin variant, and the process-wide limits."""

from __future__ import annotations

import asyncio
import io
import os
import threading
import time

import pytest

from mafiascope.backends.base import CompletionRequest
from mafiascope.backends.human import (
    NOT_PROBED,
    HumanBackend,
    HumanStdinBackend,
    expected_format,
    list_pending,
    pending_path,
    read_pending,
    reply_path,
    write_reply,
)
from mafiascope.backends.limits import ACT, AUTO_MAX, AUTO_MIN, PROBE, ConcurrencyLimit, Limits, QueueTimeout, RateLimit
from mafiascope.backends.registry import build_backend

VOTE_INSTR = "Alice said: hi\n\nDAY 1 VOTE. Alive: Alice, Bob.\nGive a one-sentence final argument, then end with a line: VOTE: <name>"


def act(text: str = VOTE_INSTR, **kw) -> CompletionRequest:
    base = {"seat": "Carol", "purpose": "day_vote", "game_id": "g1"}
    base.update(kw)
    return CompletionRequest(messages=[{"role": "system", "content": "You are Carol"}, {"role": "user", "content": text}], **base)


async def _wait_pending(logs, game, seat, timeout=5.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        p = read_pending(logs, game, seat)
        if p is not None:
            return p
        await asyncio.sleep(0.02)
    raise AssertionError("no pending request appeared")


async def test_human_file_roundtrip(tmp_path):
    b = build_backend("me", {"type": "human"}, logs_dir=tmp_path)
    assert isinstance(b, HumanBackend)
    task = asyncio.create_task(b.complete(act()))
    p = await _wait_pending(tmp_path, "g1", "Carol")
    assert set(p) == {"request_id", "seat", "purpose", "kind", "instruction", "messages", "format", "targets", "created"}
    assert p["seat"] == "Carol" and p["purpose"] == "day_vote" and p["kind"] == "act"
    assert p["instruction"] == VOTE_INSTR and p["format"] == "VOTE: <name>" and len(p["messages"]) == 2
    assert [x["request_id"] for x in list_pending(tmp_path, "g1")] == [p["request_id"]]
    write_reply(tmp_path, "g1", "Carol", "some-other-request", "VOTE: Alice")  # ignored: wrong id
    await asyncio.sleep(0.4)
    assert not task.done()
    write_reply(tmp_path, "g1", "Carol", p["request_id"], "Bob dodged every question.\nVOTE: Bob")
    c = await asyncio.wait_for(task, 3)
    assert c.ok and c.text.endswith("VOTE: Bob")
    assert not pending_path(tmp_path, "g1", "Carol").exists() and not reply_path(tmp_path, "g1", "Carol").exists()
    assert list((tmp_path / "g1" / "human").iterdir()) == []  # no temp files left


async def test_human_is_not_probed(tmp_path):
    b = HumanBackend("me", tmp_path)
    t0 = time.monotonic()
    c = await b.complete(act(kind="probe"))
    assert not c.ok and c.error == NOT_PROBED and time.monotonic() - t0 < 2  # no wait for a reply (that waits minutes)
    assert not (tmp_path / "g1").exists()


async def test_human_timeout(tmp_path):
    b = HumanBackend("me", tmp_path, timeout_s=0.3)
    c = await b.complete(act())
    assert not c.ok and "'me'" in c.error and "did not answer" in c.error
    assert read_pending(tmp_path, "g1", "Carol") is None


def test_expected_format():
    assert expected_format(VOTE_INSTR) == "VOTE: <name>"
    assert expected_format("NIGHT 1.\nChoose a player to kill. Reply briefly, then end with a line: ACTION: Kill <name>") == "ACTION: Kill <name>"
    assert expected_format("Выбери, кого защитить. Закончи строкой: ДЕЙСТВИЕ: Защитить <имя>") == "ДЕЙСТВИЕ: Защитить <имя>"
    assert expected_format("DAY 1 DISCUSSION. Share your thoughts.") is None


async def test_human_stdin():
    out = io.StringIO()
    b = HumanStdinBackend("tty", stdin=io.StringIO("I trust Alice.\nVOTE: Bob\n\nignored\n"), stdout=out)
    c = await b.complete(act())
    assert c.ok and c.text == "I trust Alice.\nVOTE: Bob"
    assert "VOTE: <name>" in out.getvalue()
    assert (await b.complete(act(kind="probe"))).error == NOT_PROBED


@pytest.fixture
def pipe():
    """A terminal stand-in: the backend reads the read end's file descriptor, the test types on the write end."""
    r, w = os.pipe()
    with os.fdopen(r, "rb", buffering=0) as reader, os.fdopen(w, "wb", buffering=0) as writer:
        yield reader, writer


async def test_human_stdin_reads_blocks_from_a_descriptor(pipe):
    reader, writer = pipe
    b = HumanStdinBackend("tty", stdin=reader, stdout=io.StringIO())
    writer.write("Я за Боба.\r\nVOTE: Bob\n\nsecond\n".encode())  # two blocks' worth in one write, the second still open
    assert (await b.complete(act())).text == "Я за Боба.\nVOTE: Bob"
    later = asyncio.ensure_future(b.complete(act()))
    writer.write(b"VOTE: Alice\n\n")
    assert (await later).text == "second\nVOTE: Alice"


async def test_human_stdin_interrupted_move_never_waits_for_the_terminal(pipe):
    """Cancelling a move (Ctrl-C) ends it although no line ever comes; the read stays with the seat's next move."""
    reader, writer = pipe
    b = HumanStdinBackend("tty", stdin=reader, stdout=io.StringIO())
    move = asyncio.ensure_future(b.complete(act()))
    await asyncio.sleep(0)
    move.cancel()
    with pytest.raises(asyncio.CancelledError):
        await move
    writer.write(b"VOTE: Bob\n\n")
    assert (await b.complete(act())).text == "VOTE: Bob"


async def test_human_stdin_timeout_then_the_late_answer_serves_the_next_move(pipe):
    reader, writer = pipe
    b = HumanStdinBackend("tty", timeout_s=0.05, stdin=reader, stdout=io.StringIO())
    c = await b.complete(act())
    assert not c.ok and "no answer on stdin within" in c.error
    writer.write(b"VOTE: Bob\n\n")
    b.timeout_s = None
    assert (await b.complete(act())).text == "VOTE: Bob"
    assert threading.active_count() < 50  # one reader at a time, not one per move


async def test_human_stdin_end_of_input_is_an_empty_reply(pipe):
    reader, writer = pipe
    b = HumanStdinBackend("tty", stdin=reader, stdout=io.StringIO())
    writer.write(b"VOTE: Bob")  # no newline before the end
    writer.close()
    assert (await b.complete(act())).text == "VOTE: Bob"
    assert (await b.complete(act())).text == ""


# ---------------------------------------------------------------- limits


async def test_concurrency_limit_counts_in_flight():
    lim = ConcurrencyLimit(2)
    live = 0
    peak = 0

    async def job():
        nonlocal live, peak
        async with lim:
            live += 1
            peak = max(peak, live)
            await asyncio.sleep(0.02)
            live -= 1

    await asyncio.gather(*[job() for _ in range(10)])
    assert peak == 2 and lim.in_flight == 0 and lim.max_seen == 2


async def test_concurrency_limit_cancelled_waiter_frees_its_place():
    lim = ConcurrencyLimit(1)
    await lim.acquire()
    waiter = asyncio.create_task(lim.acquire())
    await asyncio.sleep(0.01)
    waiter.cancel()
    await asyncio.sleep(0.01)
    lim.release()
    assert lim.in_flight == 0
    await asyncio.wait_for(lim.acquire(), 1)
    lim.release()


def test_concurrency_limit_across_threads_and_loops():
    lim = ConcurrencyLimit(2)
    live = 0
    peak = 0
    guard = threading.Lock()

    async def job():
        nonlocal live, peak
        async with lim:
            with guard:
                live += 1
                peak = max(peak, live)
            await asyncio.sleep(0.02)
            with guard:
                live -= 1

    errors = []

    async def many():
        await asyncio.wait_for(asyncio.gather(*[job() for _ in range(6)]), 10)

    def run():
        try:
            asyncio.run(many())
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and peak == 2 and lim.in_flight == 0


async def test_rate_limit_spacing_and_burst():
    rl = RateLimit(rpm=1200)  # 0.05 s apart
    t0 = time.monotonic()
    for _ in range(5):
        await rl.acquire()
    assert time.monotonic() - t0 >= 0.19
    burst = RateLimit(rpm=300, burst=3)  # three at once, then one every 0.2 s
    starts = []
    t0 = time.monotonic()
    for _ in range(4):
        await burst.acquire()
        starts.append(time.monotonic() - t0)
    assert starts[2] < 0.05 and 0.15 <= starts[3] < 0.5


async def test_concurrency_limit_serves_acts_before_queued_probes():
    lim = ConcurrencyLimit(1)
    await lim.acquire()
    order: list[str] = []

    async def call(tag: str, priority: int) -> None:
        await lim.acquire(priority)
        order.append(tag)
        await asyncio.sleep(0.005)
        lim.release()

    probes = [asyncio.create_task(call(f"p{i}", PROBE)) for i in range(3)]
    await asyncio.sleep(0.01)
    act_task = asyncio.create_task(call("act", ACT))
    await asyncio.sleep(0.01)
    lim.release()
    await asyncio.gather(act_task, *probes)
    assert order == ["act", "p0", "p1", "p2"]


@pytest.mark.slow
async def test_rate_limit_lets_an_act_overtake_a_probe_backlog():
    rl = RateLimit(rpm=600)  # one start every 0.1 s
    await rl.acquire()
    t0 = time.monotonic()
    backlog = [asyncio.create_task(rl.acquire(PROBE)) for _ in range(8)]
    await asyncio.sleep(0.02)
    await rl.acquire(ACT)
    act_wait = time.monotonic() - t0
    assert act_wait < 0.25  # one or two intervals, not behind eight probes (0.8 s)
    await asyncio.gather(*backlog)
    assert time.monotonic() - t0 >= 0.8  # the probes kept the rate


async def test_probe_past_its_max_wait_leaves_the_queue():
    rl = RateLimit(rpm=60)  # one start a second
    await rl.acquire()
    with pytest.raises(QueueTimeout):
        await rl.acquire(PROBE, max_wait=0.05)
    lim = ConcurrencyLimit(1)
    await lim.acquire()
    with pytest.raises(QueueTimeout):
        await lim.acquire(PROBE, max_wait=0.05)
    lim.release()
    await asyncio.wait_for(lim.acquire(PROBE, max_wait=0.05), 1)  # the timed-out waiter left no trace
    lim.release()
    assert lim.in_flight == 0


async def test_auto_cap_follows_registered_demand():
    limits = Limits(None)
    assert limits.concurrency.limit == AUTO_MIN
    with limits.demand(40):
        assert limits.concurrency.limit == 40
        with limits.demand(30):
            assert limits.concurrency.limit == 70
    assert limits.concurrency.limit == AUTO_MIN
    with limits.demand(10_000):
        assert limits.concurrency.limit == AUTO_MAX
    assert Limits(3).concurrency.limit == 3


async def test_rate_limit_never_holds_a_move_behind_the_probe_that_just_started():
    rl = RateLimit(rpm=120)  # one start every 0.5 s
    await rl.acquire(PROBE)  # a probe takes the rate's only start
    t0 = time.monotonic()
    await rl.acquire(ACT)
    assert time.monotonic() - t0 < 0.4  # the move does not wait out the probe's 0.5 s interval
    t1 = time.monotonic()
    await rl.acquire(ACT)  # moves alone keep the spacing (the headroom is spent)
    assert time.monotonic() - t1 >= 0.45
    t2 = time.monotonic()
    await rl.acquire(PROBE)  # and probes pay the headroom back: the rate stays 120 rpm
    assert time.monotonic() - t2 >= 0.45
