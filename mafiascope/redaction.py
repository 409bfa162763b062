"""The one secret scrubber: every record, snapshot, ledger line and error passes through it.

Three rules, applied at every depth of nested dicts and lists:

* a **secret-like key** (``api_key``, ``token``, ``Authorization``, ``password``, ``cookie``, ...,
  case-insensitive, ``-``/``_``/space alike, also inside ``headers``) keeps a ``"${VAR}"``
  reference (it names where the secret lives, and forks resolve it again) and an empty value;
  any other string under it becomes ``"***"``; numbers and booleans (``api_key_set: true``) stay;
* in **any string**: URL credentials (``http://user:key@host`` -> ``http://***@host``) and
  ``?api_key=...``-style query values of a URL, ``Bearer <token>`` and ``sk-...`` shaped keys
  become ``***``;
* in **any string**: every substring of 8 or more characters of a **known secret** (a value
  given to :func:`scrub_text` or registered with :func:`register_secret`, which
  ``backends.clients.resolve_credential`` does for every key it resolves) becomes ``***``, and so does
  such a piece of the secret reversed, base64-, hex- or percent-encoded
  (:func:`variants`). A server error that echoes most of a key, in any of those forms, is thereby
  covered whatever the key looks like.
"""

from __future__ import annotations

import base64
import functools
import re
import threading
from typing import Any
from urllib.parse import quote, urlsplit

from pydantic import BaseModel

MASK = "***"
MIN_FRAGMENT = 8  # a substring of a known secret this long is scrubbed
MIN_WHOLE = 6  # a whole secret this long is scrubbed (shorter ones would hit ordinary words)

ENV_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")  # a credential written as "${VAR}"
_SECRET_NAMES = frozenset({
    "api_key", "apikey", "key", "token", "secret", "password", "passwd", "pwd", "passphrase", "authorization",
    "proxy_authorization", "bearer", "bearer_token", "access_token", "refresh_token", "id_token", "auth_token",
    "api_token", "session_token", "client_secret", "secret_key", "private_key", "cookie", "set_cookie",
    "x_api_key", "credentials", "credential", "auth",
})  # fmt: skip
_SECRET_SUFFIXES = ("_api_key", "_apikey", "_secret", "_password", "_token", "_credentials", "_private_key")
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#\"'<>]+@")
_BEARER = re.compile(r"\b((?:Bearer|bearer|BEARER)\s+)[A-Za-z0-9._~+/=\-]{6,}")  # headers named Authorization: by key
_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:api[_\-]?key|key|token|access_token|auth|password|secret|sig|signature)=)[^&#\s\"']+")
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{6,}|key-[A-Za-z0-9_\-]{12,})")
_BEARER_HINTS = ("earer", "EARER")
# Every secret-like key name ends with one of these (is_secret_key); in serialized JSON a key is
# followed by '"'. A key ending in punctuation ("api_key-") normalizes to one too: caught by the last four
# (punctuation, quote, colon: only a key can be followed by '": ' in JSON).
_KEY_END_HINTS = tuple(e.encode() + b'"' for e in (
    "key", "token", "secret", "password", "passwd", "pwd", "passphrase", "auth", "authorization", "bearer", "cookie",
    "credential", "credentials")) + (b'_": ', b'-": ', b' ": ', b'.": ')  # fmt: skip

_known: set[str] = set()
_lock = threading.Lock()


def variants(secret: str) -> frozenset[str]:
    """The forms in which a server may echo ``secret`` back: as given, reversed, base64 (standard and
    URL-safe, without padding), hex and percent-encoded. Each is scrubbed like the secret itself (any
    8+ character piece of it)."""
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret, secret[::-1], base64.b64encode(raw).decode().rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("="),
             raw.hex(), quote(secret, safe="")}
    return frozenset(f for f in forms if len(f) >= MIN_WHOLE)


def register_secret(value: str | None) -> None:
    """Remember a secret for this process: from now on it (and each of its :func:`variants`) is scrubbed
    from everything written."""
    if value and len(value) >= MIN_WHOLE:
        with _lock:
            _known.update(variants(value))


def register_url_credentials(url: str | None) -> None:
    """Register the password (and ``user:password``) of a URL that carries credentials."""
    if not url or "@" not in url:
        return
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return
    if password:
        register_secret(password)
        register_secret(f"{user}:{password}")
    elif user:
        register_secret(user)  # http://KEY@host: the user part is the credential


def known_secrets() -> frozenset[str]:
    with _lock:
        return frozenset(_known)


def forget_secrets() -> None:
    """Drop the registered secrets (tests)."""
    with _lock:
        _known.clear()


@functools.lru_cache(maxsize=4096)
def is_secret_key(name: object) -> bool:
    """``api_key``, ``X-Api-Key``, ``Authorization``, ``openai_token`` ...; not ``*_set`` flags."""
    n = re.sub(r"[^a-z0-9]+", "_", str(name).lower()).strip("_")
    if n.endswith("_set"):
        return False
    return n in _SECRET_NAMES or n.endswith(_SECRET_SUFFIXES)


def _fragment_spans(text: str, secret: str, first: bool = False) -> list[tuple[int, int]]:
    """Spans of ``text`` covered by a substring of ``secret`` at least MIN_FRAGMENT long
    (a shorter secret: its whole occurrences)."""
    size = min(len(secret), MIN_FRAGMENT)
    spans: list[tuple[int, int]] = []
    for i in range(len(secret) - size + 1):
        gram = secret[i : i + size]
        start = text.find(gram)
        while start != -1:
            spans.append((start, start + size))
            if first:
                return spans
            start = text.find(gram, start + 1)
    return spans


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    spans.sort()
    out, pos = [], 0
    cur_s, cur_e = spans[0]
    for s, e in spans[1:]:
        if s <= cur_e:  # overlapping or touching windows: one run of the secret
            cur_e = max(cur_e, e)
        else:
            out += [text[pos:cur_s], MASK]
            pos, (cur_s, cur_e) = cur_e, (s, e)
    out += [text[pos:cur_s], MASK, text[cur_e:]]
    return "".join(out)


def _candidates(secrets: tuple[str | None, ...]) -> frozenset[str]:
    given = [s for s in secrets if s and len(s) >= MIN_WHOLE]
    return frozenset().union(*map(variants, given), known_secrets()) if given else known_secrets()


def needs_scrub(text: str, *secrets: str | None) -> bool:
    """Whether ``text`` -- typically a whole serialized JSON record -- may hold a secret-like key, a
    secret pattern or a fragment of a known secret, i.e. whether :func:`scrub` could change the
    record. False is certain; True may be a false alarm (then scrub structurally). Substring tests
    only (on ASCII-lowered bytes, which is fast also for non-Latin text): this runs for every record."""
    low = text.encode("utf-8", "surrogatepass").lower()
    if any(h in low for h in _KEY_END_HINTS) or _pattern_hit(text):
        return True
    return any(_fragment_spans(text, s, first=True) for s in _candidates(secrets))


def scrub_text(text: str, *secrets: str | None) -> str:
    """``text`` without URL credentials, bearer tokens, key-shaped strings and fragments of
    ``secrets`` or of any registered secret."""
    return _scrub_str(text, _candidates(secrets))


def _pattern_hit(text: str) -> bool:
    # cheap substring tests first: the regexes (and str.lower on long non-ASCII text) are slow
    url = "://" in text
    return bool((url and "@" in text and _URL_USERINFO.search(text))
                or (url and "=" in text and _QUERY_SECRET.search(text))
                or (any(h in text for h in _BEARER_HINTS) and _BEARER.search(text))
                or (("sk-" in text or "key-" in text) and _KEYLIKE.search(text)))


def _scrub_str(text: str, candidates: frozenset[str]) -> str:
    spans: list[tuple[int, int]] = []
    for s in candidates:
        spans += _fragment_spans(text, s)
    if spans:
        text = _mask_spans(text, spans)
    if not _pattern_hit(text):
        return text
    if "://" in text:
        text = _URL_USERINFO.sub(rf"\1{MASK}@", text)
        text = _QUERY_SECRET.sub(rf"\1{MASK}", text)
    text = _BEARER.sub(rf"\1{MASK}", text)
    return _KEYLIKE.sub(MASK, text)


def _hide(value: Any) -> Any:
    """Everything under a secret-like key: strings masked (``${VAR}`` and "" kept), containers walked."""
    if isinstance(value, str):
        return value if not value or ENV_REF.match(value.strip()) else MASK
    if isinstance(value, dict):
        return {k: _hide(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_hide(v) for v in value]
    if isinstance(value, BaseModel):
        return _hide(value.model_dump(mode="json"))
    return value


def _scrub(obj: Any, secrets: frozenset[str]) -> Any:
    if isinstance(obj, str):
        return _scrub_str(obj, secrets) if len(obj) >= MIN_WHOLE or "=" in obj else obj
    if isinstance(obj, dict):
        return {k: (_hide(v) if is_secret_key(k) else _scrub(v, secrets)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_scrub(v, secrets) for v in obj]
    if isinstance(obj, BaseModel):
        return _scrub(obj.model_dump(mode="json"), secrets)
    return obj


def scrub(obj: Any, *secrets: str | None) -> Any:
    """A copy of ``obj`` (JSON-like data) with every secret removed, at every depth (see module doc)."""
    return _scrub(obj, _candidates(secrets))
