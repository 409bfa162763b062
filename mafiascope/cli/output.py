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
