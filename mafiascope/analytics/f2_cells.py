"""F2's sums for a set of calibration observations, from one pass over its rows: per (agent, bin) cell,
and what the corpus's, each model's, each game's and each (model, game)'s figures sum.

Every sum equals the one F2 took over the rows of its subset (pinned in ``tests/test_f2_cells.py``):
- counts and correct counts are sums of 0/1 values, exact in any order: a coarser cell is the sum of its
  agents' cells (a model's rows are its agents' rows, a game's its seats');
- confidence sums likewise when every confidence is a whole number (each partial sum is an integer far
  below 2**53, so every addition is exact); otherwise each is a bincount of the rows in row order, as F2's;
- Brier terms are not whole numbers: each sum F2 took in row order per cell (per game, per (model, game),
  per agent) is one bincount over that key, each ``sum()`` (the corpus's, each model's, each agent's)
  numpy's pairwise sum of the group's rows in row order (:func:`.arrays_out.group_sums`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays_out import group_sums
from .frames import dense_groups

N_BINS = 5
COLS = 3 * N_BINS + 1  # bin_columns' layout: (correct, n, confidence sum) per bin, then the Brier sum


@dataclass(frozen=True)
class ObsCells:
    """Sums of one set of observations; agents are (game, seat) slots ``g * S + obs`` with rows, sorted."""

    m: int
    agents: np.ndarray  # (A,) agent codes
    agent_games: np.ndarray  # (A,) each agent's game
    agent_models: np.ndarray  # (A,) each agent's model code
    agent_cols: np.ndarray  # (A, COLS) bin_columns of each agent's rows
    agent_brier: np.ndarray  # (A,) each agent's Brier terms' sum()
    bins: np.ndarray  # (5, 3) correct, n, confidence sum per bin over every row
    brier: float  # every Brier term's sum()
    game_cols: np.ndarray  # (m, COLS) bin_columns per game
    model_bins: np.ndarray  # (K, 5, 3) per model, as ``bins``
    model_brier: np.ndarray  # (K,) each model's Brier terms' sum()
    model_game_brier: np.ndarray  # (K, m) each model's Brier sum per game, in row order
    model_game_conf: np.ndarray | None  # (K, m, 5) its confidence sums per (game, bin) when not whole numbers

    def model_game_cols(self, j: int) -> np.ndarray:
        """(m, COLS) bin_columns of model ``j``'s rows (zeros for a model without rows, or ``j`` < 0)."""
        out = np.zeros((self.m, COLS))
        if j < 0 or j >= len(self.model_brier):
            return out
        at = np.flatnonzero(self.agent_models == j)
        out[:, : COLS - 1] = _pool(self.agent_cols[at, : COLS - 1], self.agent_games[at], self.m)
        if self.model_game_conf is not None:
            out[:, 2 : COLS - 1 : 3] = self.model_game_conf[j]
        out[:, COLS - 1] = self.model_game_brier[j]
        return out


def _pool(cols: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """(n_groups, k) sums of the rows of ``cols`` per group (exact: whole numbers)."""
    out = np.empty((n_groups, cols.shape[1]))
    for j in range(cols.shape[1]):
        out[:, j] = np.bincount(group, weights=cols[:, j], minlength=n_groups)
    return out


def _whole(x: np.ndarray) -> bool:
    return bool(np.array_equal(x, np.trunc(x)))


def obs_cells(rows: dict[str, np.ndarray], m: int, model_codes: np.ndarray, n_models: int) -> ObsCells:
    """The sums of the observations ``rows`` (F2's ``g``, ``obs``, ``conf``, ``outcome``, ``bin`` columns);
    ``model_codes`` is the (m, S) model code of each seat slot (:func:`.frames.seat_model_codes`)."""
    g, obs, conf, out_, b = (rows[k] for k in ("g", "obs", "conf", "outcome", "bin"))
    S = model_codes.shape[1]
    if len(obs) and (int(obs.min()) < 0 or int(obs.max()) >= S):
        raise IndexError(f"observer seat out of bounds for {S} seats")
    agent = g.astype(np.int64)
    agent *= S
    agent += obs
    agents, ai = dense_groups(agent, m * S)
    del agent
    A = len(agents)
    cell = ai * N_BINS
    cell += b
    kns = np.stack([np.bincount(cell, weights=out_, minlength=A * N_BINS),
                    np.bincount(cell, minlength=A * N_BINS).astype(float),
                    np.bincount(cell, weights=conf, minlength=A * N_BINS)], axis=1).reshape(A, 3 * N_BINS)
    del cell
    x = (conf / 100.0 - out_) ** 2
    agent_games, agent_models = agents // S, model_codes.ravel()[agents]
    row_model = agent_models.astype(np.min_scalar_type(max(n_models - 1, 0)))[ai]  # one or two bytes a row
    whole = _whole(conf)
    game_cols = np.empty((m, COLS))
    game_cols[:, : COLS - 1] = _pool(kns, agent_games, m)
    game_cols[:, COLS - 1] = np.bincount(g, weights=x, minlength=m)
    bins = _pool(kns, np.zeros(A, dtype=np.intp), 1).reshape(N_BINS, 3)
    model_bins = _pool(kns, agent_models, n_models).reshape(n_models, N_BINS, 3)
    mg = row_model.astype(np.int64)
    mg *= m
    mg += g
    model_game_conf = None
    if not whole:  # confidence sums in row order per cell, as F2 took them
        game_cols[:, 2 : COLS - 1 : 3] = np.bincount(g.astype(np.int64) * N_BINS + b, weights=conf,
                                                     minlength=m * N_BINS).reshape(m, N_BINS)
        bins[:, 2] = np.bincount(b, weights=conf, minlength=N_BINS)
        model_bins[:, :, 2] = np.bincount(row_model.astype(np.int64) * N_BINS + b, weights=conf,
                                          minlength=n_models * N_BINS).reshape(n_models, N_BINS)
        model_game_conf = np.bincount(mg * N_BINS + b, weights=conf,
                                      minlength=n_models * m * N_BINS).reshape(n_models, m, N_BINS)
    return ObsCells(
        m=m, agents=agents, agent_games=agent_games, agent_models=agent_models,
        agent_cols=np.column_stack([kns, np.bincount(ai, weights=x, minlength=A)]),
        agent_brier=group_sums(x, ai, A), bins=bins, brier=float(x.sum()), game_cols=game_cols,
        model_bins=model_bins, model_brier=group_sums(x, row_model, n_models),
        model_game_brier=np.bincount(mg, weights=x, minlength=n_models * m).reshape(n_models, m),
        model_game_conf=model_game_conf)
