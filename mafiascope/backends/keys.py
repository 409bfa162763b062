"""Which API keys may be used, and where: the key policy and the injectable ``${VAR}`` resolver.

A backend's key is written as ``"${VAR}"``; :func:`resolve_key` looks it up through the installed
:data:`KeyResolver` (:func:`set_key_resolver`). The default resolver reads the process environment
and, when ``MAFIASCOPE_KEYS`` is set (even empty), enforces the operator's policy from the
environment: only the listed names, each only for its ``MAFIASCOPE_KEY_<NAME>_BASE_URLS`` (exact
scheme + host + port). The Streamlit app installs its own resolver (Streamlit secrets + the same policy)
and passes the policy on to the games it starts; this package never imports streamlit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

ENV_KEYS = "MAFIASCOPE_KEYS"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SPLIT = re.compile(r"[\s,]+")
_DEFAULT_PORTS = {"http": 80, "https": 443}

KeyResolver = Callable[[str, str], "str | None"]
"""``(variable name, URL the value will be sent to) -> value`` (None: not set). Raise :class:`KeyRefused`
to refuse a name or a destination; the message must not contain the value. Called only by
:func:`mafiascope.backends.clients.resolve_credential`, which always knows the destination."""


class KeyRefused(ValueError):
    """A key name or destination the policy does not allow (the message names both, never a value)."""


def base_url_env(name: str) -> str:
    return f"MAFIASCOPE_KEY_{name}_BASE_URLS"


def origin(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an http(s) URL, the default port filled in; ValueError otherwise."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url[:80]!r}")
    return scheme, parts.hostname.lower(), parts.port or _DEFAULT_PORTS[scheme]


class KeyPolicy(BaseModel):
    """Key names that may be used, each with the base URLs (origins) it may be sent to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    keys: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    @field_validator("keys")
    @classmethod
    def _valid(cls, keys: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for name, urls in keys.items():
            if not _NAME.match(name):
                raise ValueError(f"key name {name[:40]!r} is not a variable name")
            for u in urls:
                origin(u)
        return keys

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> KeyPolicy | None:
        """The policy of ``MAFIASCOPE_KEYS`` / ``MAFIASCOPE_KEY_<NAME>_BASE_URLS``; None when MAFIASCOPE_KEYS is unset."""
        env = os.environ if environ is None else environ
        if ENV_KEYS not in env:
            return None
        names = [n for n in _SPLIT.split(env.get(ENV_KEYS, "")) if n]
        return cls(keys={n: tuple(u for u in _SPLIT.split(env.get(base_url_env(n), "")) if u) for n in names})

    def to_env(self) -> dict[str, str]:
        """The environment variables that carry this policy to a child process."""
        out = {ENV_KEYS: ",".join(self.keys)}
        out.update({base_url_env(n): " ".join(urls) for n, urls in self.keys.items()})
        return out

    def merged(self, other: KeyPolicy) -> KeyPolicy:
        keys = dict(self.keys)
        for n, urls in other.keys.items():
            keys[n] = tuple(dict.fromkeys((*keys.get(n, ()), *urls)))
        return KeyPolicy(keys=keys)

    def problem(self, name: str, base_url: str | None) -> str | None:
        """Why ``name`` may not be sent to ``base_url`` (None: allowed). Never contains a key value.
        A key with no known destination is never allowed."""
        if name not in self.keys:
            allowed = ", ".join(sorted(self.keys)) or "none"
            return f"${name} is not a key the operator allows (allowed: {allowed})"
        if not base_url:
            return f"${name}: no destination URL was given, so it cannot be checked"
        try:
            want = origin(base_url)
        except ValueError as exc:
            return str(exc)
        ok = {origin(u) for u in self.keys[name]}
        if want not in ok:
            where = ", ".join(sorted(f"{s}://{h}:{p}" for s, h, p in ok)) or "nowhere"
            return f"${name} may only be sent to {where}, not to {want[0]}://{want[1]}:{want[2]}"
        return None


def policy_resolver(policy: KeyPolicy | None, lookup: Callable[[str], str | None]) -> KeyResolver:
    """A resolver that checks ``policy`` (None: no restriction) before looking the name up."""

    def resolve(name: str, base_url: str) -> str | None:
        if policy is not None:
            why = policy.problem(name, base_url)
            if why:
                raise KeyRefused(why)
        return lookup(name) or None

    return resolve


def env_resolver(name: str, base_url: str) -> str | None:
    """The default: the environment, under the environment's own policy when ``MAFIASCOPE_KEYS`` is set."""
    return policy_resolver(KeyPolicy.from_env(), os.environ.get)(name, base_url)


_resolver: KeyResolver = env_resolver


def set_key_resolver(resolver: KeyResolver | None) -> KeyResolver:
    """Install ``resolver`` (None: the default :func:`env_resolver`); returns the previous one."""
    global _resolver
    previous, _resolver = _resolver, resolver or env_resolver
    return previous


def resolve_key(name: str, base_url: str) -> str | None:
    """Only :mod:`.clients` calls this (tests/test_http_clients.py checks): there the destination is always known."""
    return _resolver(name, base_url)
