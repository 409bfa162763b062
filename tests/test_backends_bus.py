"""Model bus: a real hub on loopback, real worker subprocesses, BusBackend requests."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from mafiascope.backends.base import CompletionRequest
from mafiascope.backends.bus.hub import Hub
from mafiascope.backends.devserver import DevServer
from mafiascope.backends.registry import build_backend

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bus-test-token-0123456789"


def req(text: str = "hello", **kw) -> CompletionRequest:
    return CompletionRequest(messages=[{"role": "user", "content": text}], seat="Bob", purpose="discuss", **kw)


def bus_backend(hub: Hub, model: str, name: str = "busseat", **kw):
    spec = {"type": "bus", "model": model, "hub": hub.url, "token": TOKEN, "timeout": 10, "wait_for_worker": 10, **kw}
    return build_backend(name, spec)


def start_worker(hub: Hub, *args: str, token: str = TOKEN) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-m", "mafiascope", "bus", "worker", "--hub", hub.url, "--token", token, "--poll-wait", "2", *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


@pytest.mark.slow
async def test_roundtrip_with_echo_worker_subprocess():
    async with Hub(TOKEN) as hub:
        w = start_worker(hub, "--echo", "--serve-as", "echo-key")
        try:
            b = bus_backend(hub, "echo-key")
            outs = await asyncio.gather(*[b.complete(req(f"line\nVOTE: P{i}")) for i in range(3)])
            await b.aclose()
        finally:
            stop(w)
    assert [o.text for o in outs] == ["OK: VOTE: P0", "OK: VOTE: P1", "OK: VOTE: P2"]
    assert all(o.ok and o.attempts == 1 and o.meta["worker"] for o in outs)
    d = b.describe()
    assert d["type"] == "bus" and d["token_set"] and TOKEN not in str(d)
    assert any(m.get("adapter", {}).get("type") == "echo" for m in d["workers"].values())


@pytest.mark.slow
async def test_roundtrip_worker_forwarding_to_openai_endpoint():
    """worker --base-url/--model: the openai SDK inside the worker, the dev server behind it."""
    async with DevServer() as srv, Hub(TOKEN) as hub:
        w = start_worker(hub, "--base-url", srv.base_url, "--model", "parrot", "--serve-as", "local-llm")
        try:
            b = bus_backend(hub, "local-llm")
            c = await b.complete(req("<think>hidden</think>I suspect Dave.\nVOTE: Dave", seed=7))
            await b.aclose()
        finally:
            stop(w)
    assert c.ok and c.text == "I suspect Dave.\nVOTE: Dave"
    assert c.served_model == "parrot-devserver" and not c.tokens_estimated
    assert srv.stats.seeds == [7]
    meta = next(iter(b.describe()["workers"].values()))
    assert meta["adapter"]["model"] == "parrot" and meta["adapter"]["base_url_host"] == f"127.0.0.1:{srv.port}"


class FakeWorker:
    """A worker written against the raw protocol, that can 'forget' jobs."""

    def __init__(self, hub: Hub, models: list[str]) -> None:
        self.hub, self.models = hub, models
        self.s = aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"})
        self.id = ""

    async def register(self) -> None:
        async with self.s.post(f"{self.hub.url}/v1/register", json={"models": self.models, "meta": {"kind": "fake", "api_key": "nope"}}) as r:
            assert r.status == 200
            self.id = (await r.json())["worker"]

    async def poll(self, wait: float = 3) -> dict | None:
        async with self.s.get(f"{self.hub.url}/v1/work", params={"worker": self.id, "wait": str(wait)}) as r:
            return await r.json() if r.status == 200 else None

    async def answer(self, job: dict, text: str) -> int:
        async with self.s.post(f"{self.hub.url}/v1/result", json={"worker": self.id, "job_id": job["job_id"], "text": text}) as r:
            return r.status

    async def close(self) -> None:
        await self.s.close()


async def test_requeue_once_then_backend_fault():
    async with Hub(TOKEN) as hub:
        fw = FakeWorker(hub, ["slow"])
        await fw.register()
        b = bus_backend(hub, "slow", timeout=0.3, requeue=1)
        call = asyncio.create_task(b.complete(req()))
        j1 = await fw.poll()
        j2 = await fw.poll()  # the same request, re-queued after 0.3 s
        assert j1 and j2 and j1["request_id"] == j2["request_id"] and j1["job_id"] != j2["job_id"]
        c = await asyncio.wait_for(call, 5)
        late = await fw.answer(j2, "too late")
        status = hub.counters
        await fw.close()
        await b.aclose()
    assert not c.ok and c.text == "" and c.attempts == 2
    assert "504" in c.error and "'busseat'" in c.error and "2 dispatches" in c.error
    assert [f["fault"] for f in c.meta["faults"]] == ["worker_timeout", "worker_timeout"]
    assert late == 410 and status["requeued"] == 1 and status["timed_out"] == 1


async def test_requeued_job_answered_by_second_dispatch():
    async with Hub(TOKEN) as hub:
        fw = FakeWorker(hub, ["*"])
        await fw.register()
        b = bus_backend(hub, "anything", timeout=0.3, requeue=1)
        call = asyncio.create_task(b.complete(req()))
        j1 = await fw.poll()
        j2 = await fw.poll()
        assert await fw.answer(j2, "second try") == 200
        assert await fw.answer(j1, "first, late") == 410
        c = await asyncio.wait_for(call, 5)
        await fw.close()
        await b.aclose()
    assert c.ok and c.text == "second try" and c.attempts == 2
    assert c.meta["faults"][0]["fault"] == "worker_timeout"
    assert "nope" not in str(b.describe()["workers"])  # secret-looking meta masked by the hub
    assert "'api_key': '***'" in str(b.describe()["workers"])


async def test_no_live_worker_is_a_fault_not_a_hang():
    async with Hub(TOKEN) as hub:
        b = bus_backend(hub, "nobody", wait_for_worker=0.2)
        t0 = time.monotonic()
        c = await b.complete(req())
        await b.aclose()
    assert not c.ok and "503" in c.error and "no live worker" in c.error and time.monotonic() - t0 < 3


async def test_unreachable_hub_is_a_fault():
    from mafiascope.backends.registry import build_backend as bb

    b = bb("gone", {"type": "bus", "model": "m", "hub": "http://127.0.0.1:9", "token": TOKEN})
    c = await b.complete(req())
    await b.aclose()
    assert not c.ok and "'gone'" in c.error and "unreachable" in c.error


async def test_auth_everywhere_no_cors_and_body_limit():
    async with Hub(TOKEN) as hub:
        async with aiohttp.ClientSession() as s:
            for method, path in [("GET", "/v1/status"), ("POST", "/v1/register"), ("GET", "/v1/work"),
                                 ("POST", "/v1/result"), ("POST", "/v1/generate")]:
                async with s.request(method, hub.url + path, json={}) as r:
                    assert r.status == 401, path
                    assert "Access-Control-Allow-Origin" not in r.headers
                async with s.request(method, hub.url + path, json={}, headers={"Authorization": "Bearer wrong"}) as r:
                    assert r.status == 401, path
            auth = {"Authorization": f"Bearer {TOKEN}"}
            async with s.get(hub.url + "/v1/status", headers=auth) as r:
                assert r.status == 200 and "Access-Control-Allow-Origin" not in r.headers
                st = await r.json()
                assert st["workers"] == [] and st["queued"] == 0
            big = {"model": "m", "messages": [{"role": "user", "content": "x" * (1024 * 1024 + 10)}]}
            async with s.post(hub.url + "/v1/generate", json=big, headers=auth) as r:
                assert r.status == 413
            async with s.post(hub.url + "/v1/generate", json={"model": "m"}, headers=auth) as r:
                assert r.status == 400 and "messages" in (await r.json())["error"]
            async with s.options(hub.url + "/v1/generate", headers={"Origin": "http://evil.example"}) as r:
                assert "Access-Control-Allow-Origin" not in r.headers
            for path in ("/v1/launch", "/v1/backends", "/"):
                async with s.post(hub.url + path, json={}, headers=auth) as r:
                    assert r.status in (404, 405)


@pytest.mark.slow
async def test_worker_with_wrong_token_exits_with_clear_error():
    async with Hub(TOKEN) as hub:
        w = start_worker(hub, "--echo", token="not-the-token")
        try:
            rc = await asyncio.to_thread(w.wait, 20)
        finally:
            stop(w)
        err = w.stderr.read()
    assert rc == 2 and "401" in err and "not-the-token" not in err


@pytest.mark.slow
def test_cli_bus_serve_generates_token_and_binds_loopback():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MAFIASCOPE_BUS_TOKEN", None)
    p = subprocess.Popen([sys.executable, "-m", "mafiascope", "bus", "serve", "--port", "0"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = p.stdout.readline().strip().rsplit(" ", 1)[-1]
        token = p.stdout.readline().strip().split("token: ", 1)[1]
        assert url.startswith("http://127.0.0.1:") and len(token) >= 24

        async def check():
            async with aiohttp.ClientSession() as s:
                async with s.get(url + "/v1/status") as r:
                    assert r.status == 401
                async with s.get(url + "/v1/status", headers={"Authorization": f"Bearer {token}"}) as r:
                    assert r.status == 200

        asyncio.run(check())
    finally:
        stop(p)


async def test_queued_job_with_busy_workers_is_bounded():
    """A live worker that never takes the job (busy elsewhere) cannot make the engine wait forever."""
    async with Hub(TOKEN) as hub:
        fw = FakeWorker(hub, ["busy"])
        await fw.register()
        b = bus_backend(hub, "busy", timeout=0.2, requeue=0, wait_for_worker=0.2)
        first = asyncio.create_task(b.complete(req("one")))
        job = await fw.poll()  # the worker holds this one and is live, but never polls again
        assert job
        second = await asyncio.wait_for(b.complete(req("two")), 5)
        await asyncio.wait_for(first, 5)
        await fw.close()
        await b.aclose()
    assert not second.ok and "504" in second.error and "queue" in second.error
