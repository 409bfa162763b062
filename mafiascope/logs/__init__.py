"""Log schema (the single source of truth), JSONL I/O and the typed read API.

In a notebook: ``from mafiascope.logs import read_game`` (docs/logs.md).
"""

from . import kinds
from .battery import BatterySnapshot, ProbeSpec
from .game_facts import INDEX_COLUMNS, event_text, game_index_row, game_language
from .game_log import GameLog, InvalidRecordWarning, MissingSetupError, iter_games, read_game
from .io import (
    GAME_FILE,
    PROBE_FILE,
    STATE_FILE,
    JsonlWriter,
    LogFormatError,
    iter_jsonl,
    iter_probe_records,
    list_game_dirs,
    probe_records_at,
    read_jsonl,
)
from .schema import SCHEMA_VERSION, validate_game_id
from .steps import ROUND_END, StepKey, step_label, step_order
from .timeline import Timeline, TimelineStep

__all__ = [
    "GAME_FILE",
    "INDEX_COLUMNS",
    "PROBE_FILE",
    "STATE_FILE",
    "BatterySnapshot",
    "GameLog",
    "InvalidRecordWarning",
    "JsonlWriter",
    "LogFormatError",
    "MissingSetupError",
    "ProbeSpec",
    "ROUND_END",
    "SCHEMA_VERSION",
    "StepKey",
    "Timeline",
    "TimelineStep",
    "event_text",
    "game_index_row",
    "game_language",
    "iter_games",
    "iter_jsonl",
    "iter_probe_records",
    "kinds",
    "list_game_dirs",
    "probe_records_at",
    "read_game",
    "read_jsonl",
    "step_label",
    "step_order",
    "validate_game_id",
]
