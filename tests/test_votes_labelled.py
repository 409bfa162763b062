"""Precision and recall of the protocol-line parser on a labelled set of replies.

``tests/fixtures/votes/labelled.jsonl`` holds real replies of the bundled corpora
(``data/corpus``, referenced by game, kind, round and player, so no text is copied) and
replies written for this test: prose that casts no vote (past tense, conditionals,
rejections, quotes of others' votes, dashes in prose, Russian verb forms ...), protocol
lines that must be read (Markdown, case, punctuation, trailing text, inflected Russian
names) and hedged protocol lines that must be refused. ``expected`` is the player the
reply votes for (or acts on), or null when it casts none.

Precision must be 1.0: a reply that casts no vote is never read as one (a false vote
changes who leaves a live game and every vote metric). Recall must be 1.0 too: every
item labelled with a name is a protocol line, and the rule promises to read all of them;
anything else is re-asked, which the labels do not count as a read.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from mafiascope.engine.parsing import parse_target

ROOT = Path(__file__).parents[1]
LABELLED = ROOT / "tests" / "fixtures" / "votes" / "labelled.jsonl"
NAMES = ["Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray", "Harper", "Jordan", "Logan"]


@lru_cache(maxsize=None)
def _game(corpus: str, game: str) -> tuple[dict, ...]:
    path = ROOT / "data" / "corpus" / corpus / game / "game.jsonl"
    return tuple(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def _corpus_reply(ref: dict) -> tuple[str, list[str]]:
    """The referenced reply and the players alive when it was given."""
    records = _game(ref["corpus"], ref["game"])
    names = [p["name"] for p in records[0]["players"]]
    dead: set[str] = set()
    hits = []
    for r in records:
        if r["kind"] in ("night_kill", "day_eliminate"):
            dead.add(r.get("victim") or r.get("eliminated"))
        if all(r.get(k) == ref[k] for k in ("kind", "round", "player")):
            hits.append((r["response"], [n for n in names if n not in dead]))
    assert len(hits) == 1, f"reference {ref} matches {len(hits)} records"
    return hits[0]


def load_items() -> list[dict]:
    items = []
    for line in LABELLED.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if item["source"] == "corpus":
            item["text"], item["names"] = _corpus_reply(item["ref"])
        item.setdefault("names", NAMES)
        items.append(item)
    return items


def score(items: list[dict]) -> dict:
    tp = fp = fn = 0
    wrong: list[str] = []
    for it in items:
        got = parse_target(it["text"], it["action"], it["names"])
        read = got.target if got.valid else None
        exp = it["expected"]
        if read is not None and read == exp:
            tp += 1
            continue
        if read is not None:
            fp += 1
        if exp is not None:
            fn += 1
        if read != exp:
            wrong.append(f"{it['id']} ({it['why']}): expected {exp!r}, read {read!r} [{got.note}]")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "wrong": wrong}


def test_labelled_set_is_large_and_mixed():
    items = load_items()
    assert len(items) >= 150
    assert {it["source"] for it in items} == {"corpus", "written"}
    ru = [it for it in items if any("\u0400" <= ch <= "\u04ff" for ch in it["text"])]
    assert len(ru) >= 40  # Russian replies, real and written
    assert sum(it["expected"] is None for it in items) >= 100  # replies that cast no vote


def test_precision_and_recall():
    items = load_items()
    s = score(items)
    votes = [it for it in items if it["action"] == "vote"]
    sv = score(votes)
    print(f"\nlabelled set: {len(items)} items ({sum(it['expected'] is not None for it in items)} with a target); "
          f"all actions: precision {s['precision']:.3f} recall {s['recall']:.3f} (tp {s['tp']} fp {s['fp']} fn {s['fn']}); "
          f"votes only ({len(votes)}): precision {sv['precision']:.3f} recall {sv['recall']:.3f}")
    assert s["precision"] == 1.0, "false reads:\n" + "\n".join(s["wrong"])
    assert s["recall"] == 1.0, "missed protocol lines:\n" + "\n".join(s["wrong"])
