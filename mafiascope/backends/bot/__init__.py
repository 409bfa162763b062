"""Offline bot players: no API key, deterministic, fast.

``BotBackend(name, preset="balanced")`` implements :class:`mafiascope.backends.base.Backend`.
See docs/bots.md for presets and behaviour.
"""

from .backend import BotBackend
from .presets import BOT_PRESETS, BotParams, get_preset, list_presets

__all__ = ["BOT_PRESETS", "BotBackend", "BotParams", "get_preset", "list_presets"]
