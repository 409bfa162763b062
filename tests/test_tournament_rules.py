"""Ten-seat rules: every path with scripted seats (nominations, ties, lone nominee, shots, checks, words)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from mafiascope.backends.base import Completion
from mafiascope.config import parse_game_config
from mafiascope.engine.observation import context_for
from mafiascope.engine.rules import SPORT, CLASSIC, tournament_rules
from mafiascope.play.game import GameRunner, initial_state
from mafiascope.logs.io import read_jsonl
from mafiascope.logs.schema import parse_event

from .scripted import ScriptedBackend, alive_from, round_from

ROLES = [("Vito", "Don"), ("Mo", "Mafia"), ("Max", "Mafia"), ("Sam", "Sheriff"), ("Ann", "Villager"),
         ("Bob", "Villager"), ("Cid", "Villager"), ("Dee", "Villager"), ("Eve", "Villager"), ("Fay", "Villager")]  # fmt: skip
NAMES = [n for n, _ in ROLES]
MAFIA = {"Vito", "Mo", "Max"}


class TextBackend(ScriptedBackend):
    """Scripted seats whose plan also sees the instruction text: plan(seat, kind, round, alive, text)."""

    async def complete(self, request):
        self.requests.append(request)
        text = request.messages[-1]["content"]
        out = self.plan(request.seat, request.purpose, round_from(request.messages), alive_from(request.messages), text)
        return Completion(text=out or "", prompt_tokens=10, completion_tokens=5)


def script(kill=None, shots=None, nominate=None, votes=None, don=None, sheriff=None, floor=None, order="ORDER: Ann, Bob, Cid",
           suspects="SUSPECTS: Vito, Mo, Bob", say=None):  # fmt: skip
    """kill[r] = target (all Mafia), shots[r][seat], nominate[r][seat], votes[(r, stage)][seat], floor(seat, text) -> reply."""

    def plan(seat, kind, rnd, alive, text):
        if kind == "mafia_talk":
            return f"Plan.\n{order}" if "As the Don" in text else "Agreed."
        if kind == "night_mafia":
            t = (shots or {}).get(rnd, {}).get(seat) or (kill or {}).get(rnd, "nobody")
            return f"ACTION: Kill {t}"
        if kind == "night_don":
            return f"ACTION: Check {(don or {}).get(rnd, 'Ann')}"
        if kind == "night_sheriff":
            return f"ACTION: Check {(sheriff or {}).get(rnd, 'Ann')}"
        if kind == "best_move":
            return f"I was shot.\n{suspects}"
        if kind == "day_vote":
            stage = "remove_all" if "SECOND TIE" in text else "revote" if "REVOTE" in text else "vote"
            return f"VOTE: {(votes or {}).get((rnd, stage), {}).get(seat, 'nobody')}"
        if kind == "day_discuss":
            if "OPEN FLOOR" in text:
                return floor(seat, text) if floor else "PASS"
            n = (nominate or {}).get(rnd, {}).get(seat)
            return f"{(say or {}).get(seat, 'Thoughts.')}\nNOMINATE: {n}" if n else (say or {}).get(seat, "Thoughts.")
        return f"{seat} speaks."

    return plan


def cfg_for(rules, language="en"):
    return parse_game_config({"rules": rules.model_dump(), "language": language,
                              "seats": [{"name": n, "role": r, "backend": "s"} for n, r in ROLES],
                              "backends": {"s": {"type": "bot"}}, "probes": {"enabled": False}})  # fmt: skip


def play(tmp_path: Path, rules, plan, seed=1, language="en", extra_backends=None):
    cfg = cfg_for(rules, language)
    b = TextBackend("s", plan)
    backends = {"s": b, **(extra_backends or {})}
    state = initial_state(cfg, seed=seed, game_id="g", backends=backends)
    out = tmp_path / "g"
    out.mkdir(parents=True)
    runner = GameRunner(state, cfg, backends, out, None, False)
    asyncio.run(runner.run())
    return state, read_jsonl(out / "game.jsonl"), b


def kinds(events, kind, **match):
    return [e for e in events if e["kind"] == kind and all(e.get(k) == v for k, v in match.items())]


def everyone(target, names=NAMES):
    return {n: target for n in names}


# ------------------------------------------------------------------------------- sport


def test_sport_night_zero_order_and_unanimous_shot(tmp_path):
    plan = script(kill={1: "Ann", 2: "Bob"})
    state, ev, _ = play(tmp_path, SPORT, plan)
    order = kinds(ev, "shot_order")[0]
    assert order["order"] == ["Ann", "Bob", "Cid"] and set(order["visible_to"]) == MAFIA
    # night zero talk reaches only the Mafia; the Don speaks last
    talk0 = kinds(ev, "mafia_talk")
    assert [e["player"] for e in talk0][-1] == "Vito" and all(set(e["visible_to"]) == MAFIA for e in talk0)
    assert all(e["round"] == 0 for e in talk0)  # the Mafia never talk privately again
    kill1 = kinds(ev, "night_kill")[0]
    assert kill1["victim"] == "Ann" and kill1["round"] == 1 and kill1.get("first_shot")
    # each shot is seen only by its shooter
    assert all(e["visible_to"] == [e["player"]] for e in kinds(ev, "night_mafia"))
    assert any("[Mafia] The Don's order of shots: Ann, Bob, Cid." in m["content"] for m in context_for(state, "Mo").messages)
    assert not any("order of shots: Ann" in m["content"] for m in context_for(state, "Ann").messages)


def test_sport_split_shot_misses_and_is_logged(tmp_path):
    plan = script(shots={1: {"Vito": "Ann", "Mo": "Ann", "Max": "Bob"}}, kill={2: "Cid"})
    _, ev, _ = play(tmp_path, SPORT, plan)
    n1 = kinds(ev, "night_shots", round=1)[0]
    assert n1["landed"] is False and n1["shots"] == {"Vito": "Ann", "Mo": "Ann", "Max": "Bob"} and n1["visible_to"] == []
    assert kinds(ev, "night_no_kill", round=1)[0]["reason"] == "split_shot"
    assert "No one was killed" in kinds(ev, "night_analysis", round=2)[0]["night_result"]
    # the first player shot is the first one actually killed (night 2), and names the best move
    assert kinds(ev, "night_kill")[0]["victim"] == "Cid"
    bm = kinds(ev, "best_move")
    assert len(bm) == 1 and bm[0]["player"] == "Cid" and bm[0]["suspects"] == ["Vito", "Mo", "Bob"]


def test_sport_day1_needs_two_nominees(tmp_path):
    plan = script(nominate={1: {"Ann": "Mo"}}, kill={1: "Bob"})
    _, ev, _ = play(tmp_path, SPORT, plan)
    ne = kinds(ev, "no_elimination", round=1)[0]
    assert ne["reason"] == "too_few_nominees"
    assert not kinds(ev, "day_vote", round=1)
    assert kinds(ev, "nomination", round=1)[0] == {**kinds(ev, "nomination", round=1)[0], "nominator": "Ann", "nominee": "Mo"}


def test_sport_only_nominees_can_be_voted_and_duplicate_nominations_ignored(tmp_path):
    votes = {(1, "vote"): {**everyone("Mo"), "Ann": "Bob", "Bob": "Cid"}}
    plan = script(nominate={1: {"Ann": "Mo", "Bob": "Max", "Cid": "Mo"}}, votes=votes, kill={1: "Dee"})
    _, ev, _ = play(tmp_path, SPORT, plan)
    tally = kinds(ev, "vote_tally", round=1)[0]
    assert tally["candidates"] == ["Mo", "Max"] or tally["candidates"] == ["Max", "Mo"]
    assert tally["votes"]["Cid"] == "Mo" and "Ann" in tally["invalid"]  # Bob is not a nominee: Ann's vote is invalid
    mo = [e for e in kinds(ev, "day_discuss", round=1) if e["player"] in ("Ann", "Cid")]
    assert mo[0]["nominations"] == ["Mo"] and mo[1]["nominations"] == [] and mo[1]["nomination_note"] == "already nominated"
    assert len(kinds(ev, "nomination", round=1)) == 2
    el = kinds(ev, "day_eliminate", round=1)[0]
    assert el["eliminated"] == "Mo" and el["reason"] == "vote"
    assert [e["player"] for e in kinds(ev, "last_words", round=1)] == ["Mo"]


def test_sport_lone_nominee_leaves_without_vote_from_day_2(tmp_path):
    plan = script(nominate={2: {"Bob": "Max"}}, kill={1: "Ann"})
    _, ev, _ = play(tmp_path, SPORT, plan)
    el = kinds(ev, "day_eliminate", round=2)[0]
    assert el["eliminated"] == "Max" and el["reason"] == "lone_nominee" and el["votes"] == 0
    assert not kinds(ev, "day_vote", round=2)
    assert kinds(ev, "last_words", round=2)[0]["player"] == "Max"


def test_sport_tie_revote_then_remove_all_yes(tmp_path):
    town = [n for n in NAMES if n not in MAFIA]
    half = {**{n: "Mo" for n in NAMES[:5]}, **{n: "Ann" for n in NAMES[5:]}}
    votes = {(1, "vote"): half, (1, "revote"): half, (1, "remove_all"): {**everyone("No"), **{n: "Yes" for n in town}}}
    plan = script(nominate={1: {"Bob": "Mo", "Cid": "Ann"}}, votes=votes, kill={1: "Bob"})
    _, ev, _ = play(tmp_path, SPORT, plan)
    stages = [e["stage"] for e in kinds(ev, "vote_tally", round=1)]
    assert stages == ["vote", "revote", "remove_all"]
    assert sorted(kinds(ev, "vote_tally", round=1)[1]["candidates"]) == ["Ann", "Mo"]
    out = kinds(ev, "day_eliminate", round=1)
    assert sorted(e["eliminated"] for e in out) == ["Ann", "Mo"] and {e["reason"] for e in out} == {"remove_all"}
    assert sorted(e["player"] for e in kinds(ev, "last_words", round=1)) == ["Ann", "Mo"]
    assert {e["ballot"] for e in kinds(ev, "day_vote", round=1)} == {"vote", "revote", "remove_all"}


def test_sport_second_tie_remove_all_rejected(tmp_path):
    half = {**{n: "Mo" for n in NAMES[:5]}, **{n: "Ann" for n in NAMES[5:]}}
    votes = {(1, "vote"): half, (1, "revote"): half, (1, "remove_all"): {**everyone("No"), "Ann": "Yes"}}
    plan = script(nominate={1: {"Bob": "Mo", "Cid": "Ann"}}, votes=votes, kill={1: "Bob"})
    _, ev, _ = play(tmp_path, SPORT, plan)
    ne = kinds(ev, "no_elimination", round=1)[0]
    assert ne["reason"] == "remove_all_rejected" and sorted(ne["tied"]) == ["Ann", "Mo"]
    assert not kinds(ev, "day_eliminate", round=1)


def test_checks_reach_only_the_checker(tmp_path):
    plan = script(kill={1: "Ann"}, don={1: "Sam"}, sheriff={1: "Mo"})
    state, ev, _ = play(tmp_path, SPORT, plan)
    don = kinds(ev, "night_don_result", round=1)[0]
    sh = kinds(ev, "night_sheriff_result", round=1)[0]
    assert don["result"] == "Sheriff" and don["visible_to"] == ["Vito"]
    assert sh["result"] == "Mafia" and sh["visible_to"] == ["Sam"]
    for seat in NAMES:
        text = "\n".join(m["content"] for m in context_for(state, seat).messages)
        assert ("DON CHECK RESULT: Sam is the Sheriff." in text) == (seat == "Vito")
        assert ("CHECK RESULT: Mo is Mafia." in text.replace("DON CHECK RESULT", "")) == (seat == "Sam")


def test_town_wins_when_no_mafia_left(tmp_path):
    votes = {(r, "vote"): everyone(t) for r, t in ((2, "Vito"), (3, "Mo"), (4, "Max"))}
    nominate = {r: {"Ann": t, "Bob": "Fay"} for r, t in ((2, "Vito"), (3, "Mo"), (4, "Max"))}
    plan = script(nominate=nominate, votes=votes, shots={r: {"Vito": "Cid", "Mo": "Dee", "Max": "Eve"} for r in range(1, 9)})
    state, ev, _ = play(tmp_path, SPORT, plan)
    assert ev[-1]["kind"] == "game_over" and ev[-1]["winner"] == "Villagers" and ev[-1]["reason"] == "no_mafia_left"
    assert ev[-1]["roles"]["Vito"] == "Don"
    assert kinds(ev, "host")[-1]["text"].startswith("HOST: The game is over")


def test_mafia_win_at_parity(tmp_path):
    plan = script(kill={r: t for r, t in enumerate(["Ann", "Bob", "Cid", "Dee", "Eve"], start=1)})
    state, ev, _ = play(tmp_path, SPORT, plan)
    assert ev[-1]["winner"] == "Mafia" and ev[-1]["reason"] == "mafia_parity"
    # no role is revealed before the end
    assert all(not e.get("revealed") for e in kinds(ev, "day_eliminate"))


# ------------------------------------------------------------------------------- open table


def test_open_table_no_vote_day1_open_floor_turns(tmp_path):
    def floor(seat, text):
        if "named you" in text:
            return "I answer."
        return "PASS" if seat != "Bob" else "Ann seems calm."

    rules = tournament_rules("open_table")
    plan = script(floor=floor, say={"Ann": "I think Bob is odd."}, kill={1: "Cid"}, votes={(2, "vote"): everyone("Max")})
    _, ev, _ = play(tmp_path, rules, plan)
    assert kinds(ev, "no_elimination", round=1)[0]["reason"] == "no_vote_day"
    d1 = kinds(ev, "day_discuss", round=1)
    spoke = [e["player"] for e in d1 if not e.get("passed")]
    assert len(d1) > 10 and spoke.count("Bob") <= 3 and all(spoke.count(n) <= 3 for n in NAMES)
    first_floor = d1[10]
    assert first_floor["player"] == "Bob" and "Ann named you" in first_floor["prompt"]
    assert kinds(ev, "day_eliminate", round=2)[0]["eliminated"] == "Max"


def test_open_table_tie_gives_defence_and_runoff(tmp_path):
    rules = tournament_rules("open_table")
    # Cid is dead: four votes each for Mo and Ann, Fay abstains
    half = {**{n: "Mo" for n in ("Vito", "Mo", "Max", "Ann")}, **{n: "Ann" for n in ("Sam", "Bob", "Dee", "Eve")}}
    runoff = {**everyone("Mo"), "Mo": "Ann"}
    plan = script(kill={1: "Cid"}, votes={(2, "vote"): half, (2, "revote"): runoff})
    _, ev, _ = play(tmp_path, rules, plan)
    assert sorted(e["player"] for e in kinds(ev, "defence", round=2)) == ["Ann", "Mo"]
    assert [e["stage"] for e in kinds(ev, "vote_tally", round=2)] == ["vote", "runoff"]
    assert kinds(ev, "day_eliminate", round=2)[0]["eliminated"] == "Mo"


def test_open_table_mafia_talk_every_night_private(tmp_path):
    rules = tournament_rules("open_table")
    state, ev, _ = play(tmp_path, rules, script(kill={1: "Ann", 2: "Bob"}))
    talk = kinds(ev, "mafia_talk")
    assert {e["round"] for e in talk} >= {1, 2} and all(set(e["visible_to"]) <= MAFIA for e in talk)
    assert len([e for e in talk if e["round"] == 1]) == 6  # two turns each for three Mafia
    for seat in NAMES:
        text = "\n".join(m["content"] for m in context_for(state, seat).messages)
        assert ("Vito said: Agreed." in text or "Mo said: Agreed." in text) == (seat in MAFIA)


# ------------------------------------------------------------------------------- imbalanced


def test_imbalanced_vote_day1_on_anyone_and_mafia_vote_shot(tmp_path):
    rules = tournament_rules("imbalanced")
    shots = {1: {"Vito": "Bob", "Mo": "Cid", "Max": "Dee"}}
    plan = script(shots=shots, votes={(1, "vote"): everyone("Fay")})
    _, ev, _ = play(tmp_path, rules, plan)
    assert kinds(ev, "day_eliminate", round=1)[0]["eliminated"] == "Fay"
    # a three-way split: the Don's choice decides
    assert kinds(ev, "night_kill", round=1)[0]["victim"] == "Bob"
    assert all(set(e["visible_to"]) == MAFIA for e in kinds(ev, "night_mafia", round=1))


def test_imbalanced_second_tie_means_no_elimination(tmp_path):
    rules = tournament_rules("imbalanced")
    half = {**{n: "Mo" for n in NAMES[:5]}, **{n: "Ann" for n in NAMES[5:]}}
    plan = script(kill={1: "Cid"}, votes={(1, "vote"): half, (1, "revote"): half})
    _, ev, _ = play(tmp_path, rules, plan)
    assert kinds(ev, "no_elimination", round=1)[0]["reason"] == "second_tie"


# ------------------------------------------------------------------------------- cross-cutting


def test_role_options_follow_the_rules():
    assert SPORT.role_options() == ["Mafia", "Don", "Sheriff", "Villager"]
    assert CLASSIC.role_options() == ["Mafia", "Doctor", "Villager"]


@pytest.mark.slow
def test_records_validate_and_names_hide_models(tmp_path):
    state, ev, _ = play(tmp_path, tournament_rules("imbalanced"), script(kill={1: "Ann"}))
    for e in ev:
        parse_event(e)
    sys = context_for(state, "Ann").messages[0]["content"]
    assert "ten players" in sys and "scripted" not in sys and "Doctor" not in sys


def test_russian_pack_plays(tmp_path):
    def plan(seat, kind, rnd, alive, text):
        if kind == "night_mafia":
            return "ДЕЙСТВИЕ: Убить Ann"
        if kind in ("night_don", "night_sheriff"):
            return "ДЕЙСТВИЕ: Проверить Bob"
        if kind == "day_vote":
            return "ГОЛОС: Fay"
        if kind == "best_move":
            return "ПОДОЗРЕВАЮ: Vito, Mo, Max"
        return "Слово."

    state, ev, _ = play(tmp_path, tournament_rules("imbalanced"), plan, language="ru")
    assert kinds(ev, "best_move")[0]["suspects"] == ["Vito", "Mo", "Max"]
    assert any(e["text"].startswith("ВЕДУЩИЙ") for e in kinds(ev, "host"))


@pytest.mark.slow
def test_llm_host_retells_template_lines(tmp_path):
    host = ScriptedBackend("host", lambda *a: "Narrator: the story goes on.", model_label="host-llm")
    rules = tournament_rules("imbalanced", options={"host": "llm", "host_backend": "host"})
    _, ev, _ = play(tmp_path, rules, script(kill={1: "Ann"}), extra_backends={"host": host})
    hosts = kinds(ev, "host")
    assert hosts and all(h["text"] == "Narrator: the story goes on." and h["template_text"].startswith("HOST:") for h in hosts)
    assert host.requests and all(r.purpose == "host" for r in host.requests)
    # the host decides nothing: the engine's own records carry every outcome
    assert kinds(ev, "night_kill")[0]["victim"] == "Ann"
