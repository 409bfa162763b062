"""The hub's pure HTTP helpers: the long-poll ``wait`` parameter, worker meta kept small and
scrubbed, and the JSON error reply."""

from __future__ import annotations

import math
from typing import Any

from aiohttp import web

from ...redaction import scrub
from .protocol import DEFAULT_POLL_WAIT_S, MAX_POLL_WAIT_S


def poll_wait(raw: str | None) -> float | None:
    """The long-poll ``wait``: default when absent, capped at the maximum; None when not a finite number >= 0."""
    if raw is None:
        return DEFAULT_POLL_WAIT_S
    try:
        wait = float(raw)
    except ValueError:
        return None
    if not math.isfinite(wait) or wait < 0:
        return None
    return min(wait, MAX_POLL_WAIT_S)


def clean_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """Keep worker meta small and scrubbed at every depth (secret-like keys such as
    ``adapter.api_key`` or ``headers.Authorization``, URL credentials, key-shaped strings)."""
    return scrub({str(k)[:64]: v for k, v in list(meta.items())[:32]})


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, extra: dict[str, Any] | None = None
) -> web.Response:
    return web.json_response({"error": message, "code": code, **(extra or {})}, status=status, headers=headers)
