"""Which games a figure's bootstrap resamples (docs/metrics.md §9): a model's figures resample the games
holding its seats alone, drawn with a seed made from the run's seed and those games' ids, so they do not
depend on which other games or models are loaded."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
from collections.abc import Iterator

import numpy as np

from .modes import Mode


def frame_seed(seed: int, game_ids: list[str]) -> int:
    """The seed of a resampling frame's draws: a function of the run's seed and the frame's game ids alone
    (sha256), so the draws over a model's games do not depend on which other games or models are loaded,
    and two frames (two models' games) never share a draw pattern (docs/metrics.md §9)."""
    h = hashlib.sha256(f"{int(seed)}\x00".encode())
    for gid in game_ids:
        h.update(str(gid).encode("utf-8", "surrogatepass") + b"\x00")
    return int.from_bytes(h.digest()[:8], "big") >> 1  # a non-negative 63-bit integer


def frame_mode(mode: Mode, game_ids: list[str]) -> Mode:
    """``mode`` with the draws of the frame of these games (:func:`frame_seed`)."""
    return dataclasses.replace(mode, seed=frame_seed(mode.seed, game_ids))


class Frame:
    """The games a figure's bootstrap resamples: their indexes in the corpus (``games``, ascending) out of
    ``m``, and the mode whose seed draws them (:func:`frame_mode`)."""

    __slots__ = ("games", "m", "mode")

    def __init__(self, games: np.ndarray, m: int, mode: Mode):
        self.games, self.m, self.mode = games, m, mode


_FRAME: contextvars.ContextVar[Frame | None] = contextvars.ContextVar("mafiascope_frame", default=None)


@contextlib.contextmanager
def resampling_frame(keep: np.ndarray, game_ids: list[str], mode: Mode) -> Iterator[None]:
    """Inside: every :func:`cluster_ci` over the corpus' games (``len(keep)`` rows) resamples only the games
    where ``keep`` holds, with their own draws (a model's figures over its own games)."""
    games = np.flatnonzero(keep)
    token = _FRAME.set(Frame(games, len(keep), frame_mode(mode, [game_ids[i] for i in games.tolist()])))
    try:
        yield
    finally:
        _FRAME.reset(token)


def framed(per_game: np.ndarray, mode: Mode) -> tuple[np.ndarray, Mode]:
    """``per_game``'s rows and the mode to resample them with: inside a :func:`resampling_frame` (when the
    rows are the corpus' games) the frame's games and draws, else all of them as given."""
    frame = _FRAME.get()
    if frame is not None and per_game.shape[0] == frame.m:
        return per_game[frame.games], frame.mode
    return per_game, mode
