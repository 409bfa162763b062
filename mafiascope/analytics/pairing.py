"""How a comparison of two models resamples its games (docs/metrics.md §16): the games both models' seats
hold are resampled together (paired), the games of one model alone apart, each stratum with its own
frame's draws (:mod:`.resample_frames`), so two corpora with no shared game are two independent
resamplings, each exactly a model's own."""

from __future__ import annotations

from typing import Any

import numpy as np

from .corpus import Corpus
from .modes import Mode
from .resample_frames import frame_mode
from .stats import multiplicities


def frame_multiplicities(cm: Corpus, mode: Mode, games: np.ndarray) -> Any:
    """The (B, |games|) multiplicities of the games ``games`` (bool over ``cm``'s games), drawn with the frame's
    seed (:func:`.resample_frames.frame_mode`): they depend on those games and the run's seed alone."""
    ids = cm.games["game_id"].to_numpy()[games].tolist()
    return multiplicities(len(ids), frame_mode(mode, [str(x) for x in ids]))


PAIRED, PARTLY_PAIRED, INDEPENDENT = "paired", "partly paired", "independent samples"


def design(ma: np.ndarray, mb: np.ndarray) -> str:
    """How two seat masks' games relate: ``paired`` (every game holds both), ``independent samples`` (no game
    holds both: two corpora compared), else ``partly paired``."""
    ga, gb = ma.any(1), mb.any(1)
    shared = int((ga & gb).sum())
    if shared == 0:
        return INDEPENDENT
    return PAIRED if shared == int(ga.sum()) == int(gb.sum()) else PARTLY_PAIRED


def strata(ga: np.ndarray, gb: np.ndarray) -> list[np.ndarray]:
    """The games both models' seats hold, a's alone and b's alone (the non-empty ones)."""
    return [s for s in (ga & gb, ga & ~gb, gb & ~ga) if s.any()]


def paired_resamples(cm: Corpus, mode: Mode, pa: np.ndarray, pb: np.ndarray, groups: list[np.ndarray]
                     ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(B, k) resampled pooled sums of both models: each stratum of games resampled on its own (its frame's
    draws), so games both sat in stay paired, and each model's games alone are resampled as its own
    figures are (independent samples: two separate resamplings)."""
    if mode.boot == 0 or not groups:
        return None, None
    ra = np.zeros((mode.boot, pa.shape[1]))
    rb = np.zeros((mode.boot, pb.shape[1]))
    for s in groups:
        mult = np.asarray(frame_multiplicities(cm, mode, s))
        ra += mult @ pa[s]
        rb += mult @ pb[s]
    return ra, rb
