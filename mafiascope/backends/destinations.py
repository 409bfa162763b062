"""Where a config the operator did not write may send requests, in public mode.

On a public deploy a visitor types base URLs (the Live Game line-up, the Studies builder, Arena's extra
models, forks) and a log or a roster carries others; the server, not the visitor, then makes the request.
Such a URL must not reach what only the server can: cloud metadata (``169.254.169.254``), private networks,
loopback services. :func:`destination_problem` is asked by the one client factory
(:mod:`.clients`) for every URL a model client is built for. It refuses, for a config whose
:class:`~.specs.Source` is not :attr:`~.specs.Source.OPERATOR` and only in public mode, a URL that is not
http(s) or whose host is, or resolves (every address ``getaddrinfo`` gives) to, a loopback, private,
link-local, multicast, reserved, unspecified or otherwise non-global address. The operator allows hosts
with ``MAFIASCOPE_ALLOWED_HOSTS`` (comma- or space-separated ``host`` or ``host:port``).

Public mode is what the installed check says (:func:`set_public_check`: the app installs its own decision,
app/public_mode.py), else the environment variable ``MAFIASCOPE_PUBLIC`` (the app sets it in every process it
starts). Outside public mode nothing changes: a loopback dev server works from any config.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlsplit

from .specs import Source

ENV_PUBLIC = "MAFIASCOPE_PUBLIC"
ENV_ALLOWED_HOSTS = "MAFIASCOPE_ALLOWED_HOSTS"
_TRUE = ("1", "true", "yes", "on")
_SPLIT = re.compile(r"[\s,]+")
_DEFAULT_PORTS = {"http": 80, "https": 443}

_public_check: Callable[[], bool] | None = None


def set_public_check(check: Callable[[], bool] | None) -> Callable[[], bool] | None:
    """Install what decides public mode in this process (None: the environment); returns the previous one."""
    global _public_check
    prev, _public_check = _public_check, check
    return prev


def is_public(environ: Mapping[str, str] | None = None) -> bool:
    if _public_check is not None and environ is None:
        return bool(_public_check())
    env = os.environ if environ is None else environ
    return str(env.get(ENV_PUBLIC, "")).strip().lower() in _TRUE


def allowed_hosts(environ: Mapping[str, str] | None = None) -> set[tuple[str, int | None]]:
    """``(host, port or None for any port)`` of ``MAFIASCOPE_ALLOWED_HOSTS`` (hosts lower-case, IPv6 without brackets)."""
    env = os.environ if environ is None else environ
    out: set[tuple[str, int | None]] = set()
    for item in _SPLIT.split(env.get(ENV_ALLOWED_HOSTS, "")):
        if not item:
            continue
        try:
            parts = urlsplit("//" + item)
            host, port = parts.hostname, parts.port
        except ValueError:
            continue  # an unreadable entry allows nothing
        if host:
            out.add((host.lower(), port))
    return out


def _kind(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """What makes ``ip`` a server-side address (None: a public one)."""
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        ip = mapped
    for attr in ("is_unspecified", "is_loopback", "is_link_local", "is_multicast", "is_private", "is_reserved"):
        if getattr(ip, attr):
            return attr[3:].replace("_", "-")
    if not ip.is_global:
        return "non-global"
    return None


def _addresses(host: str, port: int) -> Iterable[str]:
    try:
        return [ipaddress.ip_address(host).compressed]
    except ValueError:
        pass
    return [str(info[4][0]).split("%", 1)[0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def destination_problem(url: str, source: Source, environ: Mapping[str, str] | None = None) -> str | None:
    """Why a config from ``source`` may not send requests to ``url`` (None: it may). Never contacts the host."""
    if source == Source.OPERATOR or not is_public(environ):
        return None
    try:
        parts = urlsplit(url)
        host, port = (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(parts.scheme, 0)
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if parts.scheme not in _DEFAULT_PORTS:
        return "must start with http:// or https://"
    if not host:
        return "has no host"
    allowed = allowed_hosts(environ)
    if (host, port) in allowed or (host, None) in allowed:
        return None
    rule = (
        f"in public mode a config you did not write as the operator may reach public hosts only "
        f"(the operator allows others in {ENV_ALLOWED_HOSTS})"
    )
    try:
        addresses = list(_addresses(host, port))
    except (OSError, UnicodeError):
        return f"names host {host!r}, which does not resolve; {rule}"
    for addr in addresses:
        kind = _kind(ipaddress.ip_address(addr))
        if kind:
            shown = host if host == addr else f"{host} ({addr})"
            return f"names a {kind} address, {shown}; {rule}"
    if not addresses:
        return f"names host {host!r}, which does not resolve; {rule}"
    return None
