"""Which API keys may be used, and where: the key policy and the injectable ``${VAR}`` resolver.

A backend's key is written as ``"${VAR}"``; :func:`resolve_key` looks it up through the installed
:data:`KeyResolver` (:func:`set_key_resolver`), which sees the name, the URL the value is about to be
sent to and the :class:`Source` of the config that names it. The default resolver reads the process
environment:

* when ``MAFIASCOPE_KEYS`` is set (even empty), the operator's policy from the environment decides for
  every config: only the listed names, each only for its ``MAFIASCOPE_KEY_<NAME>_BASE_URLS`` (exact
  scheme + host + port);
* otherwise a config file the operator named on the command line (:attr:`Source.OPERATOR`) may name any
  variable, and every other config (read back from a log, a roster, a saved study, built in code) gets
  a key only for its own provider's origin (:data:`PROVIDER_KEYS`: ``OPENAI_API_KEY`` only to
  ``https://api.openai.com``, ...), so a crafted log cannot send a key anywhere else.

The Streamlit app installs its own resolver (Streamlit secrets + the operator's policy) and passes the
policy on to the processes it starts; this package never imports streamlit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .specs import Source

ENV_KEYS = "MAFIASCOPE_KEYS"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SPLIT = re.compile(r"[\s,]+")
_DEFAULT_PORTS = {"http": 80, "https": 443}


KeyResolver = Callable[[str, str, Source], "str | None"]
"""``(variable name, URL the value will be sent to, source of the config) -> value`` (None: not set).
Raise :class:`KeyRefused` to refuse a name or a destination; the message must not contain the value.
Called only by :func:`mafiascope.backends.clients.resolve_credential`, which always knows both."""

# Keys sent, without a policy, from a config the operator did not write: each only to its provider's own
# API origin (the base URLs the providers document for their OpenAI-compatible endpoints). Small on purpose:
# any other key, or another destination, needs the operator's policy (MAFIASCOPE_KEYS).
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "OPENAI_API_KEY": ("https://api.openai.com",),
    "ANTHROPIC_API_KEY": ("https://api.anthropic.com",),
    "GEMINI_API_KEY": ("https://generativelanguage.googleapis.com",),
    "DEEPSEEK_API_KEY": ("https://api.deepseek.com",),
    "OPENROUTER_API_KEY": ("https://openrouter.ai",),
    "GROQ_API_KEY": ("https://api.groq.com",),
    "MISTRAL_API_KEY": ("https://api.mistral.ai",),
    "TOGETHER_API_KEY": ("https://api.together.xyz",),
    "XAI_API_KEY": ("https://api.x.ai",),
}
BUS_TOKEN = "MAFIASCOPE_BUS_TOKEN"  # also in the default: to this machine's hub ($MAFIASCOPE_BUS_URL or the local default)
DEFAULT_HUB = "http://127.0.0.1:8765"


class KeyRefused(ValueError):
    """A key name or destination the policy does not allow (the message names both, never a value)."""


def base_url_env(name: str) -> str:
    return f"MAFIASCOPE_KEY_{name}_BASE_URLS"


def origin_text(o: tuple[str, str, int]) -> str:
    scheme, host, port = o
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


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
            where = ", ".join(sorted(origin_text(o) for o in ok)) or "nowhere"
            return f"${name} may only be sent to {where}, not to {origin_text(want)}"
        return None


def policy_resolver(policy: KeyPolicy | None, lookup: Callable[[str], str | None]) -> KeyResolver:
    """A resolver that checks ``policy`` (None: no restriction) before looking the name up, whatever the source."""

    def resolve(name: str, base_url: str, source: Source = Source.OTHER) -> str | None:
        if policy is not None:
            why = policy.problem(name, base_url)
            if why:
                raise KeyRefused(why)
        return lookup(name) or None

    return resolve


def provider_policy(environ: Mapping[str, str] | None = None) -> KeyPolicy:
    """The built-in default for configs the operator did not write: :data:`PROVIDER_KEYS`, and the bus token
    for this machine's hub."""
    env = os.environ if environ is None else environ
    hub = (env.get("MAFIASCOPE_BUS_URL") or DEFAULT_HUB).strip()
    try:
        origin(hub)
    except ValueError:  # a bad $MAFIASCOPE_BUS_URL is reported where the hub is used
        hub = DEFAULT_HUB
    return KeyPolicy(keys={**PROVIDER_KEYS, BUS_TOKEN: (hub,)})


def default_problem(name: str, base_url: str, source: Source, environ: Mapping[str, str] | None = None) -> str | None:
    """Why the built-in default refuses ``name`` for ``base_url`` in a config from ``source`` (None: allowed),
    saying exactly how the operator allows it. Never contains a value."""
    policy = provider_policy(environ)
    if policy.problem(name, base_url) is None:
        return None
    try:
        dest = origin_text(origin(base_url))
    except ValueError as exc:
        return str(exc)
    own = policy.keys.get(name)
    goes = (
        f"so it may go only to {', '.join(origin_text(origin(u)) for u in own)}, not to {dest}"
        if own
        else f"and is no provider's key, so it is not sent to {dest}"
    )
    return (
        f"${name} is named by {source.value} (not a config you wrote) {goes}; to allow that: "
        f"MAFIASCOPE_KEYS={name} {base_url_env(name)}={dest}"
    )


def env_resolver(name: str, base_url: str, source: Source = Source.OTHER) -> str | None:
    """The default: the environment, under the environment's own policy when ``MAFIASCOPE_KEYS`` is set; without
    one, any variable for a config the operator wrote and :func:`provider_policy` for every other config."""
    policy = KeyPolicy.from_env()
    if policy is None and source is not Source.OPERATOR:
        why = default_problem(name, base_url, source)
        if why:
            raise KeyRefused(why)
    return policy_resolver(policy, os.environ.get)(name, base_url, source)


_resolver: KeyResolver = env_resolver


def set_key_resolver(resolver: KeyResolver | None) -> KeyResolver:
    """Install ``resolver`` (None: the default :func:`env_resolver`); returns the previous one."""
    global _resolver
    previous, _resolver = _resolver, resolver or env_resolver
    return previous


def resolve_key(name: str, base_url: str, source: Source) -> str | None:
    """Only :mod:`.clients` calls this (tests/test_http_clients.py checks): there the destination and the config's
    source are always known."""
    return _resolver(name, base_url, source)
