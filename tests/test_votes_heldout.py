"""False votes and recall of the vote parser on a held-out set of replies.

``tests/fixtures/votes_heldout.jsonl`` was written without reading the parser or the labelled
set of ``test_votes_labelled.py`` (whose author also wrote the parser): day-vote replies in the
style LLM players write them, half English and half Russian, reasoning then a decision. The
votes use plain first-person phrasings, protocol lines, Markdown, mixed-case and punctuated names,
Russian case forms and trailing emoji; the replies that cast no vote are refusals, conditions,
past votes, questions, others' quoted votes, retractions and hypotheticals. A reply may also quote
someone's vote, or take its own back, before its own final vote. ``expected`` is the player the
reply votes for, or null; ``names`` are the living players.

The same bar as the labelled set: no false vote, recall at least 0.95.
``python -m tests.test_votes_heldout`` prints the figures per language and kind.
"""

from __future__ import annotations

import json
from pathlib import Path

from .test_votes_labelled import assert_scores, language, report

HELDOUT = Path(__file__).parent / "fixtures" / "votes_heldout.jsonl"


def load_items() -> list[dict]:
    items = []
    for line in HELDOUT.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        items.append({**item, "action": "vote", "why": item["kind"]})
    return items


def test_heldout_set_is_large_and_mixed():
    items = load_items()
    assert len(items) >= 250
    for lang in ("en", "ru"):
        mine = [it for it in items if language(it) == lang]
        assert len(mine) >= 120
        assert sum(it["expected"] is None for it in mine) >= 50  # replies that cast no vote
    assert all(it["expected"] is None or it["expected"] in it["names"] for it in items)


def test_heldout_no_false_votes_and_recall():
    assert_scores(load_items())


if __name__ == "__main__":
    print(report(load_items()))
