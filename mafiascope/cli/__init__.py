"""The ``mafiascope`` console command.

Each module in :mod:`mafiascope.cli.commands` defines ``register(subparsers)`` and adds its
subcommands with ``set_defaults(func=handler)``; ``handler(args) -> int`` is the exit code.
Commands that report figures take ``--json`` and then print exactly one JSON object
(documented in docs/cli.md).
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from typing import Any

from .. import __version__


class CliError(Exception):
    """A user error: printed as one clear line, exit code 2, no traceback."""


def print_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, default=str, allow_nan=False))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mafiascope", description="Probe LLM agents playing Mafia.")
    parser.add_argument("--version", action="version", version=f"mafiascope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from . import commands

    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{mod.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"mafiascope {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
