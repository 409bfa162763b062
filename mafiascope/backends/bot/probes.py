"""Probe answers: recognise a probe question and answer it honestly as JSON.

A probe is recognised by the JSON keys its answer format asks for; the format spec that
appears *last* in the question wins, because chained questions quote earlier answers
(a ``social_map`` question quotes a role assessment, ``planned_action`` quotes both).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable
from typing import Any

from mafiascope.logs.schema import MAFIA_ROLES
from mafiascope.probes.answer_schema import BOT_FLAG, FORMAT_LEAD, SCHEMA_MARK, AnswerSchema, read_schema

from . import policy
from .polarity import SUSPECT, TRUST, field_direction
from .reader import find_names
from .state import TOWN, BotState

# probe id -> signature regex (matched in the question; the last-occurring one wins)
SIGNATURES: dict[str, re.Pattern[str]] = {
    "role_assessment": re.compile(r'"guessed_role"'),
    "suspicion_ranking": re.compile(r'"score"'),
    "social_map": re.compile(r'"toward_me"|"attitude"'),
    "personality_profile": re.compile(r'"O"\s*:|"N"\s*:'),
    "planned_action": re.compile(r'"reasoning"|"action"\s*:'),
    "role_beliefs": re.compile(r'"role"\s*:\s*"'),
}

CANNOT = {"en": "I cannot answer this question.", "ru": "Я не могу ответить на этот вопрос."}


CUSTOM = "custom"  # a declared answer schema (mafiascope.probes.answer_schema)


def identify(question: str) -> str | None:
    mark = question.rfind(SCHEMA_MARK)
    if mark >= 0:  # a declared schema: the last line of the question (its own words would match signatures)
        return CUSTOM
    best, pos = None, -1
    for pid, rx in SIGNATURES.items():
        m = None
        for m in rx.finditer(question):  # noqa: B007 - keeps the last match
            pass
        if m is not None and m.start() > pos:
            best, pos = pid, m.start()
    return best


def stated(st: BotState, q: float) -> int:
    """Stated confidence for belief ``q`` under the preset's calibration bias."""
    q = min(0.995, max(0.005, q))
    z = math.log(q / (1 - q)) * st.params.calibration
    return int(max(0, min(100, round(100 / (1 + math.exp(-z)) + st.params.confidence_shift))))


def _players(st: BotState, question: str) -> list[str]:
    """The seats a question is about: its parenthesised player list, else the living seats."""
    for m in re.finditer(r"\(([^()]{2,400})\)", question):
        names = [n for _, n in find_names(m.group(1), st.players)]
        if len(names) >= 2:
            return list(dict.fromkeys(names))
    return [n for n in st.players if n in st.alive or n == st.me]


def _role_options(question: str) -> list[str]:
    m = re.search(r'"(?:guessed_)?role"\s*:\s*"([^"]+)"', question)
    if m and "|" in m.group(1):
        return [x.strip() for x in m.group(1).split("|") if x.strip()]
    return ["Mafia", "Villager", "Doctor", "Unknown"]


R = {
    "en": {
        "self": "I know my own role.",
        "partner": "{n} is my Mafia partner.",
        "checked_m": "My check showed {n} is Mafia.",
        "checked_t": "My check cleared {n}.",
        "revealed": "{n} was revealed as {r}.",
        "victim": "{n} was killed by the Mafia.",
        "accused_me": "{n} keeps accusing me.",
        "sus": "{n}'s accusations and votes look like cover.",
        "town": "{n} has acted like town.",
        "none": "No strong information yet.",
        "mafia_view": "I know who my partners are; {n} is not one of them.",
        "att_self": "That is me.",
        "att_partner": "We are on the same team.",
        "att_sus": "{n} has accused or voted against me.",
        "att_retal": "I have pushed on {n}, so {n} probably distrusts me.",
        "att_trust": "{n} has spoken up for me.",
        "att_neutral": "No clear signal from {n}.",
    },
    "ru": {
        "self": "Я знаю свою роль.",
        "partner": "{n} — мой партнёр по Мафии.",
        "checked_m": "Моя проверка показала, что {n} — мафия.",
        "checked_t": "Моя проверка оправдала игрока {n}.",
        "revealed": "Роль {n} раскрыта: {r}.",
        "victim": "{n} убит(а) мафией.",
        "accused_me": "{n} всё время обвиняет меня.",
        "sus": "Обвинения и голоса игрока {n} похожи на прикрытие.",
        "town": "{n} ведёт себя как мирный.",
        "none": "Пока нет надёжной информации.",
        "mafia_view": "Я знаю своих партнёров; {n} не из их числа.",
        "att_self": "Это я.",
        "att_partner": "Мы в одной команде.",
        "att_sus": "{n} обвинял(а) меня или голосовал(а) против меня.",
        "att_retal": "Я давил(а) на {n}, так что {n} мне вряд ли доверяет.",
        "att_trust": "{n} заступался(ась) за меня.",
        "att_neutral": "От игрока {n} нет явных сигналов.",
    },
}


def _r(st: BotState, key: str, **kw: str) -> str:
    return R.get(st.ident.language, R["en"])[key].format(**kw)


def _reason(st: BotState, n: str, pm: float) -> str:
    if n == st.me:
        return _r(st, "self")
    if n in st.ident.partners:
        return _r(st, "partner", n=n)
    if n in st.checks:
        return _r(st, "checked_m" if st.checks[n] == "Mafia" else "checked_t", n=n)
    role = st.known.get(n)
    if role == TOWN and st.dead.get(n) == "night":
        return _r(st, "victim", n=n)
    if role is not None and role != TOWN:
        return _r(st, "revealed", n=n, r=role)
    if st.is_mafia:
        return _r(st, "mafia_view", n=n)
    if st.toward_me.get(n, 0) > 1.0:
        return _r(st, "accused_me", n=n)
    prior = st.n_mafia() / max(1, len(st.players))
    if pm > prior + 0.15:
        return _r(st, "sus", n=n)
    if pm < prior - 0.15:
        return _r(st, "town", n=n)
    return _r(st, "none")


def role_assessment(st: BotState, question: str, rng: random.Random) -> Any:
    opts = _role_options(question)
    probs = st.role_probs()
    out = []
    for n in _players(st, question):
        pr = dict(probs.get(n, {"Mafia": 0.3, "Villager": 0.7}))
        if n == st.me or (st.known.get(n) not in (None, TOWN)):
            true = st.ident.role if n == st.me else st.known[n]
            label = true if true in opts else ("Mafia" if true in MAFIA_ROLES else "Villager")
            out.append({"player": n, "guessed_role": label, "confidence": 100, "reason": _reason(st, n, pr.get("Mafia", 0))})
            continue
        if "Sheriff" not in opts:
            pr["Villager"] = pr.get("Villager", 0) + pr.pop("Sheriff", 0)
        cands = {k: v for k, v in pr.items() if k in opts}
        role, q = max(cands.items(), key=lambda kv: (kv[1], kv[0])) if cands else ("Unknown", 0.0)
        if q < st.params.unknown_below and "Unknown" in opts:
            out.append(
                {
                    "player": n,
                    "guessed_role": "Unknown",
                    "confidence": stated(st, q),
                    "reason": _reason(st, n, pr.get("Mafia", 0)),
                }
            )
        else:
            out.append(
                {"player": n, "guessed_role": role, "confidence": stated(st, q), "reason": _reason(st, n, pr.get("Mafia", 0))}
            )
    return out


def suspicion_ranking(st: BotState, question: str, rng: random.Random) -> Any:
    pm = st.p_mafia()
    names = _players(st, question)
    scored = []
    for n in names:
        q = pm.get(n, 0.0)
        scored.append((n, int(max(0, min(10, round(stated(st, q) / 10)))), q))
    scored.sort(key=lambda x: (-x[2], names.index(x[0])))
    # a stricter belief gets a strictly higher score, as a ranking implies (rounding to 0-10 made ties)
    scores = [s for _, s, _ in scored]
    for i in range(1, len(scores)):
        scores[i] = min(scores[i], scores[i - 1])  # never above the player ranked before
        if scored[i][2] < scored[i - 1][2] - 1e-9 and scores[i] >= scores[i - 1]:
            if scores[i - 1] < 10 and i == 1:
                scores[0] = scores[1] + 1
            else:
                scores[i] = max(0, scores[i - 1] - 1)
    return [{"player": n, "score": sc} for (n, _, _), sc in zip(scored, scores, strict=True)]


def social_map(st: BotState, question: str, rng: random.Random) -> Any:
    items = []
    for n in _players(st, question):
        if n == st.me:
            items.append({"player": n, "attitude": "trusts", "confidence": 100, "reason": _r(st, "att_self")})
            continue
        if n in st.ident.partners:
            items.append({"player": n, "attitude": "trusts", "confidence": 100, "reason": _r(st, "att_partner")})
            continue
        h = st.my_heat(n)
        if h >= 0.9:
            att = "suspects"
            reason = _r(st, "att_sus" if st.toward_me.get(n, 0) >= 0.9 else "att_retal", n=n)
        elif h <= -0.4:
            att, reason = "trusts", _r(st, "att_trust", n=n)
        else:
            att, reason = "neutral", _r(st, "att_neutral", n=n)
        q = 0.5 + 0.45 * math.tanh(abs(h) / 2) if att != "neutral" else 0.55 + 0.3 * math.exp(-abs(h))
        items.append({"player": n, "attitude": att, "confidence": stated(st, q), "reason": reason})
    return {"toward_me": items}


_SUMMARY = {
    "en": {"E": ("quiet and reserved", "talkative and energetic"), "A": ("blunt and combative", "warm and polite"),
           "C": ("loose and spontaneous", "methodical and structured"), "N": ("calm under pressure", "anxious and tense"),
           "O": ("down-to-earth", "imaginative")},
    "ru": {"E": ("тихий и сдержанный", "разговорчивый и энергичный"), "A": ("резкий и напористый", "доброжелательный и вежливый"),
           "C": ("спонтанный", "методичный и собранный"), "N": ("спокойный под давлением", "тревожный и напряжённый"),
           "O": ("приземлённый", "с богатым воображением")},
}  # fmt: skip


def personality_profile(st: BotState, question: str, rng: random.Random) -> Any:
    out = []
    lang = st.ident.language if st.ident.language in _SUMMARY else "en"
    for n in _players(st, question):
        if n == st.me:
            continue
        est = st.personality_of(n)
        top = [k for k in sorted("OCEAN", key=lambda k: -abs(est[k] - 50))[:2] if abs(est[k] - 50) >= 8]
        words = [_SUMMARY[lang][k][1 if est[k] >= 50 else 0] for k in top]
        summary = (
            (", ".join(words)).capitalize() + "." if words else ("Hard to read yet." if lang == "en" else "Пока трудно сказать.")
        )
        out.append({"player": n, **est, "summary": summary})
    return out


def planned_action(st: BotState, question: str, rng: random.Random) -> Any:
    phase = st.phase
    lang = st.ident.language
    if phase in ("night_mafia", "night_doctor", "night_sheriff"):
        fn = {"night_mafia": policy.kill_target, "night_doctor": policy.protect_target, "night_sheriff": policy.check_target}[
            phase
        ]
        action = {"night_mafia": "kill", "night_doctor": "protect", "night_sheriff": "check"}[phase]
        target = fn(st, rng) or "none"
        why = {
            "kill": ("{t} is the biggest threat to my team.", "{t} — главная угроза для моей команды."),
            "protect": ("{t} is the likeliest Mafia target.", "{t} — самая вероятная цель мафии."),
            "check": ("{t} is the player I am least sure about.", "В игроке {t} я уверен(а) меньше всего."),
        }[action]
        return {"action": action, "target": target, "reasoning": why[lang == "ru"].format(t=target)}
    if phase == "intro" or not st.others():
        return {
            "action": "observe",
            "target": "none",
            "reasoning": "Too early: I listen and compare stories."
            if lang != "ru"
            else "Слишком рано: слушаю и сравниваю версии.",
        }
    plan = policy.day_plan(st, rng, voting=phase == "vote")
    t = plan.target or "none"
    if st.is_mafia:
        reason = (
            "Push suspicion onto {t} and keep attention away from my team."
            if lang != "ru"
            else "Перевести подозрения на игрока {t} и отвести внимание от моей команды."
        )
    else:
        reason = (
            "{t} is my top suspect; I will argue for it and vote for {t}."
            if lang != "ru"
            else "{t} — мой главный подозреваемый, буду голосовать за {t}."
        )
    return {"action": "vote" if phase == "vote" else "accuse", "target": t, "reasoning": reason.format(t=t)}


def custom(st: BotState, question: str, rng: random.Random) -> Any:
    """Any declared schema, from the belief state, in the direction the question points
    (:mod:`.polarity`): asked about suspects, ``player`` = the top suspect (for Mafia: the most
    suspected town player) and ``players`` = the next suspects up to the number of Mafia; asked about
    trust, ``player`` = the most trusted player (for Mafia: a partner) and ``players`` = the next
    trusted; ``probability`` = the belief that the answer is right (the suspect is Mafia, the trusted
    player on the bot's side), ``score`` = that belief on 0-10, ``enum`` = an option drawn by the seeded
    generator, ``text`` = a one-line reason. Flagged with ``_answered_by``; ``_direction`` records each
    such field's direction, None where the question gives none: that field's answer (the suspect
    reading) is not meaningful."""
    schema: AnswerSchema | None = read_schema(question)
    if schema is None:
        return None
    asked = question[: question.rfind(FORMAT_LEAD)] if FORMAT_LEAD in question else question[: question.rfind(SCHEMA_MARK)]
    picks = {SUSPECT: _suspects(st, question), TRUST: _trusted(st, question)}
    out: dict[str, Any] = {}
    directions: dict[str, str | None] = {}
    for field, f in schema.fields.items():
        if f.type in ("enum", "text"):
            continue
        way = field_direction(asked, field)
        directions[field] = way
        names, belief = picks[way or SUSPECT]
        if f.type == "player":
            out[field] = names[0] if names else "none"
        elif f.type == "players":
            out[field] = names[: _how_many(st, names, way or SUSPECT)]
        elif f.type == "probability":
            out[field] = round(stated(st, belief) / 100.0, 2)
        else:  # score
            out[field] = int(round(stated(st, belief) / 10))
    main = next((w for w in directions.values() if w), SUSPECT)
    for field, f in schema.fields.items():
        if f.type == "enum":
            out[field] = rng.choice(list(f.options))
        elif f.type == "text":
            out[field] = _custom_reason(st, picks[main][0][0] if picks[main][0] else None, main)
    out = {k: out[k] for k in schema.fields}
    out[BOT_FLAG] = "offline-bot"
    out[DIRECTION_KEY] = directions
    return out


DIRECTION_KEY = "_direction"  # field -> "trust" | "suspect" | None (no direction: not meaningful)


def _suspects(st: BotState, question: str) -> tuple[list[str], float]:
    """Other seats by suspicion, most suspected first (Mafia partners left out), and the belief that the first is Mafia."""
    pm = st.p_mafia()
    names = sorted(
        (n for n in _players(st, question) if n != st.me and n not in st.ident.partners), key=lambda n: (-pm.get(n, 0.0), n)
    )
    return names, (pm.get(names[0], 0.0) if names else 0.0)


def _trusted(st: BotState, question: str) -> tuple[list[str], float]:
    """Other seats by trust, most trusted first (for Mafia: its living partners first, whom it knows), and the
    belief that the first is on the bot's side."""
    pm = st.p_mafia()
    others = [n for n in _players(st, question) if n != st.me]
    if st.is_mafia:
        partners = [n for n in others if n in st.ident.partners]
        rest = sorted((n for n in others if n not in st.ident.partners), key=lambda n: (pm.get(n, 0.0), n))
        return partners + rest, (0.995 if partners else 0.005)
    names = sorted(others, key=lambda n: (pm.get(n, 0.0), n))
    return names, (1.0 - pm.get(names[0], 0.0) if names else 0.0)


def _how_many(st: BotState, names: list[str], way: str) -> int:
    """How many players a ``players`` field lists: the Mafia the bot has not placed (suspects), or the
    players it believes on its side (trusted: for Mafia its living partners)."""
    if way == SUSPECT:
        return max(1, st.n_mafia() - (len(st.ident.partners) + 1 if st.is_mafia else 0))
    if st.is_mafia:
        return max(1, sum(1 for n in names if n in st.ident.partners))
    return max(1, len(names) - st.n_mafia())


def _custom_reason(st: BotState, who: str | None, way: str) -> str:
    ru = st.ident.language == "ru"
    if who is None:
        return "Пока нет надёжной информации." if ru else "No strong information yet."
    if way == TRUST:
        return f"{who} кажется мне самым надёжным." if ru else f"{who} seems the most trustworthy to me."
    return f"{who} — мой главный подозреваемый." if ru else f"{who} is my top suspect."


def role_beliefs(st: BotState, question: str, rng: random.Random) -> Any:
    return {x["player"]: {"role": x["guessed_role"], "confidence": x["confidence"]} for x in role_assessment(st, question, rng)}


ANSWERERS: dict[str, Callable[[BotState, str, random.Random], Any]] = {
    "role_assessment": role_assessment,
    "suspicion_ranking": suspicion_ranking,
    "social_map": social_map,
    "personality_profile": personality_profile,
    "planned_action": planned_action,
    "role_beliefs": role_beliefs,
    CUSTOM: custom,
}

_PROSE = {"en": ["Here is my honest answer:", "My assessment:", "Sure."], "ru": ["Вот мой честный ответ:", "Моя оценка:"]}


def answer(st: BotState, question: str, rng: random.Random) -> tuple[str, str | None]:
    """(reply text, probe id or None)."""
    pid = identify(question)
    if pid is None:
        return CANNOT.get(st.ident.language, CANNOT["en"]), None
    value = ANSWERERS[pid](st, question, rng)
    if value is None:  # an unreadable schema line
        return CANNOT.get(st.ident.language, CANNOT["en"]), None
    text = json.dumps(value, ensure_ascii=False)
    if rng.random() < st.params.format_noise:
        if rng.random() < 0.5:
            text = "```json\n" + json.dumps(value, ensure_ascii=False, indent=2) + "\n```"
        else:
            text = rng.choice(_PROSE.get(st.ident.language, _PROSE["en"])) + "\n" + text
    return text, pid
