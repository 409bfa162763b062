"""The app's cached access to mafiascope.analytics: corpora keyed by the state of their files,
the sidebar's metric mode. No metric is computed here.

The corpus loader (pandas, pyarrow, the columnar cache) is imported by the calls that load: a page drawn
from results on disk (app/disk_memo.py) does not import it.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

import streamlit as st

from mafiascope.analytics.modes import COMPAT_2026_07, Mode

from .data import LAYER_KEY, recent_sig


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
    out = tuple(recent_sig(d, SIG_TTL_S) for d in dirs)
    if len(_SIG_MEMO) > 64:
        _SIG_MEMO.clear()
    _SIG_MEMO[h] = (now, dirs, out)
    return out


def digest(dirs: tuple[str, ...]) -> str:
    """One short cache key for a selection of games, the state of their files and the probe layer read."""
    return hashlib.sha1(repr((dirs, sigs(dirs), probe_layer_choice())).encode()).hexdigest()


def mode(compat: bool = False, boot: int = 1000, seed: int = 0) -> Mode:
    return Mode(compat=COMPAT_2026_07 if compat else None, boot=boot, seed=seed)


@st.cache_resource(max_entries=16, show_spinner="Loading the corpus (columnar cache) ...")
def _corpus(_dirs: tuple[str, ...], key: str, include_forks: bool, probed_only: bool, model: str | None,
            include_invalid: bool = False, probe_layer: str | None = None) -> Any:  # fmt: skip
    from mafiascope.analytics.corpus import load_corpus

    return load_corpus([Path(d) for d in _dirs], include_forks=include_forks, probed_only=probed_only, model=model,
                       include_invalid=include_invalid, probe_layer=probe_layer)  # fmt: skip


def probe_layer_choice() -> str | None:
    """The sidebar's probe layer (None: the games' own answers; docs/probes.md, "Asking after the fact")."""
    from mafiascope.logs.layers import IN_GAME

    v = st.session_state.get(LAYER_KEY)
    return None if not v or v == IN_GAME else str(v)


def corpus_choices() -> tuple[bool, str | None]:
    """Every sidebar choice a corpus's figures depend on besides the selection (stored results are keyed by it)."""
    return include_invalid_choice(), probe_layer_choice()





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
    return _corpus(dirs, digest(dirs), include_forks, probed_only, model, include_invalid, probe_layer_choice())


_WARM: dict[str, bool] = {}


def pending(dirs: tuple[str, ...]) -> int:
    """How many of these games the analytics cache must parse before a corpus loads (0: warm);
    a selection found warm is remembered by its digest, so reruns do not look again."""
    key = digest(dirs)
    if key in _WARM:
        return 0
    from mafiascope.analytics.corpus import pending_corpus

    n = int(pending_corpus([Path(d) for d in dirs], probe_layer=probe_layer_choice()))
    if not n:
        if len(_WARM) > 256:
            _WARM.clear()
        _WARM[key] = True
    return n


def prepare(dirs: tuple[str, ...], progress: Callable[[int, int], None]) -> int:
    """Parse the games the cache lacks, batch by batch, calling ``progress(done, total)`` after each."""
    from mafiascope.analytics.corpus import prepare_corpus

    return int(prepare_corpus([Path(d) for d in dirs], progress=progress, probe_layer=probe_layer_choice()))


MODE_KEY = "sb_metric_mode"


def current_mode() -> Mode:
    """The metric mode picked in the sidebar: default (corrected) or compat (original's figures)."""
    choice = st.session_state.get(MODE_KEY, "default")
    boot = int(st.session_state.get("sb_boot", 1000))
    return mode(compat=(choice == "compat"), boot=boot)
