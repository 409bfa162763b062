"""URL-addressable view state.

Canonical state lives in ``st.session_state`` under ``ms_*`` keys (widget keys are dropped by
Streamlit when a widget is not rendered, so they are never the source of truth). The URL
carries ``page`` (Streamlit's page path, or ``?page=`` on the root), ``game``, ``step``,
``agent`` and ``mode``; copying the URL reproduces the view. Invalid URL values are
reported with :func:`report_url_errors` as ``st.error`` messages and ignored.
"""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from mafiascope.logs import StepKey

from .text import md_escape

K_GAME, K_STEP, K_AGENT, K_MODE = "ms_game", "ms_step", "ms_agent", "ms_mode"
URL_KEYS = ("game", "step", "agent", "mode")
_ERRORS = "ms_url_errors"


def qp(name: str) -> str | None:
    v = st.query_params.get(name)
    if v is None:
        return None
    v = str(v).strip()
    return v or None


def quoted(raw: str, limit: int = 80) -> str:
    """A URL value quoted for a message, cut to ``limit`` characters (it is escaped when shown)."""
    return repr(raw if len(raw) <= limit else raw[:limit] + "…")


def add_url_error(msg: str) -> None:
    errs = st.session_state.setdefault(_ERRORS, [])
    if msg not in errs:
        errs.append(msg)


def report_url_errors(where: object | None = None) -> None:
    """Show (once) every URL problem found so far in this run (in ``where``, a container, if given)."""
    msgs = st.session_state.pop(_ERRORS, [])
    if not msgs:
        return
    target = where if where is not None else st
    for msg in msgs:
        target.error(md_escape(msg), icon="🔗")  # the messages quote untrusted URL values


def get(key: str, default: Any = None) -> Any:
    return st.session_state.get(key, default)


def put(key: str, value: Any) -> None:
    st.session_state[key] = value


def sync_url(**values: Any) -> None:
    """Write the view's state into the URL (None removes a key); no rerun is triggered."""
    for k, v in values.items():
        if v is None or v == "":
            if k in st.query_params:
                del st.query_params[k]
            put(f"ms_{k}_url_seen", None)
        else:
            sv = str(v)
            if st.query_params.get(k) != sv:
                st.query_params[k] = sv
            put(f"ms_{k}_url_seen", sv)  # our own write is not a new URL value on the next run


def parse_step(value: str, labels: list[str]) -> int:
    """Step from the URL: a 0-based index or a label like ``R1.5`` / ``R2.end`` (also ``R2-end``, ``R2end``,
    ``R2 end``: StepKey.parse); ValueError if invalid."""
    n = len(labels)
    if n == 0:
        raise ValueError("this game has no steps yet")
    v = value.strip()
    if re.fullmatch(r"-?\d+", v):
        i = int(v)
        if 0 <= i < n:
            return i
        raise ValueError(f"step {i} is out of range: this game has steps 0-{n - 1}")
    try:
        v = StepKey.parse(v).label
    except ValueError:
        pass
    else:
        if v in labels:
            return labels.index(v)
    raise ValueError(f"step {value!r} is not a step of this game (use 0-{n - 1} or a label like {labels[0]!r})")


def fresh_url_value(name: str) -> str | None:
    """The URL's value of ``name`` if it is new (typed or pasted, not written by the app), else None."""
    raw = qp(name)
    if raw is None or raw == get(f"ms_{name}_url_seen"):
        return None
    put(f"ms_{name}_url_seen", raw)
    return raw


def url_step(labels: list[str], *, game: str) -> int:
    """The step to show: the URL's (validated) on first sight, else the session's, clamped."""
    n = len(labels)
    cur = get(K_STEP)
    raw = fresh_url_value("step")
    fresh: int | None = None
    if raw is not None:
        try:
            fresh = parse_step(raw, labels)
        except ValueError as exc:
            add_url_error(f"URL parameter step={quoted(raw)}: {exc}. Showing the last step instead.")
    if get("ms_step_game") != game:
        put("ms_step_game", game)
        cur = fresh if fresh is not None else n - 1
    elif fresh is not None:
        cur = fresh
    if not isinstance(cur, int):
        cur = n - 1
    cur = max(0, min(n - 1, cur)) if n else 0
    put(K_STEP, cur)
    return cur


def url_agent(names: list[str], *, allow_none: bool = True) -> str | None:
    raw = fresh_url_value("agent")
    cur = get(K_AGENT)
    if raw is not None:
        if raw in names:
            cur = raw
        else:
            add_url_error(f"URL parameter agent={quoted(raw)}: no such player in this game (players: {', '.join(names)}).")
    if cur not in names:
        cur = None if allow_none else (names[0] if names else None)
    put(K_AGENT, cur)
    return cur


def url_mode(choices: tuple[str, ...], default: str) -> str:
    raw = fresh_url_value("mode")
    key = f"{K_MODE}:{','.join(choices)}"
    cur = get(key, default)
    if raw is not None:
        if raw in choices:
            cur = raw
        else:
            add_url_error(f"URL parameter mode={quoted(raw)}: choose one of {', '.join(choices)}.")
    if cur not in choices:
        cur = default
    put(key, cur)
    return cur


def set_mode(choices: tuple[str, ...], value: str) -> None:
    put(f"{K_MODE}:{','.join(choices)}", value)


def bound_int(name: str, lo: int, hi: int, default: int) -> int:
    """The value of an int widget bound to ``?name=`` (``bind="query-params"``) for code that runs before the
    widget is drawn: its session value, else the URL's when valid, else ``default``."""
    v = st.session_state.get(name)
    if isinstance(v, int):
        return v
    raw = qp(name)
    if raw is not None and re.fullmatch(r"-?\d+", raw) and lo <= int(raw) <= hi:
        return int(raw)
    return default


def url_choice(name: str, options: list[str], key: str) -> str | None:
    """Before a selectbox keyed ``key`` over ``options`` whose pick the URL carries as ``?name=``: take a new URL
    value (an unknown one is reported), keep the session's pick while it is an option, else the first option.
    Write it back with ``sync_url(name=...)`` after the widget: the URL then always names the pick, also when it is
    the first option (a link keeps its view when the options' order changes)."""
    raw = fresh_url_value(name)
    if raw is not None:
        if raw in options:
            st.session_state[key] = raw
        else:
            shown = ", ".join(options[:8]) + (", …" if len(options) > 8 else "")
            add_url_error(f"URL parameter {name}={quoted(raw)}: not one of the choices here ({shown}).")
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0] if options else None
    return st.session_state.get(key)
