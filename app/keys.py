"""API keys on a public deploy: the operator's key policy, visitor keys for one session, child environments.

The operator declares which keys may be used and for which base URLs, in ``st.secrets``::

    [mafiascope.keys]
    OPENAI_API_KEY = ["https://api.openai.com/v1"]      # or: OPENAI_API_KEY = {base_urls = [...]}

or with ``MAFIASCOPE_KEYS=OPENAI_API_KEY`` and ``MAFIASCOPE_KEY_OPENAI_API_KEY_BASE_URLS=https://api.openai.com/v1``
(both are merged). The key values stay where they are (root-level ``st.secrets`` entries or the
environment). Nothing else leaves the server: every process the app starts gets the policy in its
environment (the engine's default resolver enforces it) and only the allowed keys' values.

A visitor may paste their own key: it lives in ``st.session_state`` only, and reaches the game
process as an environment variable ``MAFIASCOPE_SESSION_KEY_<id>`` (never argv, a file or a log),
allowed for that model's base URL only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import streamlit as st

from mafiascope.backends.destinations import ENV_PUBLIC, set_public_check
from mafiascope.backends.keys import KeyPolicy, policy_resolver, set_key_resolver
from mafiascope.backends.specs import ENV_FROM_APP, Source

from . import public_mode

_SESSION = "_ms_session_keys"  # session_state: {variable name: (key, base_url)}


def _secrets_section() -> Mapping[str, Any]:
    try:
        section = st.secrets.get("mafiascope", {})
        keys = section.get("keys", {}) if isinstance(section, Mapping) else {}
        return keys if isinstance(keys, Mapping) else {}
    except Exception:  # no secrets.toml: no section
        return {}


def _secret_value(name: str) -> str | None:
    try:
        value = st.secrets.get(name)
    except Exception:
        return None
    return value if isinstance(value, str) and value else None


def operator_policy() -> KeyPolicy:
    """The operator's policy: ``[mafiascope.keys]`` in st.secrets merged with the environment's; empty when neither."""
    keys: dict[str, tuple[str, ...]] = {}
    for name, entry in _secrets_section().items():
        urls = entry.get("base_urls", []) if isinstance(entry, Mapping) else entry
        keys[str(name)] = tuple(str(u) for u in ([urls] if isinstance(urls, str) else urls or []))
    policy = KeyPolicy(keys=keys)
    env = KeyPolicy.from_env()
    return policy.merged(env) if env is not None else policy


def operator_value(name: str) -> str | None:
    """An allowed key's value: the root-level st.secrets entry, else the environment. None for names not allowed."""
    if name not in operator_policy().keys:
        return None
    return _secret_value(name) or os.environ.get(name) or None


def available() -> set[str]:
    """Names of the allowed keys that have a value (names only: for the launch form's checks)."""
    return {n for n in operator_policy().keys if operator_value(n)}


# ----------------------------------------------------------------------------- visitor keys (this session only)


def session_var(uid: str) -> str:
    from .lineup import SESSION_PREFIX  # lineup reads configs (yaml, engine rules): not needed to draw a page

    return SESSION_PREFIX + "".join(c if c.isalnum() else "_" for c in uid).upper()


def set_session_key(uid: str, key: str, base_url: str) -> str:
    """Keep a pasted key for this session (memory only); returns the variable name configs refer to."""
    var = session_var(uid)
    st.session_state.setdefault(_SESSION, {})[var] = (key, base_url.strip())
    return var


def drop_session_key(uid: str) -> None:
    st.session_state.get(_SESSION, {}).pop(session_var(uid), None)


def session_keys() -> dict[str, tuple[str, str]]:
    return dict(st.session_state.get(_SESSION, {}))


def session_policy() -> KeyPolicy:
    return KeyPolicy(keys={v: (url,) for v, (_, url) in session_keys().items()})


# ----------------------------------------------------------------------------- the app's resolver and child processes


def _lookup(name: str) -> str | None:
    pasted = session_keys().get(name)
    return pasted[0] if pasted else operator_value(name)


def _resolve(name: str, base_url: str, source: Source = Source.OTHER) -> str | None:
    """The operator's policy and values (st.secrets, then the environment), plus, inside a Streamlit session, that
    session's pasted keys. Outside a session (a thread of its own) only the operator's: in the app's process no
    ``${VAR}`` ever reaches an undeclared variable. The policy decides for every ``source``: nothing in the app's
    process is a config the operator wrote."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is None:
        return policy_resolver(operator_policy(), operator_value)(name, base_url, source)
    return policy_resolver(operator_policy().merged(session_policy()), _lookup)(name, base_url, source)


def _public() -> bool:
    return public_mode.settings().public


def install() -> None:
    """Make the engine resolve ``${VAR}`` in this process through :func:`_resolve`, and check destinations with this
    app's public mode (app/public_mode.py), not only ``MAFIASCOPE_PUBLIC`` (idempotent)."""
    set_key_resolver(_resolve)
    set_public_check(_public)


# What a process the app starts may see of the server's environment: the system's basics (PATH, HOME, the
# locale, the temporary directory, the Python path of this checkout), how to reach the network (proxies and CA
# bundles, which a model API behind a proxy needs) and mafiascope's own settings, nothing else. Keys are added by
# name, only those the policy in force allows (operator's and this session's).
CHILD_ENV_NAMES = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP", "PYTHONPATH",
                   "PYTHONHASHSEED", "PYTHONUTF8", "VIRTUAL_ENV", "SYSTEMROOT", "XDG_CACHE_HOME",
                   "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE",
                   "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
                   "MAFIASCOPE_CACHE_DIR", "MAFIASCOPE_LOGS", "MAFIASCOPE_RUNS", "MAFIASCOPE_LOGS_DIR", "MAFIASCOPE_BUS_URL",
                   "MAFIASCOPE_ANALYTICS_THREADS", "MAFIASCOPE_ALLOWED_HOSTS")  # fmt: skip
CHILD_ENV_PREFIXES = ("LC_",)


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a process the app starts: :data:`CHILD_ENV_NAMES` (and ``LC_*``) from the server's,
    the key policy in force (operator's + this session's) and exactly the allowed keys' values; any other
    server variable is absent there, so no config, log or line-up can name it. It also says that the config
    files on the process' command line are the app's, not the operator's (``file_source``: a visitor's line-up,
    a log's config), should the policy ever be missing."""
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV_NAMES or k.startswith(CHILD_ENV_PREFIXES)}
    policy = operator_policy().merged(session_policy())
    env.update(policy.to_env())
    env[ENV_FROM_APP] = "1"
    env[ENV_PUBLIC] = "1" if public_mode.settings().public else "0"  # the games refuse server-only hosts in public mode
    for name in operator_policy().keys:
        value = operator_value(name)
        if value:
            env[name] = value
    for name, (key, _) in session_keys().items():
        env[name] = key
    env.update(extra or {})
    return env
