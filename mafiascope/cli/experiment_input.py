"""What the fork, replay, validate and resume commands share: their errors as one CLI line, the
branches' backends preflighted before anything is written, and ``SEAT=VALUE`` options."""

from __future__ import annotations

import argparse
from typing import Any

from . import CliError
from .commands.run import check_backends


def cli_errors(fn: Any) -> Any:
    """Run ``fn`` turning replay errors, backend configuration errors (a ``${VAR}`` key set
    nowhere) and unsafe paths (a symlink where a result goes) into CliError (one clear line, exit 2)."""
    from ..backends.base import BackendError
    from ..backends.preflight import PreflightError
    from ..logs.paths import UnsafePathError
    from ..replay.source import ReplayError

    def wrapped(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (ReplayError, BackendError, UnsafePathError, PreflightError) as exc:
            raise CliError(str(exc)) from None

    return wrapped


def branch_backends(plans: list[Any], args: argparse.Namespace) -> dict[str, Any]:
    """Build the branches' backends and preflight them before anything starts, so that a key set
    nowhere or a backend that does not answer is an error before the first branch directory or
    batch record is written (instances are shared per process)."""
    from ..backends.registry import build_backends

    out: dict[str, Any] = {}
    for plan in plans:
        out = build_backends(plan.cfg.backends, logs_dir=plan.logs_dir)
    check_backends([plan.cfg for plan in plans], args)
    return out


def seat_pairs(values: list[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values or []:
        if "=" not in v:
            raise CliError(f"{flag} {v!r}: expected SEAT=VALUE")
        k, val = v.split("=", 1)
        if not k.strip() or not val.strip():
            raise CliError(f"{flag} {v!r}: expected SEAT=VALUE")
        out[k.strip()] = val.strip()
    return out
