"""The ``mafiascope`` console command.

Each module in :mod:`mafiascope.cli.commands` defines ``register(subparsers)`` and adds its
subcommands with ``set_defaults(func=handler)``; ``handler(args) -> int`` is the exit code.
Commands that report figures take ``--json`` (options.add_json_flag) and then print exactly one
JSON object (output.emit; the keys documented in docs/cli.md).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys

from .. import __version__
from ..redaction import scrub_text
from .output import TerminalStream, emit, print_json, say

__all__ = ["CliError", "build_parser", "emit", "main", "one_line", "print_json", "say"]


class CliError(Exception):
    """A user error: printed as one clear line, exit code 2, no traceback."""


# PyYAML's position line ``  in "<unicode string>", line 3, column 1:`` (the snippet and caret follow it)
_YAML_MARK = re.compile(r'^\s*in "[^"]*", line (\d+), column (\d+):?\s*$')


def one_line(message: str) -> str:
    """A possibly multi-line error message as one line: config/battery errors list one problem per
    indented line (joined with ``; ``); PyYAML's position block becomes ``at line L, column C``."""
    lines = message.splitlines()
    if len(lines) <= 1:
        return message.strip()
    parts: list[str] = []
    skip = 0
    for line in lines:
        if skip and line.startswith("    "):  # the quoted source line and the caret under it
            skip -= 1
            if line.strip() == "^)" and parts:
                parts[-1] += ")"
            continue
        skip = 0
        m = _YAML_MARK.match(line)
        if m:
            at = f"at line {m.group(1)}, column {m.group(2)}"
            parts[-1:] = [f"{parts[-1]} {at}"] if parts else [at]
            skip = 2
            continue
        if line.strip():
            parts.append(line.strip())
    if not parts:
        return message.strip()
    return parts[0] + (": " + "; ".join(parts[1:]) if parts[1:] else "")


def command_name(args: argparse.Namespace) -> str:
    """``run``, ``probes validate``, ``bus worker`` ...: the command as the user typed it."""
    words = [str(args.command)]
    for key, value in vars(args).items():
        if key.endswith("_command") and value:
            words.append(str(value))
    return " ".join(words)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mafiascope", description="Probe LLM agents playing Mafia.",
                                     epilog="`mafiascope COMMAND --help` describes a command; all of them: docs/cli.md. "
                                            "User errors print one line and exit 2.")
    parser.add_argument("--version", action="version", version=f"mafiascope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from . import commands

    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{mod.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def _format_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None) -> str:
    # one line per warning (e.g. "<file>:<line>: skipping torn last line"), not Python's source excerpt
    return f"mafiascope: warning: {message}\n"


def main(argv: list[str] | None = None) -> int:
    import warnings

    saved, warnings.formatwarning = warnings.formatwarning, _format_warning
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalStream(sys.stdout), TerminalStream(sys.stderr)
    try:
        return _main(argv)
    finally:
        warnings.formatwarning = saved
        sys.stdout, sys.stderr = streams


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"mafiascope {command_name(args)}: error: {scrub_text(one_line(str(exc)))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # logs are written and flushed record by record: what is on disk is valid (a torn last line at most)
        print(f"mafiascope {command_name(args)}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
