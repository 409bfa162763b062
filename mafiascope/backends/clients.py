"""Every HTTP client that can carry a credential is built here, and every credential is resolved here.

A credential is a backend's ``api_key``, the values of its ``headers`` and a bus ``token``. It is
written as ``"${VAR}"`` (or, discouraged, literally) and becomes a value only in
:func:`resolve_credential`, which always knows the URL the value is about to be sent to and the
source of the config naming it, and asks the installed key resolver (:mod:`.keys`: the operator's key
policy checks the name *and* that URL's origin; without one, a config the operator did not write gets
a key only for its provider's own origin). The client is then built for exactly that URL:

* :class:`OpenAIEndpoint` -- an OpenAI-compatible endpoint (the backend, the preflight, the bus
  worker's adapter): resolves the key and header values for ``base_url`` once, and builds an
  ``openai.AsyncOpenAI`` per event loop with :meth:`OpenAIEndpoint.client`;
* :class:`BusEndpoint` -- the model bus hub (the bus backend, its preflight, ``bus worker``):
  resolves the token for the hub URL and builds ``aiohttp.ClientSession`` with it.

Nothing else in the project constructs such a client or resolves a ``${VAR}``;
``tests/test_http_clients.py`` reads every module and fails on a construction anywhere else.
A URL with whitespace or control characters (a TAB pasted into ``base_url``) is refused here too,
with one line naming the backend and field, before any lookup; so is, in public mode, a URL of a config the
operator did not write that names a host only the server reaches (loopback, private, link-local: see
:mod:`.destinations`), before any request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ..redaction import ENV_REF, register_secret, register_url_credentials
from .base import BackendError
from .destinations import destination_problem
from .keys import DEFAULT_HUB, KeyRefused, origin, resolve_key
from .specs import Source, spec_source, url_problem

PLACEHOLDER_KEY = "no-key-set"  # local servers (Ollama, llama.cpp) ignore the key; the SDK needs one


def resolve_credential(value: str | None, *, backend: str, field: str, destination: str, source: Source) -> str | None:
    """A credential's value for sending to ``destination`` (a URL), or None when none is configured.

    ``"${VAR}"`` goes through the installed key resolver with the destination and the config's ``source``,
    so the key policy checks the name and the origin; a literal value is used as given. A reference that resolves
    nowhere, or that the policy refuses, is a :class:`BackendError` naming the backend, the field
    and the variable, never a value. Every value is registered with the scrubber before it is used.
    """
    if value is None or value == "":
        return None
    why = url_problem(destination)
    if why:
        raise BackendError(f"backend {backend!r}: the URL {field} would be sent to {why}")
    m = ENV_REF.match(value.strip())
    if not m:
        register_secret(value)
        return value
    var = m.group(1)
    try:
        got = resolve_key(var, destination, source)
    except KeyRefused as exc:
        raise BackendError(f"backend {backend!r}: {field}: {exc}") from None
    if not got:
        raise BackendError(f"backend {backend!r}: {field} refers to ${{{var}}}, which is not set")
    register_secret(got)
    return got


def _check_url(backend: str, field: str, url: str, source: Source, *, also_allowed: str | None = None) -> str:
    """``url`` when a client for a config from ``source`` may be built for it, else a one-line :class:`BackendError`
    (``also_allowed``: an origin the operator set up, e.g. this machine's bus hub)."""
    why = url_problem(url)
    if why:
        raise BackendError(f"backend {backend!r}: {field} {why}")
    register_url_credentials(url)
    if also_allowed is None or _origin_or_none(url) != _origin_or_none(also_allowed):
        why = destination_problem(url, source)
        if why:
            raise BackendError(f"backend {backend!r}: {field} {why}")
    return url


def _origin_or_none(url: str) -> tuple[str, str, int] | None:
    try:
        return origin(url)
    except ValueError:
        return None


class OpenAIEndpoint:
    """An OpenAI-compatible endpoint with its credentials resolved for its ``base_url`` (see module doc).

    ``spec`` is an :class:`~.specs.OpenAISpec` (or anything with ``base_url``, ``api_key``,
    ``headers`` and ``timeout``); its :func:`~.specs.spec_source` goes to the resolver."""

    def __init__(self, name: str, spec: Any) -> None:
        self.name = name
        src = spec_source(spec)
        self.base_url = _check_url(name, "base_url", spec.base_url, src)
        self.timeout = float(spec.timeout)
        self.api_key = resolve_credential(spec.api_key, backend=name, field="api_key", destination=self.base_url, source=src)
        self.headers: dict[str, str] = {}
        for header, value in (getattr(spec, "headers", None) or {}).items():
            got = resolve_credential(value, backend=name, field=f"headers.{header}", destination=self.base_url, source=src)
            if got is not None:
                self.headers[str(header)] = got  # registered as a secret like the key, literal or not
        self.secrets: tuple[str, ...] = tuple(v for v in (self.api_key, *self.headers.values()) if v)

    def client(self, *, timeout: float | None = None, fast_transport: bool = True) -> Any:
        """A new ``openai.AsyncOpenAI`` for this endpoint (SDK retries off: callers run their own loop).

        Redirects are never followed (the SDK's transports follow them by default): the HTTP libraries drop only
        ``Authorization`` when a redirect changes origin, so a server answering 307 to another host would get the
        credential ``headers`` (``X-Api-Key: ...``) at a destination the key policy never saw. A 3xx is an error.

        ``fast_transport``: the SDK's aiohttp transport where it has one (``openai[aiohttp]``): with a probe
        battery one game makes ~25 calls per move, many at once, and httpx's pool spends milliseconds of
        CPU per request scanning its connections, in the event loop the seats' moves wait on."""
        import openai

        t = self.timeout if timeout is None else timeout
        http_client = None
        factory = getattr(openai, "DefaultAioHttpClient", None)
        # aiohttp refuses credentials in the URL next to the SDK's Authorization header
        if fast_transport and factory is not None and "@" not in (urlsplit(self.base_url).netloc or ""):
            try:
                http_client = factory(timeout=t, follow_redirects=False)
            except RuntimeError:  # the SDK was installed without its aiohttp extra
                http_client = None
        if http_client is None:
            http_client = openai.DefaultAsyncHttpxClient(timeout=t, follow_redirects=False)
        return openai.AsyncOpenAI(
            api_key=self.api_key or PLACEHOLDER_KEY,
            base_url=self.base_url,
            timeout=t,
            max_retries=0,
            default_headers=self.headers or None,
            http_client=http_client,
        )


class BusEndpoint:
    """The model bus hub at ``hub`` with its bearer token resolved for that URL (``source``: of the spec or
    command line naming the token)."""

    def __init__(self, name: str, hub: str, token: str | None, *, source: Source, field: str = "token") -> None:
        self.name = name
        hub_of_this_machine = os.environ.get("MAFIASCOPE_BUS_URL") or DEFAULT_HUB  # the operator's own hub
        self.url = _check_url(name, "hub", hub.rstrip("/"), source, also_allowed=hub_of_this_machine)
        self.token = resolve_credential(token, backend=name, field=field, destination=self.url, source=source)

    @property
    def headers(self) -> Mapping[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def session(self, **kw: Any) -> Any:
        """A new ``aiohttp.ClientSession`` sending the token (keyword arguments: aiohttp's, e.g. ``timeout``)."""
        import aiohttp

        return aiohttp.ClientSession(headers=dict(self.headers), **kw)
