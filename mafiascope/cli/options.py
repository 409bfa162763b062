"""Options several commands share, declared once so their flag and help read the same everywhere."""

from __future__ import annotations

import argparse


def add_json_flag(p: argparse.ArgumentParser, help: str = "print one JSON object") -> None:
    """``--json``: the command prints exactly one JSON object (its keys documented in docs/cli.md)."""
    p.add_argument("--json", action="store_true", help=help)


def add_preflight_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-preflight", action="store_true",
                   help="skip the one cheap call per distinct backend that checks, before anything is written, that "
                        "each backend answers (for offline or exotic setups)")


def add_progress_option(p: argparse.ArgumentParser, unit: str) -> None:
    """``--progress FILE``: JSONL events (start, one per finished ``unit``, done) a watcher such as the app reads."""
    p.add_argument("--progress", metavar="FILE",
                   help=f"append JSONL progress events (start, one per {unit}, done) to FILE, for a watcher such as the app")


def add_fault_budget_option(p: argparse.ArgumentParser, default: str = "0.2") -> None:
    p.add_argument("--fault-budget", type=float, metavar="SHARE",
                   help=f"a game whose seats fell back on more than this share of their moves (0..1) is recorded as "
                        f"invalid (default: {default})")
