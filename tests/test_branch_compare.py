"""Parent and branches aligned at the fork step (hand-built logs with known answers, and a real fork)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mafiascope.replay.compare import compare_branches, first_divergence
from mafiascope.replay.source import ReplayError

PLAYERS = ["Ann", "Bob", "Cid", "Dee"]


def _ra(r: int, s: int, agent: str, mafia: set[str], inherited: bool = False) -> dict:
    return {"round": r, "public_msg_seq": s, "player_name": agent, "probe_id": "role_assessment", "answer_parse_ok": True,
            "answer_parsed": [{"player": p, "guessed_role": "Mafia" if p in mafia else "Villager", "confidence": 70} for p in PLAYERS],
            **({"inherited": True} if inherited else {})}


def _game(root: Path, gid: str, talk: list[tuple[int, int, str, str]], probes: list[dict], extra: list[dict], setup: dict) -> Path:
    d = root / gid
    d.mkdir(parents=True)
    recs = [{"game_id": gid, "kind": "setup", "round": 0, "players": [{"name": p} for p in PLAYERS], **setup}]
    recs += [{"game_id": gid, "kind": "day_discuss", "round": r, "msg_seq": s, "player": p, "response": t} for r, s, p, t in talk]
    recs += extra
    recs.append({"game_id": gid, "kind": "game_over", "round": 1, "winner": setup.get("_winner", "Mafia")})
    (d / "game.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs), encoding="utf-8")
    (d / "introspection.jsonl").write_text("".join(json.dumps({"game_id": gid, **x}) + "\n" for x in probes), encoding="utf-8")
    return d


def test_known_suspicion_eliminations_and_first_divergence(tmp_path):
    shared = [(1, 1, "Ann", "hello"), (1, 2, "Bob", "I am town")]
    parent = _game(tmp_path, "p", shared + [(1, 3, "Cid", "Bob is Mafia"), (1, 4, "Dee", "agree")],
                   [_ra(1, 2, a, {"Bob"}) for a in PLAYERS] + [_ra(1, 3, "Ann", set())],
                   [{"game_id": "p", "kind": "day_eliminate", "round": 1, "eliminated": "Bob", "role": "Mafia", "votes": 3}],
                   {"_winner": "Villagers"})
    branch = _game(tmp_path, "b", shared + [(1, 3, "Cid", "Dee is Mafia"), (1, 4, "Dee", "no")],
                   [_ra(1, 2, a, {"Bob"}, inherited=True) for a in PLAYERS] + [_ra(1, 3, a, {"Dee"}) for a in ("Ann", "Bob", "Cid")],
                   [{"game_id": "b", "kind": "day_eliminate", "round": 1, "eliminated": "Dee", "role": "Villager", "votes": 3},
                    {"game_id": "b", "kind": "night_kill", "round": 2, "victim": "Ann"}],
                   {"forked_from": "p", "fork_point": [1, 2]})
    c = compare_branches(parent, [branch])
    assert c.fork_point == (1, 2)
    s = c.suspicion.set_index(["game_id", "k", "player"])
    # at the fork step everyone but Bob names Bob: 3 of 3 other assessors
    assert s.loc[("p", 0, "Bob"), "suspicion"] == 1.0 and s.loc[("p", 0, "Bob"), "n"] == 3
    assert s.loc[("b", 0, "Bob"), "suspicion"] == 1.0
    # one step later: in the parent Ann changed her mind (2 of 3); in the branch three players name Dee
    assert s.loc[("p", 1, "Bob"), "suspicion"] == pytest.approx(2 / 3)
    assert s.loc[("b", 1, "Dee"), "suspicion"] == 1.0 and s.loc[("b", 1, "Bob"), "suspicion"] == pytest.approx(1 / 3)
    band = c.band().set_index(["k", "player"])
    assert band.loc[(1, "Dee"), "mean"] == 1.0 and band.loc[(1, "Dee"), "branches"] == 1
    el = c.eliminations.set_index("game_id")
    assert el.loc["p", "victim"] == "Bob" and list(el.loc["b", "victim"]) == ["Dee", "Ann"] and not el.loc["b", "before_fork"].any()
    # the Replay page's table says when in words: the night kill's step has no message, so it is "Night 2", not "R2.0"
    from app.branch_compare_view import elimination_table

    table = elimination_table(c)
    assert list(table["step"]) == ["R1.4", "R1.4", "Night 2"] and list(table["how"]) == ["day vote", "day vote", "night kill"]
    # after an elimination the victim has no suspicion value
    assert not s.loc[("p", 2, "Bob"), "alive"] and pd.isna(s.loc[("p", 2, "Bob"), "suspicion"])
    assert [u["text"] for u in c.transcripts["p"]] == ["Bob is Mafia", "agree"]
    assert c.divergence == {"b": 0}
    assert c.outcomes["p"]["winner"] == "Villagers" and c.outcomes["b"]["winner"] == "Mafia"


def test_first_divergence_cases():
    a = [{"player": "A", "text": "x"}, {"player": "B", "text": "y"}]
    assert first_divergence(a, a) is None
    assert first_divergence(a, a[:1]) == 1
    assert first_divergence(a, [a[0], {"player": "B", "text": "z"}]) == 1


def test_not_a_branch_is_refused(tmp_path):
    p = _game(tmp_path, "p", [], [], [], {})
    other = _game(tmp_path, "o", [], [], [], {"forked_from": "zzz", "fork_point": [1, 1]})
    with pytest.raises(ReplayError, match="not a branch of p"):
        compare_branches(p, [other])
    with pytest.raises(ReplayError, match="no branches"):
        compare_branches(p, [])
