"""Tests of a difference between two models and their multiple-comparison adjustment
(docs/metrics.md §16): the two-sided p from the bootstrap standard error, the resamples' tail
share as a check, Holm's step-down adjustment with the family it ran over, and how a p-value is
rounded and printed (never as 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

P_PRINT_FLOOR = 1e-6  # smaller p-values print as "< 1e-6": the normal/t tail is not trusted further out


def bootstrap_p(resampled: np.ndarray, observed: float | None, clusters: int) -> float | None:
    """Two-sided p-value of a zero difference from the bootstrap standard error (docs/metrics.md §16).

    ``t = observed / SE``, SE the standard deviation of the defined resampled differences, referred to
    Student's t with ``clusters - 1`` degrees of freedom (``clusters``: the games that hold data for
    the difference; the usual small-cluster reference). Its resolution does not depend on the number
    of resamples B, unlike the tail share of the resamples (:func:`bootstrap_tail_p`, floor 2/(B+1)).
    None when it cannot be tested: no observed difference, fewer than two games or defined resamples,
    or a nonzero difference that is the same in every resample (SE 0). A zero difference gives 1.
    """
    if observed is None or not math.isfinite(observed) or clusters < 2:
        return None
    d = np.asarray(resampled, dtype=np.float64)
    d = d[np.isfinite(d)]
    if len(d) < 2:
        return None
    se = float(np.std(d, ddof=1))
    if observed == 0:
        return 1.0
    if not se > 1e-12 * max(1.0, abs(observed)):  # no variation beyond rounding of the pooled sums
        return None
    from scipy.stats import t as student_t

    p = float(2 * student_t.sf(abs(observed) / se, clusters - 1))
    return min(1.0, max(p, np.finfo(np.float64).tiny))  # an underflow to 0 is stored as the smallest normal double


def bootstrap_tail_p(resampled: np.ndarray) -> float | None:
    """Twice the smaller share of resampled differences at or beyond zero, +1-corrected (never 0; its
    smallest value is 2/(B+1)): a check on :func:`bootstrap_p` where B allows it."""
    d = np.asarray(resampled, dtype=np.float64)
    d = d[~np.isnan(d)]
    if not len(d):
        return None
    lo, hi = int((d <= 0).sum()), int((d >= 0).sum())
    return min(1.0, 2 * (min(lo, hi) + 1) / (len(d) + 1))


def holm(pvalues: list[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values (None stays None; the family is the non-None ones)."""
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    order = sorted(idx, key=lambda i: pvalues[i])  # type: ignore[arg-type, return-value]
    k = len(order)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * float(pvalues[i])))  # type: ignore[arg-type]
        out[i] = running
    return out


def holm_family(text: str, tests: list[str]) -> dict[str, Any]:
    """The tests a Holm adjustment ran over (``size``, ``tests``) and the sentence that names them
    (``text``), which every front end prints beside the adjusted p."""
    return {"size": len(tests), "text": text, "tests": tests}


def round_p(p: float | None, sig: int = 3) -> float | None:
    """``p`` to ``sig`` significant figures (a fixed number of decimals would turn 1e-9 into 0)."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return None
    return float(f"{float(p):.{sig}g}")


def format_p(p: float | None, missing: str = "–", *, latex: bool = False) -> str:
    """A p-value as printed: 3 decimals from 0.001, scientific below, "< 1e-6" below that; never "0".
    ``latex``: the same in LaTeX math (``$<10^{-6}$``, ``$2.4\\times10^{-5}$``)."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return missing
    p = float(p)
    if p < P_PRINT_FLOOR:
        return "$<10^{-6}$" if latex else "< 1e-6"
    if p < 0.001:
        mant, exp = f"{p:.1e}".split("e")
        return f"${mant}\\times10^{{{int(exp)}}}$" if latex else f"{p:.1e}"
    return f"{p:.3f}"
