"""F4's previous-round plurality baseline (docs/metrics.md §7.4): in default mode the voter's other most voted
for in the game's previous tally, so it can be computed although the previous tally's top target has usually
been eliminated; compat keeps the original's rule (that top target, when still a candidate)."""

from __future__ import annotations

import json
from pathlib import Path

NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve"]
ROLES = ["Mafia", "Villager", "Villager", "Villager", "Villager"]


DAY1 = {"Ann": "Dee", "Bob": "Dee", "Cy": "Dee", "Dee": "Bob", "Eve": "Bob"}


def _game(root: Path, gid: str, day2: dict[str, str], day1: dict[str, str] = DAY1) -> None:
    """Day 1: ``day1`` (by default Ann, Bob, Cy vote Dee, Dee and Eve vote Bob), Dee is eliminated; day 2: ``day2``
    (the survivors)."""
    d = root / gid
    d.mkdir(parents=True)
    ev: list[dict] = [{"kind": "setup", "game_id": gid, "ts": 1.0, "schema_version": 1, "language": "en",
                       "rule_set": "classic", "players": [{"name": n, "role": r, "model": "m", "backend": "m"}
                                                          for n, r in zip(NAMES, ROLES)]}]
    ts, seq = 2.0, 1
    for rnd, votes, out in ((1, day1, "Dee"),
                            (2, day2, None)):
        for voter, target in votes.items():
            ev.append({"kind": "day_vote", "round": rnd, "msg_seq": seq, "player": voter, "response": f"VOTE: {target}",
                       "action": "vote", "target": target, "target_valid": True, "ts": ts})
            ts, seq = ts + 1, seq + 1
        ev.append({"kind": "vote_tally", "round": rnd, "votes": votes, "ts": ts})
        ts += 1
        if out:
            ev.append({"kind": "day_eliminate", "round": rnd, "eliminated": out, "ts": ts})
            ts += 1
    ev.append({"kind": "game_over", "round": 2, "winner": "Villagers", "reason": "test", "ts": ts})
    (d / "game.jsonl").write_text("\n".join(json.dumps(e) for e in ev) + "\n", encoding="utf-8")


def _f4(root: Path, compat: bool) -> dict:
    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.f4 import f4
    from mafiascope.analytics.modes import Mode

    c = load_corpus(root, probed_only=False, cache_dir=root.parent / "cache")
    return f4(c, Mode(compat="mafiascope-2026-07" if compat else None, boot=0), transcripts=True)


def test_previous_round_plurality_reads_the_most_voted_living_player(tmp_path):
    root = tmp_path / "games"
    # day 2: Dee (day 1's top target) is out; Bob, day 1's runner-up, is the baseline of every voter but himself
    _game(root, "g1", {"Ann": "Bob", "Cy": "Bob", "Eve": "Ann", "Bob": "Ann"})
    got = _f4(root, compat=False)
    town, mafia = got["innocent"]["previous_round_plurality"], got["mafia"]["previous_round_plurality"]
    # Cy -> Bob hits, Eve -> Ann misses; Bob himself has no baseline (Bob is not one of his others; Ann and Cy
    # and Eve got no day-1 vote); Ann (Mafia) -> Bob hits
    assert (town["k"], town["n"]) == (1, 2) and (mafia["k"], mafia["n"]) == (1, 1)
    # compat: the original's rule (day 1's plurality, Dee, is eliminated): nothing to count
    old = _f4(root, compat=True)
    assert old["innocent"]["previous_round_plurality"]["n"] == 0 == old["mafia"]["previous_round_plurality"]["n"]


def test_previous_round_plurality_is_not_read_on_a_tie(tmp_path):
    root = tmp_path / "games"
    # day 1: Dee out, Bob and Cy one vote each; day 2: Ann's and Eve's others hold both (a tie: no baseline), Bob's
    # only Cy, Cy's only Bob (each a unique top), and both vote Ann: two counted misses
    day1 = {"Ann": "Dee", "Bob": "Dee", "Cy": "Dee", "Dee": "Bob", "Eve": "Cy"}
    _game(root, "g1", {"Ann": "Eve", "Eve": "Ann", "Bob": "Ann", "Cy": "Ann"}, day1)
    got = _f4(root, compat=False)
    town, mafia = got["innocent"]["previous_round_plurality"], got["mafia"]["previous_round_plurality"]
    assert (town["k"], town["n"]) == (0, 2) and mafia["n"] == 0
