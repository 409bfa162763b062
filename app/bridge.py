"""The app's only door into mafiascope.analytics: cached calls, clear messages when a
function has not landed yet. No metric is computed here.
"""

from __future__ import annotations

import hashlib
import importlib
import time
from pathlib import Path
from typing import Any, Callable

import streamlit as st

from .data import file_sig
from .text import md_escape


class AnalyticsMissing(RuntimeError):
    """A function the page needs is not (yet) in mafiascope.analytics."""


def need(module: str, attr: str) -> Callable[..., Any]:
    try:
        mod = importlib.import_module(f"mafiascope.analytics.{module}")
    except ImportError as exc:
        raise AnalyticsMissing(f"mafiascope.analytics.{module} is not available yet ({exc})") from None
    fn = getattr(mod, attr, None)
    if fn is None:
        raise AnalyticsMissing(f"mafiascope.analytics.{module}.{attr} is not available yet")
    return fn


def has(module: str, attr: str) -> bool:
    try:
        need(module, attr)
        return True
    except AnalyticsMissing:
        return False


def show_missing(exc: Exception, what: str) -> None:
    st.info(f"**{md_escape(what)}** will appear here once the analytics layer provides it: {md_escape(exc)}.", icon="⏳")


_SIG_MEMO: dict[int, tuple[float, tuple[str, ...], tuple]] = {}
SIG_TTL_S = 2.0


def sigs(dirs: tuple[str, ...]) -> tuple:
    """(size, mtime) signatures of the games' files; memoised for a couple of seconds so a
    rerun of a page over 1,000 games does not stat 3,000 files several times."""
    h = hash(dirs)
    hit = _SIG_MEMO.get(h)
    now = time.monotonic()
    if hit is not None and hit[1] == dirs and now - hit[0] < SIG_TTL_S:
        return hit[2]
    out = tuple(file_sig(d) for d in dirs)
    if len(_SIG_MEMO) > 64:
        _SIG_MEMO.clear()
    _SIG_MEMO[h] = (now, dirs, out)
    return out


def digest(dirs: tuple[str, ...]) -> str:
    """One short cache key for a selection of games and the state of their files."""
    return hashlib.sha1(repr((dirs, sigs(dirs))).encode()).hexdigest()


def mode(compat: bool = False, boot: int = 1000, seed: int = 0) -> Any:
    Mode = need("modes", "Mode")
    from mafiascope.analytics.modes import COMPAT_2026_07

    return Mode(compat=COMPAT_2026_07 if compat else None, boot=boot, seed=seed)


@st.cache_resource(max_entries=16, show_spinner="Loading the corpus (columnar cache) ...")
def _corpus(_dirs: tuple[str, ...], key: str, include_forks: bool, probed_only: bool, model: str | None,
            include_invalid: bool = False) -> Any:  # fmt: skip
    load_corpus = need("corpus", "load_corpus")
    return load_corpus([Path(d) for d in _dirs], include_forks=include_forks, probed_only=probed_only, model=model,
                       include_invalid=include_invalid)  # fmt: skip


def include_invalid_choice() -> bool:
    """The sidebar's choice to analyse games over their fault budget too (part of every corpus's key)."""
    return bool(st.session_state.get("sb_invalid", False))


def corpus(dirs: list[str] | tuple[str, ...], *, include_forks: bool = False, probed_only: bool = True,
           model: str | None = None, include_invalid: bool | None = None) -> Any:
    """A loaded analytics Corpus of exactly these game directories (shared, read-only). Invalid games
    (over their fault budget) are left out unless ``include_invalid`` (default: the sidebar's choice)."""
    dirs = tuple(sorted(str(d) for d in dirs))
    if include_invalid is None:
        include_invalid = include_invalid_choice()
    return _corpus(dirs, digest(dirs), include_forks, probed_only, model, include_invalid)


_WARM: dict[str, bool] = {}


def pending(dirs: tuple[str, ...]) -> int:
    """How many of these games the analytics cache must parse before a corpus loads (0: warm);
    a selection found warm is remembered by its digest, so reruns do not look again."""
    key = digest(dirs)
    if key in _WARM:
        return 0
    n = int(need("corpus", "pending_corpus")([Path(d) for d in dirs]))
    if not n:
        if len(_WARM) > 256:
            _WARM.clear()
        _WARM[key] = True
    return n


def prepare(dirs: tuple[str, ...], progress: Callable[[int, int], None]) -> int:
    """Parse the games the cache lacks, batch by batch, calling ``progress(done, total)`` after each."""
    return int(need("corpus", "prepare_corpus")([Path(d) for d in dirs], progress=progress))


MODE_KEY = "sb_metric_mode"


def current_mode() -> Any:
    """The metric mode picked in the sidebar: default (corrected) or compat (original's figures)."""
    choice = st.session_state.get(MODE_KEY, "default")
    boot = int(st.session_state.get("sb_boot", 1000))
    return mode(compat=(choice == "compat"), boot=boot)
