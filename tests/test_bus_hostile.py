"""Hostile input to the model bus hub (issue 12, item 7): non-finite numbers, slow or silent
connections, an empty --host. Everything on 127.0.0.1 and bounded in time."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from mafiascope.backends.bus.hub import Hub

from .test_backends_bus import TOKEN, FakeWorker, bus_backend, req

ROOT = Path(__file__).resolve().parent.parent
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize("wait", ["nan", "NaN", "inf", "-inf", "-1", "1e999", "abc", ""])
async def test_bad_poll_wait_is_400_and_timers_keep_working(wait: str):
    """``wait=nan`` once wedged every timer of the hub: other polls took 30 s+, a re-queue took 25 s."""
    async with Hub(TOKEN) as hub:
        fw = FakeWorker(hub, ["m"])
        await fw.register()
        async with aiohttp.ClientSession(headers=AUTH) as s:
            async with s.get(f"{hub.url}/v1/work?worker={fw.id}&wait={wait}", timeout=aiohttp.ClientTimeout(total=5)) as r:
                assert r.status == 400, await r.text()
                assert "wait" in (await r.json())["error"]
        t0 = time.monotonic()
        assert await asyncio.wait_for(fw.poll(wait=0.2), 5) is None  # a normal poll still ends on time
        assert time.monotonic() - t0 < 2
        # and a dispatch deadline still fires on time: re-queued after 0.3 s, not after 25 s
        b = bus_backend(hub, "m", timeout=0.3, requeue=0)
        call = asyncio.create_task(b.complete(req()))
        assert await fw.poll(wait=3)
        t0 = time.monotonic()
        c = await asyncio.wait_for(call, 5)
        assert not c.ok and time.monotonic() - t0 < 3
        await fw.close()
        await b.aclose()


async def test_poll_wait_above_the_cap_is_capped():
    async with Hub(TOKEN) as hub:
        fw = FakeWorker(hub, ["m"])
        await fw.register()
        b = bus_backend(hub, "m")
        call = asyncio.create_task(b.complete(req()))
        job = await asyncio.wait_for(fw.poll(wait=1e6), 5)  # a job is waiting: returns at once
        assert job and await fw.answer(job, "VOTE: x") == 200
        assert (await asyncio.wait_for(call, 5)).ok
        await fw.close()
        await b.aclose()


@pytest.mark.parametrize("field,value", [
    ("temperature", "NaN"), ("timeout_s", "Infinity"), ("wait_for_worker_s", "-Infinity"), ("seed", "-1"),
    ("seed", str(2**64)), ("temperature", "7"), ("max_tokens", "0"),
])
async def test_non_finite_or_out_of_range_body_numbers_are_400(field: str, value: str):
    body = '{"model": "m", "messages": [{"role": "user", "content": "x"}], "%s": %s}' % (field, value)
    async with Hub(TOKEN) as hub:
        async with aiohttp.ClientSession(headers={**AUTH, "Content-Type": "application/json"}) as s:
            async with s.post(f"{hub.url}/v1/generate", data=body, timeout=aiohttp.ClientTimeout(total=5)) as r:
                assert r.status == 400, await r.text()
                assert field in (await r.json())["error"]


async def test_result_token_counts_must_be_finite_and_bounded():
    async with Hub(TOKEN) as hub:
        async with aiohttp.ClientSession(headers={**AUTH, "Content-Type": "application/json"}) as s:
            for body in ('{"worker": "w", "job_id": "j", "prompt_tokens": -5}', '{"worker": "w", "job_id": "j", "completion_tokens": 1e400}'):
                async with s.post(f"{hub.url}/v1/result", data=body) as r:
                    assert r.status == 400, body


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Everything the server sends until it closes the connection (bounded)."""
    return await asyncio.wait_for(reader.read(), seconds)


async def test_silent_connection_is_closed_after_the_idle_timeout():
    async with Hub(TOKEN, idle_timeout_s=0.5) as hub:
        reader, writer = await asyncio.open_connection(hub.host, hub.port)
        t0 = time.monotonic()
        assert await _closed_within(reader, 5) == b""
        assert time.monotonic() - t0 < 4
        writer.close()


@pytest.mark.slow
async def test_slow_headers_are_cut_off_authenticated_or_not():
    for auth in (b"", f"Authorization: Bearer {TOKEN}\r\n".encode()):
        async with Hub(TOKEN, idle_timeout_s=0.5) as hub:
            reader, writer = await asyncio.open_connection(hub.host, hub.port)
            head = b"GET /v1/status HTTP/1.1\r\nHost: x\r\n" + auth + b"X-Slow: " + b"a" * 200

            async def dribble() -> None:
                for i in range(len(head)):
                    writer.write(head[i : i + 1])
                    await asyncio.sleep(0.05)

            sender = asyncio.create_task(dribble())
            t0 = time.monotonic()
            try:
                await _closed_within(reader, 5)
            finally:
                sender.cancel()
            assert time.monotonic() - t0 < 4  # the dribble alone would take 12 s+
            writer.close()


async def test_slow_body_gets_408():
    async with Hub(TOKEN, body_timeout_s=0.5) as hub:
        reader, writer = await asyncio.open_connection(hub.host, hub.port)
        writer.write(b"POST /v1/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Authorization: Bearer {TOKEN}\r\nContent-Length: 100\r\n\r\n".encode() + b'{"models": ')
        await writer.drain()
        t0 = time.monotonic()
        head = await asyncio.wait_for(reader.readline(), 5)
        assert b" 408 " in head and time.monotonic() - t0 < 4
        writer.close()


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MAFIASCOPE_BUS_TOKEN": TOKEN}
    return subprocess.run([sys.executable, "-m", "mafiascope", "bus", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=30)


@pytest.mark.slow
def test_cli_refuses_an_empty_host_and_bad_worker_numbers():
    p = _run_cli("serve", "--host", "", "--port", "0")
    assert p.returncode == 2 and "--host" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    for flag, value in [("--poll-wait", "nan"), ("--poll-wait", "60"), ("--timeout", "inf"), ("--concurrency", "0")]:
        p = _run_cli("worker", "--echo", "--hub", "http://127.0.0.1:9", flag, value)
        assert p.returncode == 2 and flag in p.stderr and "Traceback" not in p.stderr, (flag, value, p.stderr)


def test_hub_refuses_an_empty_host():
    with pytest.raises(ValueError, match="host"):
        Hub(TOKEN, host="")
