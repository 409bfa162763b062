"""The probe engine: battery DSL, pipelined non-invasive scheduling, answer parsing, audit.

Public API:

* :func:`build_probe_hook` -- what the game runner calls (``play/game.py``)
* :mod:`.dsl` -- :class:`~.dsl.Battery`, :func:`~.dsl.load_battery`, :func:`~.dsl.parse_battery`
* :mod:`.parsing` -- :func:`~.parsing.extract_json` (docs/metrics.md §3.2), :func:`~.parsing.parse_answer`
* :mod:`.shapes` -- expected answer shapes and normalisation of the standard probes
* :mod:`.audit` / :mod:`.cost` -- log checks behind ``mafiascope audit`` / ``mafiascope cost``

Imports are lazy so that analytics can use :mod:`.parsing` without loading the engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def build_probe_hook(cfg: Any, *, state: Any, out_dir: str | Path, backends: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
    """(ProbeEngine | None, battery snapshot | None) for a game config; None when probes are off."""
    if not cfg.probes.enabled:
        return None, None
    from .dsl import battery_for_config
    from .scheduler import role_options

    battery, source = battery_for_config(cfg)
    engine = make_engine(battery, state, backends, out_dir, max_concurrency=cfg.probes.max_concurrency, max_lag_s=cfg.probes.max_lag_s)
    snap = battery.snapshot(source)
    snap.update(max_concurrency=engine.max_concurrency, max_lag_s=cfg.probes.max_lag_s, roles=role_options(state), engine_version=1)
    return engine, snap


def make_engine(battery: Any, state: Any, backends: dict[str, Any], out_dir: str | Path, *, max_concurrency: int | None = None,
                max_lag_s: float | None = None, on_record: Any = None) -> Any:  # fmt: skip
    """A probe engine writing ``out_dir/introspection.jsonl``: at most ``max_concurrency`` calls in flight (default:
    every seat's probes of one step at once; the backends serve acts first anyway), on a loop and thread of
    its own when a seat's backend waits on the network."""
    from .scheduler import NETWORK_TYPES, ProbeEngine

    concurrency = max_concurrency or max(1, len(state.seats) * len(battery.active))
    threaded = any(getattr(backends.get(s.backend), "type", "") in NETWORK_TYPES for s in state.seats)
    return ProbeEngine(battery, state, backends, Path(out_dir), max_concurrency=concurrency, max_lag_s=max_lag_s, threaded=threaded,
                       on_record=on_record)
