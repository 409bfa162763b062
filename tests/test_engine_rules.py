"""Classic rules: every win condition, ties, doctor saves, sheriff checks, round cap, faults."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mafiascope.config import parse_game_config
from mafiascope.engine.observation import context_for
from mafiascope.play.game import GameRunner, initial_state, play_game
from mafiascope.logs.io import read_jsonl
from mafiascope.logs.schema import parse_event

from .scripted import ScriptedBackend, table_plan

ROLES7 = [("Mo", "Mafia"), ("Max", "Mafia"), ("Doc", "Doctor"), ("Ann", "Villager"), ("Bob", "Villager"), ("Cid", "Villager"), ("Dee", "Villager")]


def make_cfg(roles=ROLES7, **game) -> object:
    rules = {"roles": {}, "intro_round": False, **game.pop("rules", {})}
    for _, r in roles:
        rules["roles"][r] = rules["roles"].get(r, 0) + 1
    return parse_game_config(
        {
            "rules": rules,
            "seats": [{"name": n, "role": r, "backend": "s"} for n, r in roles],
            "backends": {"s": {"type": "bot"}},
            "probes": {"enabled": False},
            **game,
        }
    )


def play(tmp_path: Path, plan, roles=ROLES7, seed: int = 3, **game):
    cfg = make_cfg(roles, **game)
    backend = ScriptedBackend("s", plan)
    res = asyncio.run(play_game(cfg, logs_dir=tmp_path, seed=seed, game_id="g", backends={"s": backend}))
    events = read_jsonl(tmp_path / "g" / "game.jsonl")
    return res, events, backend


def kinds(events, kind):
    return [e for e in events if e["kind"] == kind]


def all_vote(rnd_targets: dict[int, str], names=None):
    names = names or [n for n, _ in ROLES7]
    return {r: {n: t for n in names} for r, t in rnd_targets.items()}


def test_town_wins_when_no_mafia_left(tmp_path):
    plan = table_plan(kills={1: "Ann", 2: "Bob"}, votes=all_vote({1: "Mo", 2: "Max"}), protect={1: "Doc", 2: "Doc"})
    res, events, _ = play(tmp_path, plan)
    over = events[-1]
    assert over["kind"] == "game_over" and over["winner"] == "Villagers" and over["reason"] == "no_mafia_left"
    assert [e["eliminated"] for e in kinds(events, "day_eliminate")] == ["Mo", "Max"]
    assert res.rounds == 2


def test_mafia_win_at_parity(tmp_path):
    # town keeps voting out town: 7 -> kill 6 -> vote 5 -> kill 4 (2 Mafia vs 2 town) = parity
    plan = table_plan(kills={1: "Ann", 2: "Bob"}, votes=all_vote({1: "Cid"}), protect={1: "Doc", 2: "Doc"})
    res, events, _ = play(tmp_path, plan)
    assert events[-1]["winner"] == "Mafia" and events[-1]["reason"] == "mafia_parity"
    assert kinds(events, "night_kill")[-1]["victim"] == "Bob"
    # no night announcement after the winning kill
    assert events[-2]["kind"] == "night_kill"


def test_doctor_save_and_public_announcement(tmp_path):
    plan = table_plan(kills={1: "Ann"}, votes=all_vote({1: "Mo", 2: "Max"}), protect={1: "Ann"})
    _, events, _ = play(tmp_path, plan)
    r1 = [e for e in events if e.get("round") == 1]
    assert not [e for e in r1 if e["kind"] == "night_kill"]
    assert kinds(r1, "night_save")[0]["saved"] == "Ann"
    assert "saved Ann" in kinds(r1, "night_analysis")[0]["night_result"]


def test_tie_means_no_elimination(tmp_path):
    names = [n for n, _ in ROLES7]
    votes = {1: {n: ("Ann" if i % 2 == 0 else "Bob") for i, n in enumerate(names[:6])}}  # 3-3, Dee abstains
    plan = table_plan(kills={}, votes=votes, protect={})
    _, events, _ = play(tmp_path, plan, max_tokens=64, rules={"max_rounds": 1})
    tally = kinds(events, "vote_tally")[0]
    assert tally["tally"] == {"Ann": 3, "Bob": 3}
    assert kinds(events, "no_elimination")[0]["reason"] == "tie"
    assert "Dee" in tally["invalid"]


def test_round_cap_is_a_draw_not_a_town_win(tmp_path):
    plan = table_plan(kills={}, votes={}, protect={})
    res, events, _ = play(tmp_path, plan, rules={"max_rounds": 2})
    assert events[-1]["winner"] == "Draw" and events[-1]["reason"] == "round_cap"
    assert res.winner == "Draw" and res.rounds == 2


def test_sheriff_check_reaches_only_the_sheriff(tmp_path):
    roles = [("Mo", "Mafia"), ("Max", "Mafia"), ("Doc", "Doctor"), ("Sam", "Sheriff"), ("Ann", "Villager"), ("Bob", "Villager"), ("Cid", "Villager")]
    plan = table_plan(kills={1: "Ann"}, votes=all_vote({1: "Mo", 2: "Max"}, [n for n, _ in roles]), protect={1: "Doc", 2: "Doc"}, checks={1: "Max", 2: "Bob"})
    _, events, backend = play(tmp_path, plan, roles=roles)
    res = kinds(events, "night_sheriff_result")
    assert res[0]["checked"] == "Max" and res[0]["result"] == "Mafia" and res[0]["visible_to"] == ["Sam"]
    # the sheriff's next prompt carries the check; nobody else ever sees it
    for req in backend.requests:
        text = "\n".join(m["content"] for m in req.messages)
        if req.seat == "Sam" and req.purpose == "day_discuss":
            assert "CHECK RESULT: Max is Mafia." in text
        if req.seat != "Sam":
            assert "CHECK RESULT" not in text


def test_unreadable_vote_is_logged_invalid_with_raw_text(tmp_path):
    def plan(seat, purpose, rnd, alive):
        if purpose == "day_vote":
            return "I vote for the quiet one." if seat == "Ann" else "VOTE: Mo"
        return table_plan({1: "Bob"}, {}, {1: "Doc"})(seat, purpose, rnd, alive)

    _, events, backend = play(tmp_path, plan, rules={"max_rounds": 1})
    ann = [e for e in kinds(events, "day_vote") if e["player"] == "Ann"][0]
    assert ann["target_valid"] is False and ann["response"] == "I vote for the quiet one."
    assert ann["reask"] is True  # one re-ask with a format reminder happened
    assert any("could not be read" in r.messages[-1]["content"] for r in backend.requests if r.seat == "Ann")
    assert kinds(events, "vote_tally")[0]["invalid"]["Ann"]


def test_a_hedged_vote_is_re_asked_not_counted(tmp_path):
    """A reply whose marker line hedges is no vote: one re-ask, and the clean answer counts (issue 12.6)."""
    asked: dict[str, int] = {}

    def plan(seat, purpose, rnd, alive):
        if purpose == "day_vote":
            asked[seat] = asked.get(seat, 0) + 1
            if seat == "Ann":  # the old parser read "Mo" from this line
                return "Mo deflected all day.\nVOTE: not Mo, I think Max" if asked[seat] == 1 else "VOTE: Max"
            if seat == "Bob":  # prose about a past vote, twice: an invalid vote with the raw text
                return "I voted for Mo yesterday and regret it."
            return "VOTE: Mo"
        return table_plan({1: "Cid"}, {}, {1: "Doc"})(seat, purpose, rnd, alive)

    _, events, _ = play(tmp_path, plan, rules={"max_rounds": 1})
    votes = {e["player"]: e for e in kinds(events, "day_vote")}
    ann, bob = votes["Ann"], votes["Bob"]
    assert ann["reask"] is True and ann["target"] == "Max" and ann["target_valid"] is True
    assert ann["first_reply"].endswith("VOTE: not Mo, I think Max")
    assert bob["reask"] is True and bob["target_valid"] is False and bob["target"] is None
    assert bob["response"] == "I voted for Mo yesterday and regret it."
    tally = kinds(events, "vote_tally")[0]
    assert tally["votes"]["Ann"] == "Max" and "Bob" not in tally["votes"] and tally["invalid"]["Bob"]


def test_markdown_bold_vote_counts(tmp_path):
    def plan(seat, purpose, rnd, alive):
        if purpose == "day_vote":
            return "Reasons...\n**VOTE: Mo**"
        return table_plan({1: "Bob"}, {}, {1: "Doc"})(seat, purpose, rnd, alive)

    _, events, _ = play(tmp_path, plan, rules={"max_rounds": 1})
    assert kinds(events, "day_eliminate")[0]["eliminated"] == "Mo"


def test_backend_failure_is_a_flagged_fallback_never_speech(tmp_path):
    def plan(seat, purpose, rnd, alive):
        if seat == "Cid":
            return None  # transport failure every time
        return table_plan({1: "Bob"}, all_vote({1: "Mo"}), {1: "Doc"})(seat, purpose, rnd, alive)

    res, events, backend = play(tmp_path, plan, rules={"max_rounds": 1})
    cid = [e for e in events if e.get("player") == "Cid"]
    assert cid and all(e["fault"]["fallback"] in ("skip_speech", "abstain") and e["response"] == "" for e in cid)
    assert res.faults == len(cid)
    others = "\n".join(m["content"] for r in backend.requests if r.seat != "Cid" for m in r.messages)
    assert "Cid said nothing." in others and "scripted transport failure" not in others


def test_isolation_private_events_never_reach_other_seats(tmp_path):
    roles = [("Mo", "Mafia"), ("Max", "Mafia"), ("Doc", "Doctor"), ("Sam", "Sheriff"), ("Ann", "Villager"), ("Bob", "Villager"), ("Cid", "Villager")]
    plan = table_plan(kills={1: "Ann", 2: "Bob"}, votes=all_vote({1: "Cid"}, [n for n, _ in roles]), protect={1: "Doc", 2: "Sam"}, checks={1: "Mo", 2: "Max"})
    cfg = make_cfg(roles)
    backend = ScriptedBackend("s", plan)
    asyncio.run(play_game(cfg, logs_dir=tmp_path, seed=5, game_id="g", backends={"s": backend}))
    events = read_jsonl(tmp_path / "g" / "game.jsonl")
    private = [e for e in events if e.get("visible_to")]
    assert private, "the game must have private events"
    # every request a seat ever received contains no private text it may not see
    for req in backend.requests:
        text = "\n".join(m["content"] for m in req.messages)
        for ev in private:
            if req.seat in ev["visible_to"]:
                continue
            if ev["kind"] in ("night_doctor", "night_sheriff", "night_mafia") and ev.get("response"):
                assert ev["response"] not in text, (req.seat, ev["kind"])
            if ev["kind"] == "night_sheriff_result":
                assert f"CHECK RESULT: {ev['checked']}" not in text
        if req.seat not in ("Mo", "Max"):
            assert "[Mafia ally]" not in text and "Your Mafia partners" not in text


def test_observation_function_matches_visibility():
    cfg = make_cfg()
    backend = ScriptedBackend("s", table_plan({1: "Ann"}, {}, {1: "Doc"}))
    st = initial_state(cfg, seed=1, game_id="x", backends={"s": backend})
    st.events.append({"kind": "night_mafia", "round": 1, "msg_seq": 1, "player": "Mo", "response": "kill Ann", "prompt": "p",
                      "target": "Ann", "target_valid": True, "visible_to": ["Mo", "Max"]})  # fmt: skip
    assert context_for(st, "Max").pending == ["[Mafia ally] Mo chose: Kill Ann"]
    assert context_for(st, "Ann").pending == []
    assert context_for(st, "Mo").messages[-1] == {"role": "assistant", "content": "kill Ann"}


def test_every_logged_record_validates_against_the_schema(tmp_path):
    plan = table_plan(kills={1: "Ann", 2: "Bob"}, votes=all_vote({1: "Mo", 2: "Max"}), protect={1: "Doc"})
    _, events, _ = play(tmp_path, plan)
    for e in events:
        rec = parse_event(e)
        assert rec.model_dump(mode="json", exclude_unset=True)["kind"] == e["kind"]
    assert type(parse_event(events[0])).__name__ == "Setup"
    assert {type(parse_event(e)).__name__ for e in events} >= {"Setup", "Utterance", "VoteTally", "DayEliminate", "NightKill", "GameOver"}


def test_runner_is_resumable_from_a_cloned_state(tmp_path):
    """A state cloned mid-game and continued by the same seats ends the same way (state machine)."""
    plan = table_plan(kills={1: "Ann", 2: "Bob"}, votes=all_vote({1: "Mo", 2: "Max"}), protect={1: "Doc"})
    cfg = make_cfg()
    b = ScriptedBackend("s", plan)
    st = initial_state(cfg, seed=9, game_id="a", backends={"s": b})
    runner = GameRunner(st, cfg, {"s": b}, tmp_path / "a", None, False)

    async def partial():
        from mafiascope.play.game import phases_for

        ph = phases_for(st)
        for _ in range(8):
            d = ph.next(st)
            out = ph.resolve(st, d) if d.__class__.__name__ == "Resolve" else ph.apply_reply(st, d, await runner.ask(d))
            runner._apply(out)

    asyncio.run(partial())
    clone = st.model_validate_json(st.model_dump_json())
    clone.game_id = "b"
    res = asyncio.run(play_game(cfg, logs_dir=tmp_path, state=clone, backends={"s": ScriptedBackend("s", plan)}))
    assert res.winner == "Villagers"
