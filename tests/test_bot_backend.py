"""Offline bot backend: determinism, protocol replies, beliefs, lies, presets, probes."""

from __future__ import annotations

import asyncio
import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mafiascope.backends.base import CompletionRequest
from mafiascope.backends.bot import BOT_PRESETS, BotBackend, list_presets
from mafiascope.backends.bot.probes import identify
from mafiascope.config import load_game_config, parse_game_config
from mafiascope.engine import prompts
from mafiascope.engine.parsing import parse_target
from mafiascope.play.game import WALL_CLOCK_FIELDS, GameResult, play_game
from mafiascope.logs.io import iter_probe_records, GAME_FILE, PROBE_FILE, read_jsonl
from mafiascope.probes.dsl import load_battery, shipped_battery_path
from mafiascope.probes.render import render

PLAYERS = ["Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray"]
PERS = {"O": 50, "C": 50, "E": 50, "A": 50, "N": 50}
MARK = "[PRIVATE PROBE - answer honestly]"


def system(p, name, role, partners=(), pers=PERS):
    return {"role": "system", "content": prompts.system_prompt(p, name=name, role=role, partners=list(partners), personality=pers)}


def user(lines, instruction):
    return {"role": "user", "content": "\n".join(lines) + ("\n\n" if lines else "") + instruction}


def reply(be, msgs, seed=1, kind="act"):
    return be.reply(msgs, seed, kind)[0]


def day_context(p, me, role, partners=(), lines=(), players=PLAYERS, rnd=1, instr="discuss"):
    """System + intro turn + a day instruction preceded by ``lines``."""
    alive = ", ".join(players)
    msgs = [system(p, me, role, partners), user([], p.intro.format(players=alive)), {"role": "assistant", "content": f"Hi, I'm {me}."}]
    tmpl = p.discuss if instr == "discuss" else p.vote
    msgs.append(user(list(lines), tmpl.format(round=rnd, players=alive)))
    return msgs


def probe(msgs, question, lines=()):
    """Probe = copy of the acting context (without the pending instruction) + pending lines and the question."""
    return msgs[:-1] + [user(list(lines), MARK + "\n" + question)]


# --------------------------------------------------------------------------- engine games

ROOT = Path(__file__).resolve().parents[1]
CLASSIC_ROLES = {"Mafia": 2, "Doctor": 1, "Villager": 4}
SHERIFF_ROLES = {"Mafia": 2, "Doctor": 1, "Sheriff": 1, "Villager": 3}
ROLES_NO_SHERIFF = "Mafia|Villager|Doctor|Unknown"


def question(probe_id, lang="en", battery="default", me="Alex", players=PLAYERS, roles=ROLES_NO_SHERIFF):
    """A shipped battery's question, rendered as the probe engine renders it."""
    b = load_battery(shipped_battery_path(battery, lang))
    tmpl = next(p.question for p in b.probes if p.id == probe_id)
    return render(tmpl, {"player": me, "players": ", ".join(players), "roles": roles})


def battery_ids(battery, lang):
    return {p.id for p in load_battery(shipped_battery_path(battery, lang)).probes if p.enabled}


def classic_cfg(lang="en", sheriff=False, presets=("balanced",), battery=None, max_rounds=None):
    """A 7-seat classic game (2 Mafia, Doctor, optional Sheriff) with bot seats cycling over ``presets``."""
    rules: dict[str, Any] = {"name": "classic", "roles": SHERIFF_ROLES if sheriff else CLASSIC_ROLES, "intro_round": True}
    if max_rounds:
        rules["max_rounds"] = max_rounds
    probes: dict[str, Any] = {"enabled": True}
    if battery:
        probes["battery"] = battery
    return parse_game_config({
        "name": "bot-test",
        "language": lang,
        "rules": rules,
        "seats": [{"backend": presets[i % len(presets)]} for i in range(7)],
        "backends": {p: {"type": "bot", "preset": p} for p in presets},
        "probes": probes,
    })


class RecordingBot(BotBackend):
    """The bot backend, keeping every request it served."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.seen: list[CompletionRequest] = []

    async def complete(self, request):
        self.seen.append(request)
        return await super().complete(request)


@dataclass
class Played:
    result: GameResult
    events: list[dict[str, Any]]
    probes: list[dict[str, Any]]
    roles: dict[str, str]


def play(logs_dir, cfg, seed, *, probes=True, backends=None, game_id=None) -> Played:
    gid = game_id or f"g{seed}"
    res = asyncio.run(play_game(cfg, logs_dir=logs_dir, seed=seed, game_id=gid, probes=probes, snapshots=False, backends=backends))
    events = read_jsonl(Path(logs_dir) / gid / GAME_FILE)
    pfile = Path(logs_dir) / gid / PROBE_FILE
    recs = list(iter_probe_records(pfile.parent))
    assert events[-1]["kind"] == "game_over"
    return Played(res, events, recs, events[-1]["roles"])


UNSTABLE = set(WALL_CLOCK_FIELDS) | {"finished_ts", "cost"}  # wall clock (cost holds latencies too)


def _stable(records, ordered=True):
    """Records as JSON without wall-clock fields; probe records (answered concurrently) sorted."""
    out = [json.dumps({k: v for k, v in r.items() if k not in UNSTABLE}, sort_keys=True, ensure_ascii=False) for r in records]
    return out if ordered else sorted(out)


# --------------------------------------------------------------------------- determinism


def test_same_messages_same_seed_identical_and_cache_transparent(tmp_path):
    warm = RecordingBot("balanced", preset="balanced")
    play(tmp_path, classic_cfg(), 5, probes=False, backends={"balanced": warm})
    first = warm.seen[0].seat
    msgs = [r for r in warm.seen if r.seat == first][-1].messages  # the seat's last full game context
    cold = BotBackend("fresh", preset=warm.preset)
    for seed in (0, 1, 99):
        a = reply(warm, msgs, seed)
        assert a == reply(warm, msgs, seed) == reply(cold, msgs, seed)
    outs = {reply(cold, msgs, s) for s in range(20)}
    assert len(outs) > 1  # the seed matters


@pytest.mark.slow
def test_engine_bot_games_are_deterministic(tmp_path):
    cfg = load_game_config(ROOT / "configs" / "classic_sheriff.yaml")
    a, b = (play(tmp_path / d, cfg, 11, game_id="same") for d in ("a", "b"))
    assert a.probes and _stable(a.events) == _stable(b.events) and _stable(a.probes, False) == _stable(b.probes, False)
    assert _stable(play(tmp_path / "c", cfg, 12, game_id="same", probes=False).events) != _stable(a.events)


def test_seed_none_is_zero():
    msgs = day_context(prompts.EN, "Alex", "Villager")
    be = BotBackend("b")
    assert reply(be, msgs, None) == reply(be, msgs, 0)


# --------------------------------------------------------------------------- protocol


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize(
    "role,tmpl,action",
    [("Mafia", "night_mafia", "kill"), ("Doctor", "night_doctor", "protect"), ("Sheriff", "night_sheriff", "check"), ("Villager", "vote", "vote")],
)
def test_replies_end_with_parseable_protocol_line(lang, role, tmpl, action):
    p = prompts.pack(lang)
    alive = ", ".join(PLAYERS)
    fmt = {"round": 1, "players": alive, "allies_choices": "", "checks": p.no_checks}
    partners = ["Bailey"] if role == "Mafia" else []
    for seed in range(15):
        msgs = [system(p, "Alex", role, partners), user([], getattr(p, tmpl).format(**fmt))]
        text = reply(BotBackend("b"), msgs, seed)
        parsed = parse_target(text, action, PLAYERS)
        assert parsed.valid, text
        if action == "kill":
            assert parsed.target not in ("Alex", "Bailey")
        if action in ("check", "vote"):
            assert parsed.target != "Alex"


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_intro_and_discussion_are_speech(lang):
    p = prompts.pack(lang)
    msgs = [system(p, "Alex", "Villager"), user([], p.intro.format(players=", ".join(PLAYERS)))]
    intro = reply(BotBackend("b"), msgs, 3)
    assert "Alex" in intro and not re.search(r"VOTE|ACTION|ГОЛОС|ДЕЙСТВИЕ", intro)
    said = reply(BotBackend("b"), day_context(p, "Alex", "Villager", lines=[p.obs_said.format(name="Dana", text="I suspect Ellis.")]), 3)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", said) if s]
    assert 1 <= len(sentences) <= 5 and any(n in said for n in PLAYERS if n != "Alex")


def test_reask_and_unknown_instruction():
    p = prompts.EN
    msgs = day_context(p, "Alex", "Villager", instr="vote")
    msgs += [{"role": "assistant", "content": "hmm"}, user([], p.reask.format(fmt=prompts.action_format(p, "vote")))]
    assert parse_target(reply(BotBackend("b"), msgs), "vote", PLAYERS).valid
    odd = [system(p, "Alex", "Villager"), user([], "Please sing a song.")]
    assert reply(BotBackend("b"), odd) in {"I'm listening.", "Noted.", "Understood."}


def test_complete_and_describe():
    be = BotBackend("offline", preset="analyst", model_label="bot-analyst")
    req = CompletionRequest(messages=day_context(prompts.EN, "Alex", "Villager", instr="vote"), kind="act", seat="Alex", seed=4)
    out = asyncio.run(be.complete(req))
    assert out.ok and out.text and out.served_model == "bot-analyst"
    d = be.describe()
    assert d["type"] == "bot" and d["preset"] == "analyst" and d["params"]["lie_skill"] == BOT_PRESETS["analyst"].lie_skill
    assert "library_version" in d
    asyncio.run(be.aclose())


# --------------------------------------------------------------------------- beliefs and behaviour

EVIDENCE = [
    "Bailey said: I think Dana is Mafia, Dana keeps deflecting.",
    "Casey said: Dana is suspicious, I agree with Bailey.",
    "Ellis said: Dana's story does not add up, I suspect Dana.",
    "Dana said: I trust everyone, let's not rush.",
    "Finley voted: Dana lied. VOTE: Dana",
    "Gray voted: VOTE: Dana",
]


def _mafia_conf(text, target):
    for item in json.loads(text):
        if item["player"] == target:
            return item["guessed_role"], item["confidence"]
    raise AssertionError(target)


def _p_mafia(be, msgs, target):
    st, _ = be._fold(msgs[:-1])
    st = be._state_after(st, _, msgs[-1]["content"], None)
    return st.p_mafia()[target]


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_beliefs_move_toward_mafia_after_evidence(lang):
    p = prompts.pack(lang)
    be = BotBackend("b")
    neutral = day_context(p, "Alex", "Villager")
    lines = EVIDENCE if lang == "en" else [
        p.obs_said.format(name="Bailey", text="Я подозреваю игрока Dana, она уводит разговор."),
        p.obs_said.format(name="Casey", text="Dana врёт, согласен с Bailey."),
        # the fifth accuser, as in EVIDENCE ("Я подозреваю игрока Dana" used to count twice: the
        # parser read the prose as a ПОДОЗРЕВАЮ list line)
        p.obs_said.format(name="Ellis", text="История Dana не сходится, я подозреваю Dana."),
        p.obs_voted.format(name="Finley", text="Dana — мафия.\nГОЛОС: Dana"),
        p.obs_voted.format(name="Gray", text="ГОЛОС: Dana"),
    ]
    if lang == "en":
        lines = [ln if ln.split(" ", 2)[1] in ("said:", "voted:") else ln for ln in lines]
    loaded = day_context(p, "Alex", "Villager", lines=lines)
    # a first-day pile-on is damped (echoes of one accusation add less), but five accusers still move it
    assert _p_mafia(be, loaded, "Dana") > _p_mafia(be, neutral, "Dana") + 0.1
    q = question("role_assessment", lang)
    role, conf = _mafia_conf(reply(BotBackend("g", "gullible"), probe(loaded, q, lines), 2), "Dana")
    assert role == "Mafia" and conf >= 50
    # the town bot now argues against Dana and votes for her
    vote_ctx = day_context(p, "Alex", "Villager", lines=lines, instr="vote")
    votes = [parse_target(reply(be, vote_ctx, s), "vote", PLAYERS).target for s in range(10)]
    assert votes.count("Dana") >= 8


def test_night_kill_and_save_are_town_evidence():
    p = prompts.EN
    be = BotBackend("b")
    base = day_context(p, "Alex", "Villager")
    saved = day_context(p, "Alex", "Villager", lines=[p.obs_night_result.format(result=p.save_result.format(saved="Casey"))])
    assert _p_mafia(be, saved, "Casey") < _p_mafia(be, base, "Casey") - 0.1
    killed = day_context(p, "Alex", "Villager", lines=[p.obs_night_result.format(result=p.kill_result.format(victim="Casey"))], players=[n for n in PLAYERS if n != "Casey"])
    st, h = be._fold(killed[:-1])
    st = be._state_after(st, h, killed[-1]["content"].split("\n\n")[0], None)
    assert st.p_mafia()["Casey"] == 0.0 and "Casey" not in st.alive


def test_sheriff_uses_its_check():
    p = prompts.EN
    lines = [p.obs_check.format(target="Gray", verdict=p.verdict_mafia), "Bailey said: I suspect Dana."]
    msgs = day_context(p, "Alex", "Sheriff", lines=lines, instr="vote")
    for s in range(10):
        assert parse_target(reply(BotBackend("b"), msgs, s), "vote", PLAYERS).target == "Gray"
    talk = [reply(BotBackend("b", "aggressive"), day_context(p, "Alex", "Sheriff", lines=lines), s) for s in range(10)]
    assert sum("Gray" in t and "Mafia" in t for t in talk) >= 8  # reveals the find
    # and it never checks the same seat twice
    night = [system(p, "Alex", "Sheriff"), user([], p.night_sheriff.format(round=1, players=", ".join(PLAYERS), checks=p.no_checks)),
             {"role": "assistant", "content": "ACTION: Check Gray"},
             user([p.obs_check.format(target="Gray", verdict=p.verdict_not_mafia)], p.night_sheriff.format(round=2, players=", ".join(PLAYERS), checks="Gray: Not Mafia"))]
    for s in range(10):
        assert parse_target(reply(BotBackend("b"), night, s), "check", PLAYERS).target not in ("Gray", "Alex")


@pytest.mark.slow
def test_mafia_lies_but_rarely_names_partner_first(tmp_path):
    """Over many games Mafia speeches accuse town players and almost never their partner first."""
    first_partner = first_town = 0
    cfg = classic_cfg()
    for seed in range(25):
        res = play(tmp_path, cfg, seed, probes=False)
        mafia = {n for n, r in res.roles.items() if r == "Mafia"}
        for e in res.events:
            if e["kind"] != "day_discuss" or e["player"] not in mafia:
                continue
            named = [n for n in sorted(res.roles, key=lambda n: e["response"].find(n)) if n in e["response"] and n != e["player"]]
            if not named:
                continue
            if named[0] in mafia:
                first_partner += 1
            else:
                first_town += 1
    assert first_town > 20
    assert first_partner / (first_partner + first_town) < 0.2


def test_mafia_kill_follows_ally_choice():
    p = prompts.EN
    alive = ", ".join(PLAYERS)
    allies = p.obs_ally_choice.format(name="Bailey", target="Dana") + "\n"
    msgs = [system(p, "Alex", "Mafia", ["Bailey"]), user([], p.night_mafia.format(round=1, players=alive, allies_choices=allies))]
    targets = [parse_target(reply(BotBackend("b"), msgs, s), "kill", PLAYERS).target for s in range(20)]
    assert targets.count("Dana") >= 14
    # the engine's own form: the ally line as an observation before the instruction
    msgs = [system(p, "Alex", "Mafia", ["Bailey"]), user([allies.strip()], p.night_mafia.format(round=1, players=alive, allies_choices=""))]
    targets = [parse_target(reply(BotBackend("b"), msgs, s), "kill", PLAYERS).target for s in range(20)]
    assert targets.count("Dana") >= 14


# --------------------------------------------------------------------------- probes

SHAPES = {
    "role_beliefs": lambda v: isinstance(v, dict) and all(set(x) == {"role", "confidence"} and 0 <= x["confidence"] <= 100 and x["role"] in ("Mafia", "Villager", "Doctor", "Sheriff", "Unknown") for x in v.values()),
    "role_assessment": lambda v: isinstance(v, list) and all({"player", "guessed_role", "confidence", "reason"} <= set(x) and 0 <= x["confidence"] <= 100 and x["guessed_role"] in ("Mafia", "Villager", "Doctor", "Sheriff", "Unknown") for x in v),
    "suspicion_ranking": lambda v: isinstance(v, list) and all(set(x) == {"player", "score"} and 0 <= x["score"] <= 10 for x in v) and [x["score"] for x in v] == sorted((x["score"] for x in v), reverse=True),
    "social_map": lambda v: isinstance(v, dict) and all(x["attitude"] in ("trusts", "neutral", "suspects") and 0 <= x["confidence"] <= 100 for x in v["toward_me"]),
    "personality_profile": lambda v: isinstance(v, list) and all(all(0 <= x[t] <= 100 for t in "OCEAN") and "summary" in x for x in v),
    "planned_action": lambda v: isinstance(v, dict) and set(v) == {"action", "target", "reasoning"},
}


def _json(text):
    text = re.sub(r"```(?:json)?\s*", "", text).strip()
    start = min(i for i in (text.find("["), text.find("{")) if i >= 0)
    return json.loads(text[start:])


@pytest.mark.parametrize("battery", ["default", "chained"])
@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.slow
def test_every_standard_probe_answers_in_shape(tmp_path, lang, battery):
    res = play(tmp_path, classic_cfg(lang, sheriff=True, battery=battery), 2)
    seen = set()
    assert res.probes
    for rec in res.probes:
        value = _json(rec["answer_raw"])
        assert SHAPES[rec["probe_id"]](value), (rec["probe_id"], rec["answer_raw"])
        seen.add(rec["probe_id"])
        if rec["probe_id"] == "role_assessment" and rec["role"] == "Mafia":
            partners = {n for n, r in res.roles.items() if r == "Mafia"}
            stated = {x["player"]: x["guessed_role"] for x in value}
            assert all(stated.get(pn, "Mafia") == "Mafia" for pn in partners)  # Mafia answer honestly
    assert seen == battery_ids(battery, lang) and seen <= set(SHAPES)


def test_probe_identification_uses_the_last_format_spec():
    ra = '[{"player":"A","guessed_role":"Mafia","confidence":90,"reason":"x"}]'
    sm = '{"toward_me":[{"player":"A","attitude":"suspects","confidence":60,"reason":"x"}]}'
    assert identify(f'Here is your current role assessment: {ra}\nAnswer ONLY as JSON: {{"toward_me": [{{"player": "...", "attitude": "trusts|neutral|suspects"}}]}}') == "social_map"
    assert identify(f'Role assessment: {ra}\nHow players feel: {sm}\nAnswer ONLY as JSON: {{"action": "...", "target": "...", "reasoning": "..."}}') == "planned_action"
    assert identify('Answer as JSON: {"Alex": {"role": "Mafia|Villager|Doctor|Unknown", "confidence": N}}') == "role_beliefs"
    assert identify("What is your favourite colour?") is None


def test_unknown_probe_and_legacy_role_beliefs():
    p = prompts.EN
    msgs = day_context(p, "Alex", "Villager")
    assert reply(BotBackend("b"), probe(msgs, "What is your favourite colour?"), kind="probe") == "I cannot answer this question."
    legacy = 'For each player give your belief. Answer ONLY as JSON: {"<player>": {"role": "Mafia|Villager|Doctor|Unknown", "confidence": N}}'
    v = json.loads(reply(BotBackend("b", "cautious"), probe(msgs, legacy), kind="probe"))
    assert isinstance(v, dict) and all(set(x) == {"role", "confidence"} for x in v.values())


def test_sheriff_offered_only_when_listed():
    p = prompts.EN
    msgs = day_context(p, "Alex", "Sheriff")
    q = question("role_assessment")
    assert all(x["guessed_role"] != "Sheriff" for x in json.loads(reply(BotBackend("b"), probe(msgs, q))))
    q2 = question("role_assessment", roles="Mafia|Villager|Doctor|Sheriff|Unknown")
    me = [x for x in json.loads(reply(BotBackend("b"), probe(msgs, q2))) if x["player"] == "Alex"][0]
    assert me["guessed_role"] == "Sheriff" and me["confidence"] == 100


@pytest.mark.slow
def test_format_noise_is_rare_and_deterministic():
    msgs = day_context(prompts.EN, "Alex", "Villager")
    q = question("suspicion_ranking")
    be = BotBackend("g", "gullible")
    outs = [reply(be, probe(msgs, q), s) for s in range(600)]
    noisy = [o for o in outs if not o.startswith("[")]
    assert 3 <= len(noisy) <= 40
    assert all(SHAPES["suspicion_ranking"](_json(o)) for o in noisy)
    assert outs == [reply(BotBackend("g2", "gullible"), probe(msgs, q), s) for s in range(600)]


# --------------------------------------------------------------------------- presets


def _committed_confidences(logs_dir, preset):
    confs, unknown, total = [], 0, 0
    cfg = classic_cfg(presets=(preset,))
    for seed in range(4):
        res = play(logs_dir / preset, cfg, seed)
        for rec in res.probes:
            if rec["probe_id"] != "role_assessment" or rec["role"] == "Mafia":
                continue
            for x in _json(rec["answer_raw"]):
                if x["player"] == rec["player_name"]:
                    continue
                total += 1
                if x["guessed_role"] == "Unknown":
                    unknown += 1
                else:
                    confs.append(x["confidence"])
    return statistics.mean(confs) if confs else 0.0, unknown / total


@pytest.mark.slow
def test_presets_differ_measurably(tmp_path):
    assert {"balanced", "cautious", "aggressive", "gullible", "analyst"} <= set(list_presets())
    assert len({p for p in BOT_PRESETS.values()}) == len(BOT_PRESETS)
    g_conf, g_unk = _committed_confidences(tmp_path, "gullible")
    c_conf, c_unk = _committed_confidences(tmp_path, "cautious")
    assert g_conf > c_conf + 10
    assert c_unk > g_unk + 0.2


# --------------------------------------------------------------------------- speed


@pytest.mark.slow
def test_full_game_with_probes_completes(tmp_path):
    """A probed bot game plays to the end with every probe answered. Its speed is measured by
    bench/engine_throughput.py, not asserted here (a CPU bound failed on a loaded CI machine)."""
    cfg = load_game_config(ROOT / "configs" / "classic.yaml")
    res = play(tmp_path, cfg, 3)
    assert len(res.probes) > 500 and res.result.acts > 20
    assert res.result.winner is not None


@pytest.mark.slow
def test_probe_answers_pass_the_probe_engine_extractor_and_shapes(tmp_path):
    shapes = pytest.importorskip("mafiascope.probes.shapes")
    parsing = pytest.importorskip("mafiascope.probes.parsing")
    for lang in ("en", "ru"):
        for battery in ("default", "chained"):
            res = play(tmp_path / f"{lang}-{battery}", classic_cfg(lang, presets=("gullible", "cautious"), battery=battery), 8)
            assert res.probes
            for rec in res.probes:
                value, _ = parsing.extract_json(rec["answer_raw"])
                assert shapes.validate(rec["probe_id"], value) is True, rec["answer_raw"]
                assert rec["answer_valid"], rec


def _town_state(**ev):
    from mafiascope.backends.bot.presets import get_preset
    from mafiascope.backends.bot.reader import Identity
    from mafiascope.backends.bot.state import BotState

    st = BotState(Identity(name="Alex"), get_preset("balanced"))
    st.add_players(PLAYERS, alive=True)
    st.ev.update(ev)
    return st


def test_town_consolidates_on_a_plausible_vote_lead_not_on_a_town_looking_one():
    """Weak evidence: a town voter joins the table's lead among plausible suspects instead of splitting."""
    import random

    from mafiascope.backends.bot.policy import town_target

    st = _town_state(Dana=1.0, Ellis=0.8)
    st.votes_today = {"Bailey": "Ellis", "Casey": "Ellis"}
    assert town_target(st, random.Random(1), voting=True).target == "Ellis"
    # no vote yet: my own top suspect
    st.votes_today = {}
    assert town_target(st, random.Random(1), voting=True).target == "Dana"
    # a lead on a town-looking player is not joined
    st = _town_state(Dana=1.0, Ellis=-3.0)
    st.votes_today = {"Bailey": "Ellis", "Casey": "Ellis"}
    assert town_target(st, random.Random(1), voting=True).target == "Dana"


def test_team_model_weighs_less_with_more_speeches_per_day():
    """An open floor (several speeches a day) gives more attack pairs; each absent attack says less."""
    st = _town_state()
    st.pair_acc = {("Bailey", t): 1.5 for t in ("Casey", "Dana", "Ellis")}  # Bailey attacked three players
    one = st.p_mafia()
    st.talk_count = {(1, n): 1 for n in PLAYERS[1:]}
    assert st.speech_rate() == 1.0 and st.p_mafia() == one
    st.talk_count = {(1, n): 3 for n in PLAYERS[1:]}
    assert st.speech_rate() == 3.0
    three = st.p_mafia()
    prior = 1 / 3
    assert one["Bailey"] < three["Bailey"] < prior
