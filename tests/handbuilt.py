"""Hand-built game logs with known per-seat answers (for seat attribution, comparisons, reports).

Four seats: Ann (Mafia) and Bob (Villager) play model ``A``; Cy and Dee (Villagers) play model
``B``. In every game, after one day-1 message, Bob and Cy answer ``role_assessment``:

* Bob (A): Ann Mafia 90, Cy Villager 80, Dee Mafia 60 -> committed accuracy 2/3, Unknown 0/3;
* Cy (B): Ann Villager 70, Bob Villager 50, Dee Unknown 40 -> committed accuracy 1/2, Unknown 1/3.

Cy also gets one unparseable probe per game (parse rate: A 1/1, B 1/2). Game ``winners`` set
who won; seat win rate of A = 1/2 in every game; of B = 0 when the Mafia won, 1 otherwise.
Day 1: Bob says he suspects Ann, Cy suspects Dee; votes Bob->Ann, Cy->Dee, Dee->Ann, Ann->Dee.
"""

from __future__ import annotations

import json
from pathlib import Path

NAMES = ["Ann", "Bob", "Cy", "Dee"]
ROLES = ["Mafia", "Villager", "Villager", "Villager"]
MODELS = ["A", "A", "B", "B"]

BOB_RA = [{"player": "Ann", "guessed_role": "Mafia", "confidence": 90},
          {"player": "Cy", "guessed_role": "Villager", "confidence": 80},
          {"player": "Dee", "guessed_role": "Mafia", "confidence": 60}]
CY_RA = [{"player": "Ann", "guessed_role": "Villager", "confidence": 70},
         {"player": "Bob", "guessed_role": "Villager", "confidence": 50},
         {"player": "Dee", "guessed_role": "Unknown", "confidence": 40}]


def write_game(root: Path, gid: str, winner: str, *, probes: bool = True, models: list[str] | None = None) -> Path:
    d = root / gid
    d.mkdir(parents=True)
    ms = models or MODELS
    setup = {"kind": "setup", "game_id": gid, "ts": 1.0, "schema_version": 1, "language": "en", "rule_set": "classic",
             "players": [{"name": n, "role": r, "model": m, "backend": m} for n, r, m in zip(NAMES, ROLES, ms)]}
    ev = [setup,
          {"kind": "day_discuss", "round": 1, "msg_seq": 1, "player": "Bob", "response": "I suspect Ann is Mafia.", "ts": 2.0},
          {"kind": "day_discuss", "round": 1, "msg_seq": 2, "player": "Cy", "response": "Dee looks suspicious to me.", "ts": 3.0}]
    seq = 3
    for i, (voter, target) in enumerate((("Bob", "Ann"), ("Cy", "Dee"), ("Dee", "Ann"), ("Ann", "Dee"))):
        ev.append({"kind": "day_vote", "round": 1, "msg_seq": seq, "player": voter, "response": f"VOTE: {target}",
                   "action": "vote", "target": target, "target_valid": True, "ts": 4.0 + i})
        seq += 1
    ev.append({"kind": "vote_tally", "round": 1, "votes": {"Bob": "Ann", "Cy": "Dee", "Dee": "Ann", "Ann": "Dee"}, "ts": 9.0})
    ev.append({"kind": "game_over", "round": 1, "winner": winner, "reason": "test", "ts": 10.0})
    (d / "game.jsonl").write_text("\n".join(json.dumps(e) for e in ev) + "\n", encoding="utf-8")
    if probes:
        def probe(t: float, who: str, pid: str, parsed, raw: str | None = None) -> dict:
            return {"timestamp": t, "game_id": gid, "round": 1, "public_msg_seq": 1, "player_name": who, "probe_seq": 0,
                    "probe_id": pid, "phase": "day_discuss", "question": "q?",
                    "answer_raw": raw if raw is not None else json.dumps(parsed), "answer_parsed": parsed,
                    "answer_parse_ok": parsed is not None}

        recs = [probe(2.1, "Bob", "role_assessment", BOB_RA), probe(2.2, "Cy", "role_assessment", CY_RA),
                probe(2.3, "Cy", "suspicion_ranking", None, raw="no idea")]
        (d / "introspection.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    return d


def write_corpus(root: Path, winners: tuple[str, ...] = ("Mafia", "Villagers", "Villagers"), **kw) -> Path:
    for i, w in enumerate(winners):
        write_game(root, f"hb-{i:02d}", w, **kw)
    return root
