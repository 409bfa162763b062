"""The ``kind`` values of game.jsonl records, as constants: code outside :mod:`mafiascope.logs`
compares against these (or uses the typed events of :mod:`mafiascope.logs.schema`), never
against string literals, so a renamed or new kind is one edit here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SETUP = "setup"
GAME_OVER = "game_over"

# seat replies (each occupies one msg_seq)
INTRO = "intro"
NIGHT_MAFIA = "night_mafia"
NIGHT_DOCTOR = "night_doctor"
NIGHT_SHERIFF = "night_sheriff"
NIGHT_DON = "night_don"
MAFIA_TALK = "mafia_talk"
DAY_DISCUSS = "day_discuss"
DAY_VOTE = "day_vote"
LAST_WORDS = "last_words"
BEST_MOVE = "best_move"
DEFENCE = "defence"

# engine records
NIGHT_SHERIFF_RESULT = "night_sheriff_result"
NIGHT_DON_RESULT = "night_don_result"
NIGHT_KILL = "night_kill"
NIGHT_SAVE = "night_save"
NIGHT_NO_KILL = "night_no_kill"
NIGHT_ANALYSIS = "night_analysis"
NIGHT_SHOTS = "night_shots"
SHOT_ORDER = "shot_order"
NOMINATION = "nomination"
VOTE_TALLY = "vote_tally"
DAY_ELIMINATE = "day_eliminate"
NO_ELIMINATION = "no_elimination"
HOST = "host"

UTTERANCE_KINDS = (INTRO, NIGHT_MAFIA, NIGHT_DOCTOR, NIGHT_SHERIFF, NIGHT_DON, MAFIA_TALK, DAY_DISCUSS, DAY_VOTE,
                   LAST_WORDS, BEST_MOVE, DEFENCE)  # fmt: skip
NIGHT_ACTION_KINDS = (NIGHT_MAFIA, NIGHT_DOCTOR, NIGHT_SHERIFF, NIGHT_DON)
CHECK_RESULT_KINDS = (NIGHT_SHERIFF_RESULT, NIGHT_DON_RESULT)
DEATH_KINDS = (NIGHT_KILL, DAY_ELIMINATE)  # records that remove a seat from the game


def death_of(record: dict) -> str | None:
    """The seat a ``night_kill`` / ``day_eliminate`` record removes, else None."""
    kind = record.get("kind")
    victim = record.get("victim") if kind == NIGHT_KILL else record.get("eliminated") if kind == DAY_ELIMINATE else None
    return victim if isinstance(victim, str) else None


def of(record: Mapping[str, Any]) -> str | None:
    """The kind of a raw record (None when it has none): ``kinds.of(rec) == kinds.NIGHT_KILL``."""
    kind = record.get("kind")
    return kind if isinstance(kind, str) else None
