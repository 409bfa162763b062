"""Key lookup is injected and policed (issue 13 item 2, issue 12 item 2): the core resolves ``${VAR}``
through an installed resolver, never imports streamlit, and under a key policy sends a key only to
the base URLs declared for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from mafiascope.backends.base import BackendError
from mafiascope.backends.keys import KeyPolicy, KeyRefused, origin, policy_resolver
from mafiascope.backends.registry import Source, build_backend, mark_source, parse_backend_spec

ROOT = Path(__file__).resolve().parents[1]
FAKE = "sk-deploy-FAKE-0123456789abcdef"


@pytest.mark.slow
def test_the_core_never_imports_streamlit():
    hits = [str(p) for p in (ROOT / "mafiascope").rglob("*.py") if "import streamlit" in p.read_text(encoding="utf-8")
            or "st.secrets" in p.read_text(encoding="utf-8")]
    assert not hits, hits
    code = ("import sys, mafiascope.cli, mafiascope.backends.openai_backend, mafiascope.backends.bus.client, "
            "mafiascope.backends.common; assert 'streamlit' not in sys.modules, 'streamlit imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def test_policy_in_the_environment_refuses_other_names_and_hosts(monkeypatch):
    """The DEPLOY_SECRET case: a server variable named in a config never reaches a typed URL."""
    monkeypatch.setenv("DEPLOY_SECRET", FAKE)
    monkeypatch.setenv("OK_KEY", FAKE)
    monkeypatch.setenv("MAFIASCOPE_KEYS", "OK_KEY")
    monkeypatch.setenv("MAFIASCOPE_KEY_OK_KEY_BASE_URLS", "https://api.example.com/v1")
    spec = {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "${DEPLOY_SECRET}"}
    with pytest.raises(BackendError) as err:
        build_backend("evil", spec)
    assert "DEPLOY_SECRET is not a key the operator allows" in str(err.value) and FAKE not in str(err.value)
    with pytest.raises(BackendError) as err:
        build_backend("evil", {**spec, "api_key": "${OK_KEY}"})
    assert "may only be sent to https://api.example.com:443" in str(err.value) and FAKE not in str(err.value)
    ok = build_backend("good", {**spec, "api_key": "${OK_KEY}", "base_url": "https://API.example.com:443/v1/"})
    assert ok.describe()["api_key_set"] is True
    # without MAFIASCOPE_KEYS a config the operator wrote may name any environment variable (documented); one that
    # does not say who wrote it (built in code, read back from a log or a roster) may not
    monkeypatch.delenv("MAFIASCOPE_KEYS")
    with pytest.raises(BackendError, match="is no provider's key") as err:
        build_backend("cli", spec)
    assert FAKE not in str(err.value)
    mine = parse_backend_spec("cli", spec)
    mark_source([mine], Source.OPERATOR)
    assert build_backend("cli", mine).describe()["api_key_set"] is True


def test_empty_policy_allows_no_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE)
    monkeypatch.setenv("MAFIASCOPE_KEYS", "")
    with pytest.raises(BackendError, match="allowed: none"):
        build_backend("g", {"type": "openai", "model": "m", "api_key": "${OPENAI_API_KEY}"})


def test_policy_round_trips_through_the_environment():
    p = KeyPolicy(keys={"A": ("https://x.example/v1",), "B": ("http://127.0.0.1:8000/v1", "https://y.example")})
    assert KeyPolicy.from_env(p.to_env()) == p
    assert KeyPolicy.from_env({}) is None
    with pytest.raises(ValueError):
        KeyPolicy(keys={"not a name": ()})


_TRIED = {"origin": 0}
_hosts = hs.sampled_from(["api.example.com", "API.Example.com", "127.0.0.1", "evil.example", "api.example.com.evil.example",
                          "[::1]", "localhost"])
_url = hs.builds(lambda s, h, port, path: f"{s}://{h}{port}{path}", hs.sampled_from(["http", "https", "HTTPS", "ftp", "javascript"]),
                 _hosts, hs.sampled_from(["", ":443", ":80", ":8000", ":0"]),
                 hs.sampled_from(["", "/", "/v1", "/v1/../x", "?a=b", "#f", "@evil.example/"]))


@settings(max_examples=600, deadline=None)
@given(allowed=_url, target=_url | hs.text(max_size=30))
@pytest.mark.slow
def test_a_key_goes_only_to_the_same_origin(allowed, target):
    _TRIED["origin"] += 1
    try:
        want = origin(allowed)
    except ValueError:
        return  # a policy with that URL is refused when built
    looked: list[str] = []
    resolve = policy_resolver(KeyPolicy(keys={"K": (allowed,)}), lambda n: looked.append(n) or FAKE)
    try:
        same = origin(target) == want
    except ValueError:
        same = False
    try:
        got = resolve("K", target)
    except KeyRefused as exc:
        assert not same and FAKE not in str(exc) and looked == []  # refused before the value is even looked up
    else:
        assert same and got == FAKE


def test_origin_property_tried_count():
    print(f"\nkey policy property: {_TRIED['origin']} (allowed URL, target URL) pairs checked")
    assert _TRIED["origin"] >= 600 or _TRIED["origin"] == 0
