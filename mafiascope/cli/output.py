"""What a command prints: one JSON object under ``--json``, else text for a person.

Every command module reports through :func:`emit` (the figures) and :func:`say` (progress on
stderr), so the ``--json`` contract — exactly one JSON object on stdout, nothing else — lives here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any

Text = str | Iterable[str] | None

# Characters a terminal acts on rather than shows: C0 controls but TAB, line feed and carriage return (progress bars
# redraw their line with it), DEL, C1 controls (U+009B is a CSI on many terminals) and the bidirectional overrides and
# isolates (text shown in another order than it is).
_CONTROLS = [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_VISIBLE = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in _CONTROLS}


def terminal_text(text: str) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``): nothing printed can drive the terminal."""
    return text.translate(_VISIBLE)


class TerminalStream:
    """A text stream that writes through :func:`terminal_text`: the CLI's stdout and stderr while a command runs.

    Names, model replies and error messages come from logs, configs and models others control; printed raw, an
    ``ESC ] 52`` sequence wrote the reader's clipboard and ``ESC [ 2J`` cleared the screen. One wrapper at the
    boundary instead of an escape per ``print``."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def print_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, default=str, allow_nan=False))


def emit(args: argparse.Namespace, obj: Any, text: Text | Callable[[], Text]) -> None:
    """Print ``obj`` as one JSON object when ``args.json``, else ``text``: a string, lines, or a
    callable producing either. A callable (``obj`` or ``text``) is only called for the chosen output,
    so a field that costs work (provenance) or a text built by loops is not made in vain."""
    if getattr(args, "json", False):
        print_json(obj() if callable(obj) else obj)
        return
    out = text() if callable(text) else text
    if out is None:
        return
    for line in [out] if isinstance(out, str) else out:
        print(line)


def say(args: argparse.Namespace, text: str) -> None:
    """A progress line on stderr, left out under ``--json`` (the caller wants only the object)."""
    if not getattr(args, "json", False):
        print(text, file=sys.stderr)
