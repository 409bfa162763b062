"""What a seat-level metric is, declared once: the columns it reads, a pure kernel from a block of games to
per-(game, seat) sufficient statistics, and the statistics read off those sums with how each is shown.

Every such metric is registered in :mod:`.metrics` (one module per family, found by name); the executor
(:mod:`.executor`) alone decides how a kernel runs (blocks of games, threads, what is kept and for how
long) and pools the sums under the game-level bootstrap; the report's per-model sections, ``compare``,
the text report, the report directory and the Dashboard render every registered statistic. How to add
one: docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from .modes import Mode

Values = Callable[[np.ndarray], np.ndarray]  # pooled (R, k) sums -> (R,) values, NaN where undefined


class Direction(str, Enum):
    """Which way is better, for a reader ranking models."""

    HIGHER = "higher"
    LOWER = "lower"
    NEUTRAL = "neutral"  # descriptive: neither side is better (volatility, a rate of switching, ...)


@dataclass(frozen=True)
class Format:
    """How a value reads: its unit (``proportion``: a share in 0-1; ``number``: anything else), the
    decimals it is written with, and whether its values lie on the shares' scale (``bounded``: ECE or a
    difference of shares do, a ratio or an error on a 0-100 scale do not; the forest plot draws those on an
    axis of their own)."""

    kind: str = "proportion"
    decimals: int = 3
    bounded: bool = True

    def text(self, value: float | None) -> str:
        return "n/a" if value is None or value != value else f"{value:.{self.decimals}f}"


PROPORTION = Format("proportion")
NUMBER = Format("number")  # on the shares' scale all the same (ECE, Brier, a side-adjusted score)
UNBOUNDED = Format("number", bounded=False)


class Place(str, Enum):
    """Where a statistic is shown."""

    BY_MODEL = "by_model"  # the report's ``by_model`` / ``by_model_role`` and the text report's per-model block
    COMPARE = "compare"  # ``mafiascope compare`` (text, JSON) and the report directory's comparisons
    REPORT_DIR = "report_dir"  # ``mafiascope report``'s per-model tables (CSV, LaTeX) and report.md's
    DASHBOARD = "dashboard"  # the Cross-Game Dashboard's model comparison (table and forest plot)


EVERYWHERE = frozenset(Place)

MIN_VOTES = 20  # a vote-based figure (F4, town votes) from fewer counted votes is fragile
MIN_GAMES = 10  # below this many games holding a figure's data, the game-level bootstrap has too few clusters to trust


def fragility(n: int, games: int, min_n: int, min_games: int = MIN_GAMES) -> str | None:
    """Why a figure resting on ``n`` units in ``games`` games is fragile (None: it is not): fewer units than
    its statistic's ``min_n``, or fewer games than ``min_games`` (docs/metrics.md §16)."""
    why = []
    if n < min_n:
        why.append(f"n {n} < {min_n}")
    if games < min_games:
        why.append(f"{games} game{'s' if games != 1 else ''} < {min_games}")
    return "; ".join(why) or None


FRAGILE_MARK = "†"  # beside a figure whose ``fragile`` is set, in every rendering that is not JSON
FRAGILE_NOTE = (f"{FRAGILE_MARK} fragile: fewer units than the metric's minimum n, or fewer than {MIN_GAMES} games "
                "holding its data (docs/metrics.md §16)")
def few_votes(n: int | None) -> str | None:
    """Why a corpus-level vote figure (F4's rates and baselines) resting on ``n`` counted votes is fragile:
    fewer than :data:`MIN_VOTES` (None: it is not, or there is no figure)."""
    return f"n {n} < {MIN_VOTES}" if n and n < MIN_VOTES else None


BETTER = {"higher": "↑ higher", "lower": "↓ lower", "neutral": "neither"}  # Direction value -> which way is better


@dataclass(frozen=True)
class Ratio:
    """The pooled sum of column(s) ``num`` over that of ``den`` (undefined where ``den`` sums to 0)."""

    num: str | tuple[str, ...]
    den: str | tuple[str, ...]


@dataclass(frozen=True)
class Statistic:
    """One figure read off a metric's pooled sums.

    ``value``: a :class:`Ratio` of the metric's columns, or a function of the pooled (R, k) sums (columns in
    the metric's order) giving (R,) values, NaN where undefined. ``n``: the column(s) whose pooled sum is the
    figure's n. ``direction``: which way is better. ``min_n``: below this n the figure is fragile (too few
    units to read; so is a figure from fewer than :data:`MIN_GAMES` games). Both are declared by every
    statistic: every output shows them. ``shown``: the places (:class:`Place`) that show it."""

    key: str  # "<section>.<name>": the key in by_model's ``metrics`` and in compare's rows
    label: str
    value: Ratio | Values
    n: str | tuple[str, ...]
    direction: Direction
    min_n: int
    format: Format = PROPORTION
    shown: frozenset[Place] = EVERYWHERE

    def fragile(self, n: int, games: int) -> str | None:
        """Why this figure over ``n`` units in ``games`` games is fragile, or None (:func:`fragility`)."""
        return fragility(n, games, self.min_n)

    def declared(self) -> dict[str, Any]:
        """What the statistic declares, as the report's ``statistics`` lists it."""
        return {"label": self.label, "direction": self.direction.value, "min_n": self.min_n, "min_games": MIN_GAMES,
                "format": self.format.kind}


@dataclass(frozen=True, eq=False)
class Source:
    """Rows (or per-game arrays) that several metrics and a report section share, built once per corpus and
    mode by ``build`` (which memoises them itself): a kernel reads a source's columns like a table's.

    ``build(corpus, mode)`` returns columns: with ``per_game`` False, rows with a ``g`` column in game
    order; with ``per_game`` True, arrays whose first axis is the game."""

    name: str
    build: Callable[[Any, Mode], Mapping[str, np.ndarray]]
    per_game: bool = False

    def __repr__(self) -> str:
        return f"Source({self.name})"


class GameBlock:
    """The games [lo, hi) of a corpus as a kernel sees them (numbered from 0 in the block).

    ``rows(name)``: the columns the metric declared of a table or :class:`Source` (``g``: the row's game in
    the block), ``games``: the corpus' per-game columns it declared (``reads["games"]``); per game and
    seat slot (``seats`` of them): ``role_code``, ``mafia`` (Mafia side), ``death_ts`` (+inf: never
    removed; -inf for a padding slot)."""

    __slots__ = ("lo", "hi", "mode", "seats", "role_code", "mafia", "death_ts", "games", "_rows")

    def __init__(self, lo: int, hi: int, mode: Mode, seats: int, role_code: np.ndarray, mafia: np.ndarray,
                 death_ts: np.ndarray, games: Mapping[str, np.ndarray], rows: Mapping[Any, Mapping[str, np.ndarray]]):
        self.lo, self.hi, self.mode, self.seats = lo, hi, mode, seats
        self.role_code, self.mafia, self.death_ts, self.games = role_code, mafia, death_ts, games
        self._rows = rows

    @property
    def m(self) -> int:
        return self.hi - self.lo

    def rows(self, name: str | Source) -> Mapping[str, np.ndarray]:
        return self._rows[name]

    def cell(self, g: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """Each row's (game, seat) cell ``g * seats + seat``; ``m * seats`` (past the last cell) for a row
        whose seat is not a seat slot."""
        s = np.asarray(seat)
        key = np.multiply(np.asarray(g), self.seats, dtype=np.int64)
        key += s
        off = (s < 0) | (s >= self.seats)
        if off.any():
            key[off] = self.m * self.seats
        return key

    def sums(self, g: np.ndarray, seat: np.ndarray, *weights: np.ndarray | None) -> np.ndarray:
        """(m, seats, len(weights)) sums per (game, seat) cell of each weight over the rows (None: count
        the rows); a row whose seat is not a seat slot counts for no cell. Each cell adds its rows in row
        order."""
        n = self.m * self.seats
        key = self.cell(g, seat)
        out = np.empty((self.m, self.seats, len(weights)))
        for i, w in enumerate(weights):
            cnt = np.bincount(key, weights=None if w is None else np.asarray(w, dtype=np.float64), minlength=n + 1)
            out[:, :, i] = cnt[:n].reshape(self.m, self.seats)
        return out

    def counts(self, g: np.ndarray, seat: np.ndarray, code: np.ndarray, n_codes: int) -> np.ndarray:
        """(m, seats, n_codes) rows per (game, seat) cell and code (codes in [0, n_codes))."""
        key = self.cell(g, seat)
        key *= n_codes
        key += code
        n = self.m * self.seats
        return np.bincount(key, minlength=(n + 1) * n_codes)[: n * n_codes].reshape(self.m, self.seats, n_codes)


Kernel = Callable[[GameBlock], np.ndarray]


@dataclass(frozen=True, eq=False)
class Metric:
    """A family of seat-level statistics computed from one kernel.

    ``section``: the report section whose intermediates the kernel's sources are (a lean report builds the
    sums right after that section's group). ``reads``: per table (``"votes"``, ``"probes"``, ...;
    ``"games"`` for the per-game columns) or
    :class:`Source`, the columns the kernel reads (``g`` is always there). ``kernel``: a pure function of a
    :class:`GameBlock` giving (games, seats, k) sums, one per ``columns`` name. ``needs_probes``: the
    metric exists only when the games have probe logs, and counts only the games that have them.
    ``games(corpus, mode)``: the games whose seats the metric counts (a bool per game; None: every game), e.g.
    the outcome statistics count only completed games with more than one model at the table; a model's
    figure and its bootstrap then rest on those of its games alone."""

    name: str
    section: str  # the report section whose intermediates the kernel reads (its group builds the sums)
    reads: Mapping[str | Source, tuple[str, ...]]
    kernel: Kernel
    columns: tuple[str, ...]
    statistics: tuple[Statistic, ...]
    needs_probes: bool = True
    games: Callable[[Any, Mode], np.ndarray] | None = None
    _values: dict[str, Values] = field(default_factory=dict, repr=False)
    _n: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for st in self.statistics:
            self._values[st.key] = self._resolve(st.value)
            self._n[st.key] = self._cols(st.n)

    def _cols(self, names: str | tuple[str, ...]) -> list[int]:
        names = (names,) if isinstance(names, str) else names
        missing = [x for x in names if x not in self.columns]
        if missing:
            raise ValueError(f"metric {self.name}: no column {missing[0]!r} (columns: {', '.join(self.columns)})")
        return [self.columns.index(x) for x in names]

    def _resolve(self, value: Ratio | Values) -> Values:
        if not isinstance(value, Ratio):
            return value
        num, den = self._cols(value.num), self._cols(value.den)

        def ratio(p: np.ndarray) -> np.ndarray:
            a = p[:, num[0]] if len(num) == 1 else p[:, num].sum(1)
            d = p[:, den[0]] if len(den) == 1 else p[:, den].sum(1)
            return np.where(d > 0, a / np.where(d > 0, d, 1), np.nan)

        return ratio

    def values(self, st: Statistic, pooled: np.ndarray) -> np.ndarray:
        """``st``'s (R,) values from (R, k) pooled sums."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(self._values[st.key](pooled), dtype=np.float64)

    def n(self, st: Statistic, pooled: np.ndarray) -> int:
        """``st``'s n from one row of pooled sums."""
        return int(round(float(np.sum(pooled[0, self._n[st.key]]))))

    def n_per_game(self, st: Statistic, per_game: np.ndarray) -> np.ndarray:
        """``st``'s n in each game of (m, k) per-game sums."""
        return per_game[:, self._n[st.key]].sum(1)
