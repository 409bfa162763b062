"""The openai backend through the real openai SDK against the loopback dev server."""

from __future__ import annotations

import asyncio
import time

import pytest

from mafiascope.backends.base import BackendError, CompletionRequest
from mafiascope.backends.common import host_of, parse_retry_after, redact, strip_think
from mafiascope.backends.devserver import DevServer
from mafiascope.backends.registry import (
    OpenAISpec,
    Source,
    build_backend,
    clear_cache,
    get_backend,
    mark_source,
    parse_backend_spec,
    parse_backend_specs,
)

SECRET = "sk-test-SECRET-1234567890"


def req(text: str = "hello", **kw) -> CompletionRequest:
    return CompletionRequest(messages=[{"role": "system", "content": "sys"}, {"role": "user", "content": text}], **kw)


def backend(srv: DevServer, model: str = "echo", name: str = "dev", **kw):
    """A backend at the dev server from a spec the operator wrote (its ``${VAR}`` may name any variable)."""
    spec = parse_backend_spec(name, {"type": "openai", "model": model, "base_url": srv.base_url, "timeout": 2.0,
                                     "backoff_base": 0.01, "backoff_max": 0.05, **kw})
    mark_source([spec], Source.OPERATOR)
    return build_backend(name, spec)


async def test_reply_usage_served_model_and_seed():
    async with DevServer() as srv:
        b = backend(srv, temperature=0.3)
        c = await b.complete(req("line one\nVOTE: Bob", seed=12345))
        await b.aclose()
    assert c.ok and c.text == "OK: VOTE: Bob"
    assert c.attempts == 1 and c.error is None
    assert c.prompt_tokens and c.completion_tokens and not c.tokens_estimated
    assert c.served_model == "echo-devserver"
    assert srv.stats.seeds == [12345]
    d = b.describe()
    assert d["served_model"] == "echo-devserver" and d["base_url_host"] == f"127.0.0.1:{srv.port}"
    assert d["sampling"]["temperature"] == 0.3 and d["api_key_set"] is False
    assert "openai" in d["versions"] and "mafiascope" in d["versions"]
    rep = d["api_reported"]  # what the API said it served (the report's provenance)
    assert rep["models"] == {"echo-devserver": 1} and rep["system_fingerprints"] == {"fp_devserver_echo": 1}
    assert rep["created_first"] == rep["created_last"] and abs(rep["created_first"] - time.time()) < 120


async def test_think_blocks_are_stripped_from_acts_and_probes():
    async with DevServer() as srv:
        b = backend(srv, model="parrot")
        act = await b.complete(req("<think>I am Mafia, hide it</think>\nI suspect Bob.\nVOTE: Bob"))
        probe = await b.complete(req("<think>long reasoning</think>{\"suspect\": \"Bob\"}", kind="probe"))
        await b.aclose()
    assert act.ok and act.text == "I suspect Bob.\nVOTE: Bob" and act.meta["think_stripped"]
    assert probe.ok and probe.text == '{"suspect": "Bob"}'


def test_strip_think_variants():
    assert strip_think("<think>a</think>b") == ("b", True)
    assert strip_think("reasoning only closes</think>\nVOTE: X") == ("VOTE: X", True)
    assert strip_think("VOTE: X\n<think>unfinished") == ("VOTE: X", True)
    assert strip_think("<THINKING>x</THINKING> y") == ("y", True)
    assert strip_think("plain") == ("plain", False)
    assert strip_think(None) == ("", False)


async def test_429_retry_honours_retry_after():
    async with DevServer(fault_script=["429"], retry_after=0.4) as srv:
        b = backend(srv)
        c = await b.complete(req())
        await b.aclose()
    assert c.ok and c.attempts == 2
    gap = srv.stats.arrivals[1] - srv.stats.arrivals[0]
    assert gap >= 0.4, gap
    assert c.meta["faults"][0]["fault"] == "http_429" and c.meta["faults"][0]["retry_after_s"] == 0.4


async def test_retry_after_above_cap_is_not_waited_for():
    async with DevServer(fault_script=["429"], retry_after=30) as srv:
        b = backend(srv, max_retry_after=1)
        t0 = time.monotonic()
        c = await b.complete(req())
        await b.aclose()
    assert not c.ok and time.monotonic() - t0 < 2 and "max_retry_after" in c.error


async def test_5xx_is_retried_with_backoff():
    async with DevServer(fault_script=["500", "500"]) as srv:
        b = backend(srv, max_retries=2)
        c = await b.complete(req())
        await b.aclose()
    assert c.ok and c.attempts == 3 and [f["fault"] for f in c.meta["faults"]] == ["http_500", "http_500"]


async def test_retries_exhausted_returns_not_ok_never_error_text():
    async with DevServer(fault_every_request="500") as srv:
        b = backend(srv, max_retries=2)
        c = await b.complete(req())
        await b.aclose()
    assert not c.ok and c.text == "" and c.attempts == 3 and srv.stats.requests == 3
    assert "'dev'" in c.error and "HTTP 500" in c.error and "gave up after 3 attempts" in c.error


async def test_401_fails_fast_names_backend_and_hides_key(monkeypatch):
    monkeypatch.setenv("DEV_TEST_KEY", SECRET)
    async with DevServer(require_key="the-right-key") as srv:
        b = backend(srv, name="gpt-seat", api_key="${DEV_TEST_KEY}")
        c = await b.complete(req())
        await b.aclose()
    assert not c.ok and c.attempts == 1 and srv.stats.requests == 1
    assert c.meta["fatal"] is True and c.meta["status"] == 401
    assert "'gpt-seat'" in c.error and "401" in c.error
    assert SECRET not in c.error and SECRET not in repr(c) and SECRET not in str(b.describe())
    assert b.describe()["api_key_set"] is True


async def test_right_key_is_sent(monkeypatch):
    monkeypatch.setenv("DEV_TEST_KEY", SECRET)
    async with DevServer(require_key=SECRET) as srv:
        b = backend(srv, api_key="${DEV_TEST_KEY}")
        c = await b.complete(req())
        await b.aclose()
    assert c.ok


async def test_404_unknown_model_is_fatal():
    async with DevServer() as srv:
        b = backend(srv, model="no-such-model")
        c = await b.complete(req())
        await b.aclose()
    assert not c.ok and c.attempts == 1 and c.meta["fatal"] and "404" in c.error


async def test_hang_times_out_and_returns_not_ok():
    async with DevServer(fault_every_request="hang", hang_s=30) as srv:
        b = backend(srv, timeout=0.3, max_retries=1)
        t0 = time.monotonic()
        c = await b.complete(req())
        await b.aclose()
    assert not c.ok and "timed out" in c.error and c.attempts == 2
    assert time.monotonic() - t0 < 3


async def test_hang_then_success():
    async with DevServer(fault_script=["hang"], hang_s=30) as srv:
        b = backend(srv, timeout=0.3)
        c = await b.complete(req())
        await b.aclose()
    assert c.ok and c.attempts == 2 and c.meta["faults"][0]["fault"] == "timeout"


@pytest.mark.parametrize("fault", ["garbage", "truncate", "drop"])
async def test_bad_bodies_and_dropped_connections_are_faults(fault):
    async with DevServer(fault_every_request=fault) as srv:
        b = backend(srv, max_retries=1)
        c = await b.complete(req())
        await b.aclose()
    assert not c.ok and c.text == "" and c.attempts == 2
    assert ("unreadable" in c.error) if fault == "garbage" else ("connection error" in c.error)


async def test_all_garbage_variants_then_success():
    async with DevServer(fault_script=["garbage", "garbage", "garbage"]) as srv:
        b = backend(srv, max_retries=3)
        c = await b.complete(req())
        await b.aclose()
    assert c.ok and c.attempts == 4 and {f["fault"] for f in c.meta["faults"]} == {"bad_body"}


@pytest.mark.slow
async def test_concurrency_limit_is_respected_at_the_server():
    async with DevServer(latency_ms=80) as srv:
        b = backend(srv, max_concurrency=3)
        outs = await asyncio.gather(*[b.complete(req(f"n{i}")) for i in range(12)])
        await b.aclose()
    assert all(o.ok for o in outs)
    assert srv.stats.max_in_flight == 3
    assert b.limits.concurrency.max_seen == 3


async def test_rpm_limit_spaces_calls():
    async with DevServer() as srv:
        b = backend(srv, rpm=600)  # one call start every 0.1 s
        t0 = time.monotonic()
        outs = await asyncio.gather(*[b.complete(req()) for _ in range(6)])
        elapsed = time.monotonic() - t0
        await b.aclose()
    assert all(o.ok for o in outs) and len(srv.stats.arrivals) == 6
    assert elapsed >= 0.5, elapsed  # the sixth call may not start before 5 intervals have passed
    starts = srv.stats.arrivals
    assert starts[-1] - starts[1] >= 0.3, starts  # calls 2..6 are spaced by the limiter


class NoUsageServer(DevServer):
    """A server that reports no ``usage`` (some local servers do this)."""

    async def _chat_inner(self, request):
        import json

        from aiohttp import web

        resp = await super()._chat_inner(request)
        body = json.loads(resp.body)
        body.pop("usage", None)
        return web.json_response(body)


async def test_usage_estimated_when_absent():
    async with NoUsageServer() as srv:
        b = backend(srv)
        c = await b.complete(req("a fairly long message " * 10))
        await b.aclose()
    assert c.ok and c.tokens_estimated and c.prompt_tokens > 10 and c.completion_tokens >= 1


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_shared_instance_works_across_event_loops():
    """One cached instance (and its limits) serves games on successive event loops."""
    clear_cache()
    port = _free_port()
    spec = {"type": "openai", "model": "echo", "base_url": f"http://127.0.0.1:{port}/v1", "max_concurrency": 2}

    async def one():
        async with DevServer(port=port, latency_ms=20) as srv:
            b = get_backend("shared", spec)
            outs = await asyncio.gather(*[b.complete(req()) for _ in range(5)])
            await b.aclose()
            return b, outs, srv.stats.max_in_flight

    b1, o1, m1 = asyncio.run(one())
    b2, o2, m2 = asyncio.run(one())
    assert b1 is b2
    assert all(o.ok for o in o1 + o2) and m1 <= 2 and m2 <= 2
    clear_cache()


def test_cache_keyed_by_name_and_spec():
    clear_cache()
    a = get_backend("x", {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"})
    b = get_backend("x", {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"})
    c = get_backend("x", {"type": "openai", "model": "m2", "base_url": "http://127.0.0.1:1/v1"})
    d = get_backend("y", {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"})
    assert a is b and a is not c and a is not d
    clear_cache()


def test_missing_env_key_is_a_config_error_naming_the_backend(monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE_KEY", raising=False)
    with pytest.raises(BackendError, match=r"backend 'gpt'.*NOT_SET_ANYWHERE_KEY"):
        build_backend("gpt", {"type": "openai", "model": "m", "api_key": "${NOT_SET_ANYWHERE_KEY}"})


def test_installed_key_resolver_is_used(monkeypatch):
    """The app installs a resolver (st.secrets + its key policy); the core only calls it (issue 13)."""
    from mafiascope.backends.keys import set_key_resolver

    monkeypatch.delenv("ST_ONLY_KEY", raising=False)
    seen = []
    previous = set_key_resolver(lambda name, url, source: seen.append((name, url, source.name)) or (SECRET if name == "ST_ONLY_KEY" else None))
    try:
        b = build_backend("st", {"type": "openai", "model": "m", "api_key": "${ST_ONLY_KEY}"})
    finally:
        set_key_resolver(previous)
    assert b.describe()["api_key_set"] is True and SECRET not in str(b.describe())
    assert seen == [("ST_ONLY_KEY", "https://api.openai.com/v1", "OTHER")]  # told where the key would go, and whose config


def test_validation_errors_name_backend_and_field():
    with pytest.raises(ValueError) as e:
        parse_backend_spec("gpt", {"type": "openai", "model": "m", "temperature": 5})
    assert "'gpt'" in str(e.value) and "temperature" in str(e.value)
    with pytest.raises(ValueError) as e:
        parse_backend_spec("gpt", {"type": "openai"})
    assert "'gpt'" in str(e.value) and "model" in str(e.value)
    with pytest.raises(ValueError) as e:
        parse_backend_spec("x", {"type": "openai", "model": "m", "tempreature": 0.5})
    assert "tempreature" in str(e.value)
    with pytest.raises(ValueError) as e:
        parse_backend_spec("z", {"type": "carrier-pigeon"})
    assert "'z'" in str(e.value) and "carrier-pigeon" in str(e.value)
    with pytest.raises(ValueError) as e:
        parse_backend_specs({"a": {"type": "bus"}, "b": {"type": "openai", "model": "m", "base_url": "ftp://x"}})
    assert "'a'" in str(e.value) and "'b'" in str(e.value) and "base_url" in str(e.value)
    assert isinstance(parse_backend_spec("ok", {"type": "openai", "model": "m"}), OpenAISpec)


def test_helpers():
    assert host_of("https://user:pw@api.example.com:8443/v1?x=1") == "api.example.com:8443"
    assert host_of("https://api.deepseek.com") == "api.deepseek.com"
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({}) is None
    assert SECRET not in redact(f"Bearer {SECRET} and {SECRET}", SECRET)
    assert "sk-" not in redact("key sk-abcdefghijkl leaked")
