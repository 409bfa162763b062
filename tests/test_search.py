"""Corpus search: utterances, probe reasons and plans; cached per game; hand-built logs with known answers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mafiascope.analytics.search import build_index

ROOT = Path(__file__).resolve().parents[1]


def _game(root: Path, gid: str, utterances: list[tuple[int, int, str, str]], probes: list[dict]) -> Path:
    d = root / gid
    d.mkdir(parents=True)
    recs = [{"game_id": gid, "kind": "setup", "round": 0, "players": []}]
    recs += [{"game_id": gid, "kind": "day_discuss", "round": r, "msg_seq": s, "player": p, "response": t} for r, s, p, t in utterances]
    recs.append({"game_id": gid, "kind": "game_over", "round": 2, "winner": "Mafia"})
    (d / "game.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs), encoding="utf-8")
    (d / "introspection.jsonl").write_text("".join(json.dumps({"game_id": gid, **x}) + "\n" for x in probes), encoding="utf-8")
    return d


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    _game(root, "g1", [(1, 1, "Ann", "I think **Bob** is Mafia."), (1, 2, "Bob", "Ann is lying, VOTE: Ann")], [
        {"round": 1, "public_msg_seq": 1, "player_name": "Cid", "probe_id": "role_assessment",
         "answer_parsed": [{"player": "Bob", "guessed_role": "Mafia", "confidence": 80, "reason": "Bob dodged the question."},
                           {"player": "Ann", "guessed_role": "Villager", "confidence": 60, "reason": "Ann sounds sincere."}]},
        {"round": 1, "public_msg_seq": 2, "player_name": "Bob", "probe_id": "planned_action",
         "answer_parsed": {"action": "push the vote on Ann", "target": "Ann", "reasoning": "She is onto me."}},
        {"round": 1, "public_msg_seq": 2, "player_name": "Ann", "probe_id": "role_assessment", "answer_parsed": None,
         "answer_raw": "not json: Bob dodged"},
    ])
    _game(root, "g2", [(2, 5, "Dee", "Bob dodged again, so VOTE: Bob")], [])
    return root


def test_hits_name_game_step_speaker_source_and_the_text(tmp_path):
    ix = build_index(_corpus(tmp_path), cache_dir=tmp_path / "cache")
    hits, n = ix.search("DODGED")
    assert n == 2
    assert [(h.game_id, h.round, h.msg_seq, h.player, h.source, h.probe_id, h.about) for h in hits] == [
        ("g1", 1, 1, "Cid", "reason", "role_assessment", "Bob"),
        ("g2", 2, 5, "Dee", "utterance", None, None),
    ]
    assert hits[0].text == "Bob dodged the question."  # unparsed answers are not searched as reasons
    plan, _ = ix.search("onto me")
    assert [(h.source, h.player, h.about) for h in plan] == [("plan", "Bob", "Ann")]
    assert ix.search("push vote", sources=["plan"])[1] == 1  # every term, in any order
    assert ix.search("push vote", sources=["utterance"])[1] == 0
    assert ix.search("**bob**")[0][0].text == "I think **Bob** is Mafia."  # text as written, no Markdown
    assert ix.search("   ") == ([], 0) and ix.search("zebra")[1] == 0
    assert ix.search("sincere", limit=0) == ([], 1)


def test_cache_rereads_only_changed_games_and_drops_removed_ones(tmp_path):
    root, cache = _corpus(tmp_path), tmp_path / "cache"
    build_index(root, cache_dir=cache)
    assert not list(root.rglob("*.parquet"))  # never inside the corpus
    g2 = root / "g2" / "game.jsonl"
    g2.write_text(g2.read_text().replace("dodged again", "hesitated again"), encoding="utf-8")
    os.utime(g2, ns=(1, 10**18))
    ix = build_index(root, cache_dir=cache)
    assert ix.search("hesitated")[1] == 1 and ix.search("dodged")[1] == 1
    import shutil

    shutil.rmtree(root / "g1")
    assert build_index(root, cache_dir=cache).search("dodged")[1] == 0


@pytest.mark.slow
def test_original_format_corpus_is_searchable(tmp_path):
    corpus = ROOT / "data" / "corpus"
    ix = build_index(corpus, cache_dir=tmp_path / "c")
    assert len(ix) > 100
    hits, n = ix.search("mafia")
    assert n > 10 and all(h.text for h in hits)
    assert {h.source for h in ix.search("a")[0]} <= {"utterance", "reason", "plan"}
