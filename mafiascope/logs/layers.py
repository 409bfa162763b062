"""Probe layers: sets of probe answers about one game, beside the answers asked in the game itself.

A game's own probe records (asked while it was played) are its ``game`` layer, ``introspection.jsonl``.
``mafiascope probes ask`` writes another layer per name, asked after the fact from the same recorded
contexts (another battery, another model as an observer):

    <game>/probe_layers/<NAME>/introspection.jsonl   the layer's probe records (the same schema and codec)
    <game>/probe_layers/<NAME>/layer.json            what produced them: battery, backend, when, fault verdict

A layer name is validated like a game id (it names a directory); ``game`` is the in-game layer and
cannot be written. Readers ask :func:`probe_path` for the records of a layer, so the analytics, the
app and notebooks read any layer the way they read the game's own.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .io import PROBE_FILE
from .schema import validate_game_id

LAYERS_DIR = "probe_layers"
MANIFEST = "layer.json"
IN_GAME = "game"  # the name of the answers asked while the game was played


class LayerError(ValueError):
    """A layer name or directory that cannot be used (one line naming it)."""


def check_layer_name(name: str) -> str:
    """``name`` if it can name a layer (like a game id: letters, digits, '.', '_', '-')."""
    try:
        validate_game_id(name)
    except ValueError:
        raise LayerError(f"layer name {name!r:.60}: use letters, digits, '.', '_' or '-' (no path separators, no leading dot, "
                         "at most 128 characters)") from None  # fmt: skip
    return name


def is_in_game(layer: str | None) -> bool:
    return layer is None or layer == IN_GAME


def layer_dir(game_dir: str | Path, name: str) -> Path:
    """``<game>/probe_layers/<name>`` (the name checked; never the in-game layer)."""
    check_layer_name(name)
    if name == IN_GAME:
        raise LayerError(f"layer name {IN_GAME!r} is the game's own probe answers (introspection.jsonl); choose another name")
    return Path(game_dir) / LAYERS_DIR / name


def probe_path(game_dir: str | Path, layer: str | None = None) -> Path:
    """The probe records of ``layer`` (None or ``game``: the game's own ``introspection.jsonl``)."""
    if is_in_game(layer):
        return Path(game_dir) / PROBE_FILE
    return layer_dir(game_dir, str(layer)) / PROBE_FILE


def probe_dir(game_dir: str | Path, layer: str | None = None) -> Path:
    """The directory holding the layer's ``introspection.jsonl`` (what :func:`~.io.iter_probe_records` reads)."""
    return Path(game_dir) if is_in_game(layer) else layer_dir(game_dir, str(layer))


def layer_invalid(game_dir: str | Path, layer: str | None) -> str | None:
    """The reason the layer of this game is over its fault budget (``layer.json``), else None."""
    if is_in_game(layer):
        return None
    m = read_manifest(game_dir, str(layer))
    return str(m.get("invalid_reason") or "over its fault budget") if m and m.get("invalid") else None


def list_layers(game_dir: str | Path) -> list[str]:
    """The names of the game's after-the-fact layers that hold records (real directories only)."""
    root = Path(game_dir) / LAYERS_DIR
    if not root.is_dir() or root.is_symlink():
        return []
    out = []
    for d in sorted(root.iterdir()):
        try:
            check_layer_name(d.name)
        except LayerError:
            continue
        if d.is_dir() and not d.is_symlink() and (d / PROBE_FILE).is_file() and not (d / PROBE_FILE).is_symlink():
            out.append(d.name)
    return out


def read_manifest(game_dir: str | Path, name: str) -> dict[str, Any] | None:
    path = layer_dir(game_dir, name) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_manifest(game_dir: str | Path, name: str, data: dict[str, Any]) -> Path:
    """Write ``layer.json`` atomically (a temporary file renamed over it)."""
    d = layer_dir(game_dir, name)
    d.mkdir(parents=True, exist_ok=True)
    path = d / MANIFEST
    tmp = d / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
