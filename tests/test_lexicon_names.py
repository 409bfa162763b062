"""One table of Russian spellings of the name pool: the vote parser, the bots' reader and the F4
transcript baselines (both modes) read every spelling in it as the same player."""

from __future__ import annotations

import pytest

from mafiascope.analytics.f4 import _compat_name_pattern, _stem_pattern
from mafiascope.backends.bot.reader import find_names
from mafiascope.engine.parsing import parse_vote
from mafiascope.lexicon.names import RUSSIAN_SPELLINGS

POOL = tuple(RUSSIAN_SPELLINGS)
CASES = [(latin, cyr) for latin, spellings in RUSSIAN_SPELLINGS.items() for cyr in spellings]


@pytest.mark.parametrize(("latin", "cyr"), CASES)
def test_every_spelling_is_the_same_player_everywhere(latin, cyr):
    vote = parse_vote(f"Я уверен.\nГОЛОС: {cyr}", list(POOL))
    assert (vote.target, vote.valid) == (latin, True)
    assert [p for _, p in find_names(f"Я подозреваю {cyr}.", POOL)] == [latin]
    assert _stem_pattern(latin).search(f"думаю, {cyr} врёт")
    assert _compat_name_pattern(latin).search(f"думаю, {cyr} врёт")


@pytest.mark.parametrize(("latin", "inflected"), [("Dana", "Даны"), ("Gray", "Грея"), ("Ellis", "Эллису"), ("Finley", "Финли")])
def test_case_forms_are_read_by_the_vote_parser_and_the_bots(latin, inflected):
    assert parse_vote(f"ГОЛОС: {inflected}", list(POOL)).target == latin
    assert [p for _, p in find_names(f"против {inflected}!", POOL)] == [latin]


def test_the_transcript_baseline_reads_the_spellings_letter_transliteration_missed():
    # letter by letter, Ellis was "еллис" and Finley "финлеи": Russian transcripts never matched them
    assert _stem_pattern("Ellis").search("Эллис молчит")
    assert _stem_pattern("Finley").search("Финли молчит")
    assert not _stem_pattern("Ellis").search("Финли молчит")
