"""Log schema (the single source of truth) and JSONL I/O."""

from .io import GAME_FILE, PROBE_FILE, STATE_FILE, JsonlWriter, LogFormatError, iter_jsonl, iter_probe_records, probe_records_at, read_jsonl
from .schema import SCHEMA_VERSION, validate_game_id

__all__ = [
    "GAME_FILE",
    "PROBE_FILE",
    "STATE_FILE",
    "JsonlWriter",
    "LogFormatError",
    "iter_jsonl",
    "iter_probe_records",
    "probe_records_at",
    "read_jsonl",
    "SCHEMA_VERSION",
    "validate_game_id",
]
