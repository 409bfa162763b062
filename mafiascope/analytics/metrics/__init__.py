"""The registry of seat-level metrics (:class:`..metric.Metric`).

Each module of this package declares one family: a module-level ``METRICS`` tuple and its place in the
order (``ORDER``; ties by module name). The registry is every module found here, so adding a module adds
its statistics to the report (``metrics``, ``by_model``, ``by_model_role``), ``compare``, the text report,
the report directory and the Dashboard (docs/architecture.md, "How to add a metric").
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Any

from ..metric import BETTER, FRAGILE_MARK, Metric, Place, Statistic


@lru_cache(maxsize=1)
def registry() -> tuple[Metric, ...]:
    """Every registered metric, in order."""
    mods = [importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)
            if not m.name.startswith("_")]
    mods.sort(key=lambda mod: (getattr(mod, "ORDER", 1000), mod.__name__))
    found = tuple(x for mod in mods for x in getattr(mod, "METRICS", ()))
    names, keys = [x.name for x in found], [st.key for x in found for st in x.statistics]
    for what, seen in (("metric name", names), ("statistic key", keys)):
        dup = sorted({k for k in seen if seen.count(k) > 1})
        if dup:
            raise ValueError(f"two registered metrics share the {what} {dup[0]!r}")
    return found


def statistics() -> tuple[tuple[Metric, Statistic], ...]:
    """Every registered statistic with its metric, in order."""
    return tuple((m, st) for m in registry() for st in m.statistics)


def statistic_keys() -> tuple[str, ...]:
    return tuple(st.key for _, st in statistics())


def labels() -> dict[str, str]:
    """Statistic key -> label."""
    return {st.key: st.label for _, st in statistics()}


def better(key: str) -> str:
    """Which way is better for a statistic, in words (``↑ higher``, ``↓ lower``, ``neither``; "" if unregistered)."""
    d = {st.key: st.direction.value for _, st in statistics()}.get(key)
    return BETTER[d] if d else ""


def marked(text: str, fragile: Any) -> str:
    """A figure's text with the fragile mark when ``fragile`` (why it is fragile; None or NaN: it is not) is set
    (:data:`..metric.FRAGILE_MARK`)."""
    return f"{text} {FRAGILE_MARK}" if isinstance(fragile, str) and fragile else text


def shown(place: Place) -> set[str]:
    """The keys of the statistics shown at ``place``."""
    return {st.key for _, st in statistics() if place in st.shown}


def _at(key: str, place: Place, keys: set[str], known: set[str]) -> bool:
    return key in keys or key not in known  # a statistic no longer registered: a stored result drawn again


def rows_at(rows: list[dict], place: Place) -> list[dict]:
    """The comparison rows (``{"metric": key, ...}``) of the statistics shown at ``place``."""
    keys, known = shown(place), set(statistic_keys())
    return [r for r in rows if _at(r["metric"], place, keys, known)]


def metrics_at(metrics: dict[str, Any], place: Place) -> dict[str, Any]:
    """A ``metrics`` dict (statistic key -> figures) with the statistics shown at ``place``."""
    keys, known = shown(place), set(statistic_keys())
    return {k: v for k, v in metrics.items() if _at(k, place, keys, known)}
