"""Prompt packs: every text the engine shows a seat, per language.

This is the whole text protocol between the engine and a seat. LLM seats read it as
instructions; offline bots read the very same text (``mafiascope.backends.bot`` parses
it with :func:`observation_patterns`), so bots and LLMs go through one path.

Protocol tokens (``ACTION: Kill X``, ``VOTE: X``; Russian ``ДЕЙСТВИЕ: Убить X``,
``ГОЛОС: X``) are read back by :mod:`mafiascope.engine.parsing`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .prompts_ten import TEN_EN, TEN_REASONS_EN, TEN_REASONS_RU, TEN_RU

NAME_POOL = (
    "Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray", "Harper",
    "Indigo", "Jordan", "Kennedy", "Logan", "Morgan", "Parker", "Quinn", "Riley",
)  # fmt: skip

TRAITS = ("O", "C", "E", "A", "N")


@dataclass(frozen=True)
class Pack:
    language: str
    role_names: dict[str, str]
    role_goals: dict[str, str]
    system: str  # {name} {role} {goal} {rules} {partners_line} {personality}
    partners_line: str  # {partners}
    rules: str
    personality_header: str
    trait_names: dict[str, str]
    trait_levels: tuple[str, str, str]  # low, moderate, high
    personality_footer: str
    intro: str  # {players}
    night_mafia: str  # {round} {players} {allies_choices}
    night_doctor: str
    night_sheriff: str  # {checks}
    discuss: str  # {round} {players}
    vote: str  # {round} {players}
    # observation lines (what other seats see)
    obs_intro: str  # {name} {text}
    obs_said: str
    obs_voted: str
    obs_ally_choice: str  # {name} {target}
    obs_night_result: str  # {result}
    obs_check: str  # {target} {verdict}
    obs_eliminated: str  # {name}
    obs_eliminated_role: str  # {name} {role}
    obs_no_elimination: str  # {reason}
    obs_round_start: str  # {round}
    obs_silent: str  # {name}: the seat's turn failed and it said nothing
    obs_abstained: str  # {name}: the seat cast no vote
    kill_result: str  # {victim}
    save_result: str  # {saved}
    no_kill_result: str
    verdict_mafia: str
    verdict_not_mafia: str
    no_checks: str
    reask: str  # format reminder after an empty/garbage reply; {fmt}
    action_word: str  # ACTION
    vote_word: str  # VOTE
    verbs: dict[str, str]  # kill/protect/check -> verb
    reasons: dict[str, str]  # no-elimination reasons
    ten: dict[str, str] = field(default_factory=dict)  # ten-seat (tournament) texts, see TEN_EN


EN = Pack(
    language="en",
    role_names={"Mafia": "Mafia", "Don": "Don", "Doctor": "Doctor", "Sheriff": "Sheriff", "Villager": "Villager"},
    role_goals={
        "Mafia": "You are Mafia. Eliminate the town without being found out; never reveal your role.",
        "Don": "You are the Don, head of the Mafia. Eliminate the town without being found out.",
        "Doctor": "You are the Doctor (town). Each night you protect one player from the Mafia.",
        "Sheriff": "You are the Sheriff (town). Each night you check one player and learn whether they are Mafia.",
        "Villager": "You are a Villager (town). Find and vote out the Mafia.",
    },
    system=(
        "You are {name}, a player in a game of Mafia.\nYour secret role: {role}.\n{goal}\n{partners_line}{rules}\n{personality}"
    ),
    partners_line="Your Mafia partners: {partners}.\n",
    rules=(
        "RULES: At night the Mafia secretly choose a victim; the Doctor protects one player; "
        "the Sheriff (if present) checks one player. By day everyone speaks, then votes to "
        "eliminate one suspect. Town wins when no Mafia remain; Mafia win when they are at least "
        "as many as everyone else.\nKeep replies short (2-4 sentences)."
    ),
    personality_header="YOUR PERSONALITY (Big Five):",
    trait_names={"O": "Openness", "C": "Conscientiousness", "E": "Extraversion", "A": "Agreeableness", "N": "Neuroticism"},
    trait_levels=("low", "moderate", "high"),
    personality_footer="Let these traits shape how you speak and decide, not which side you are on.",
    intro=("INTRODUCTION ROUND. Players: {players}.\nIntroduce yourself in character in 2-3 sentences. Do not reveal your role."),
    night_mafia=(
        "NIGHT {round}. Alive: {players}.\n{allies_choices}"
        "Choose a player to kill. Reply briefly, then end with a line: ACTION: Kill <name>"
    ),
    night_doctor=(
        "NIGHT {round}. Alive: {players}.\n"
        "Choose a player to protect tonight (you may protect yourself). End with a line: ACTION: Protect <name>"
    ),
    night_sheriff=(
        "NIGHT {round}. Alive: {players}.\nYour checks so far: {checks}.\n"
        "Choose a player to check. End with a line: ACTION: Check <name>"
    ),
    discuss=(
        "DAY {round} DISCUSSION. Alive: {players}.\n"
        "Share your thoughts: who do you suspect and why? Speak in character, 2-4 sentences."
    ),
    vote=("DAY {round} VOTE. Alive: {players}.\nGive a one-sentence final argument, then end with a line: VOTE: <name>"),
    obs_intro="{name} introduces: {text}",
    obs_said="{name} said: {text}",
    obs_voted="{name} voted: {text}",
    obs_ally_choice="[Mafia ally] {name} chose: Kill {target}",
    obs_night_result="NIGHT RESULT: {result}",
    obs_check="CHECK RESULT: {target} is {verdict}.",
    obs_eliminated="{name} was eliminated by vote.",
    obs_eliminated_role="{name} was eliminated by vote. Their role was {role}.",
    obs_no_elimination="No one was eliminated ({reason}).",
    obs_round_start="--- Round {round} ---",
    obs_silent="{name} said nothing.",
    obs_abstained="{name} did not vote.",
    kill_result="{victim} was killed by the Mafia.",
    save_result="The Doctor saved {saved}!",
    no_kill_result="No one was killed tonight.",
    verdict_mafia="Mafia",
    verdict_not_mafia="Not Mafia",
    no_checks="none",
    reask="Your reply could not be read. Answer again and end with a line: {fmt}",
    action_word="ACTION",
    vote_word="VOTE",
    verbs={"kill": "Kill", "protect": "Protect", "check": "Check"},
    reasons={"tie": "the vote was tied", "no_valid_votes": "no valid votes", "no_vote_day": "no vote today"},
)

RU = Pack(
    language="ru",
    role_names={"Mafia": "Мафия", "Don": "Дон", "Doctor": "Доктор", "Sheriff": "Шериф", "Villager": "Мирный житель"},
    role_goals={
        "Mafia": "Ты Мафия. Устрани мирных, не раскрыв себя; никогда не называй свою роль.",
        "Don": "Ты Дон, глава Мафии. Устрани мирных, не раскрыв себя.",
        "Doctor": "Ты Доктор (мирный). Каждую ночь ты защищаешь одного игрока от Мафии.",
        "Sheriff": "Ты Шериф (мирный). Каждую ночь ты проверяешь одного игрока и узнаёшь, Мафия ли он.",
        "Villager": "Ты Мирный житель. Найди Мафию и изгони её голосованием.",
    },
    system=("Ты — {name}, игрок в Мафию.\nТвоя тайная роль: {role}.\n{goal}\n{partners_line}{rules}\n{personality}"),
    partners_line="Твои партнёры по Мафии: {partners}.\n",
    rules=(
        "ПРАВИЛА: ночью Мафия тайно выбирает жертву; Доктор защищает одного игрока; Шериф (если есть) "
        "проверяет одного игрока. Днём все говорят, затем голосуют за изгнание подозреваемого. Мирные "
        "побеждают, когда Мафии не осталось; Мафия — когда её не меньше, чем остальных.\n"
        "Отвечай коротко (2-4 предложения)."
    ),
    personality_header="ТВОЙ ХАРАКТЕР (Большая пятёрка):",
    trait_names={"O": "Открытость", "C": "Добросовестность", "E": "Экстраверсия", "A": "Доброжелательность", "N": "Нейротизм"},
    trait_levels=("низкая", "средняя", "высокая"),
    personality_footer="Пусть эти черты влияют на то, как ты говоришь и решаешь, а не на твою сторону.",
    intro="РАУНД ЗНАКОМСТВА. Игроки: {players}.\nПредставься в образе в 2-3 предложениях. Не раскрывай свою роль.",
    night_mafia=(
        "НОЧЬ {round}. Живы: {players}.\n{allies_choices}"
        "Выбери, кого убить. Ответь кратко и закончи строкой: ДЕЙСТВИЕ: Убить <имя>"
    ),
    night_doctor=(
        "НОЧЬ {round}. Живы: {players}.\nВыбери, кого защитить этой ночью (можно себя). Закончи строкой: ДЕЙСТВИЕ: Защитить <имя>"
    ),
    night_sheriff=(
        "НОЧЬ {round}. Живы: {players}.\nТвои проверки: {checks}.\n"
        "Выбери, кого проверить. Закончи строкой: ДЕЙСТВИЕ: Проверить <имя>"
    ),
    discuss=("ДЕНЬ {round}, ОБСУЖДЕНИЕ. Живы: {players}.\nКого ты подозреваешь и почему? Говори в образе, 2-4 предложения."),
    vote=(
        "ДЕНЬ {round}, ГОЛОСОВАНИЕ. Живы: {players}.\nПриведи последний довод одним предложением и закончи строкой: ГОЛОС: <имя>"
    ),
    obs_intro="{name} представляется: {text}",
    obs_said="{name} сказал(а): {text}",
    obs_voted="{name} проголосовал(а): {text}",
    obs_ally_choice="[Союзник по Мафии] {name} выбрал(а): Убить {target}",
    obs_night_result="ИТОГ НОЧИ: {result}",
    obs_check="РЕЗУЛЬТАТ ПРОВЕРКИ: {target} — {verdict}.",
    obs_eliminated="{name} изгнан(а) голосованием.",
    obs_eliminated_role="{name} изгнан(а) голосованием. Роль: {role}.",
    obs_no_elimination="Никто не изгнан ({reason}).",
    obs_round_start="--- Раунд {round} ---",
    obs_silent="{name} промолчал(а).",
    obs_abstained="{name} не проголосовал(а).",
    kill_result="Мафия убила игрока {victim}.",
    save_result="Доктор спас игрока {saved}!",
    no_kill_result="Этой ночью никто не погиб.",
    verdict_mafia="Мафия",
    verdict_not_mafia="не Мафия",
    no_checks="нет",
    reask="Твой ответ не удалось прочитать. Ответь ещё раз и закончи строкой: {fmt}",
    action_word="ДЕЙСТВИЕ",
    vote_word="ГОЛОС",
    verbs={"kill": "Убить", "protect": "Защитить", "check": "Проверить"},
    reasons={
        "tie": "ничья в голосовании",
        "no_valid_votes": "нет действительных голосов",
        "no_vote_day": "сегодня без голосования",
    },
)

# the ten-seat texts (prompts_ten.py) join the packs
EN = replace(EN, ten=TEN_EN, reasons={**EN.reasons, **TEN_REASONS_EN})
RU = replace(RU, ten=TEN_RU, reasons={**RU.reasons, **TEN_REASONS_RU})


PACKS: dict[str, Pack] = {"en": EN, "ru": RU}


def pack(language: str) -> Pack:
    try:
        return PACKS[language]
    except KeyError:
        raise ValueError(f"language {language!r} is not supported; choose one of {sorted(PACKS)}") from None


def trait_level(p: Pack, value: int) -> str:
    return p.trait_levels[0] if value <= 30 else p.trait_levels[2] if value >= 70 else p.trait_levels[1]


def personality_block(p: Pack, personality: dict[str, int]) -> str:
    lines = [p.personality_header]
    for t in TRAITS:
        v = int(personality.get(t, 50))
        lines.append(f"- {p.trait_names[t]}: {v}/100 ({trait_level(p, v)})")
    lines.append(p.personality_footer)
    return "\n".join(lines)


def system_prompt(p: Pack, *, name: str, role: str, partners: list[str], personality: dict[str, int],
                  rules_text: str | None = None, don: str | None = None) -> str:  # fmt: skip
    """``don``: the partner who is the Don (ten-seat games), marked in the partners line: "Alex (Don), Gray"."""
    shown = [f"{n} ({p.role_names['Don']})" if n == don else n for n in partners]
    partners_line = p.partners_line.format(partners=", ".join(shown)) if partners else ""
    return p.system.format(
        name=name,
        role=p.role_names[role],
        goal=p.role_goals[role],
        partners_line=partners_line,
        rules=p.rules if rules_text is None else rules_text,
        personality=personality_block(p, personality),
    )


def action_format(p: Pack, action: str) -> str:
    """The closing line a seat must give, e.g. ``ACTION: Kill <name>`` or ``VOTE: <name>``."""
    if action == "vote":
        return f"{p.vote_word}: <name>" if p.language == "en" else f"{p.vote_word}: <имя>"
    placeholder = "<name>" if p.language == "en" else "<имя>"
    return f"{p.action_word}: {p.verbs[action]} {placeholder}"


def role_from_label(p: Pack, label: str) -> str | None:
    """Inverse of ``role_names`` (used by bots reading their system prompt)."""
    for key, shown in p.role_names.items():
        if shown.lower() == label.strip().lower():
            return key
    return None


def observation_patterns(p: Pack) -> dict[str, re.Pattern[str]]:
    """Regexes that recognise each observation line of this pack (for bots and audits)."""

    def rx(template: str) -> re.Pattern[str]:
        out = re.escape(template)
        for key in ("name", "target", "verdict", "role", "result", "victim", "saved", "reason", "round", "order"):
            out = out.replace(re.escape("{" + key + "}"), f"(?P<{key}>.+?)")
        out = out.replace(re.escape("{text}"), r"(?P<text>.*)")
        return re.compile("^" + out + "$", re.S)

    return {
        "intro": rx(p.obs_intro),
        "said": rx(p.obs_said),
        "voted": rx(p.obs_voted),
        "ally_choice": rx(p.obs_ally_choice),
        "night_result": rx(p.obs_night_result),
        "check": rx(p.obs_check),
        "eliminated_role": rx(p.obs_eliminated_role),
        "eliminated": rx(p.obs_eliminated),
        "no_elimination": rx(p.obs_no_elimination),
        "round_start": rx(p.obs_round_start),
        "silent": rx(p.obs_silent),
        "abstained": rx(p.obs_abstained),
        "kill_result": rx(p.kill_result),
        "save_result": rx(p.save_result),
        # ten-seat (tournament) lines, when the pack has them
        **(
            {
                "nomination": rx(p.ten["obs_nomination"]),
                "don_check": rx(p.ten["obs_don_check"]),
                "shot_order": rx(p.ten["obs_shot_order"]),
                "passed": rx(p.ten["obs_passed"]),
            }
            if p.ten
            else {}
        ),
    }


def ten_rules_text(p: Pack, variant: str | None) -> str:
    """The system prompt's rules paragraph for a ten-seat variant."""
    return p.ten["rules_common"] + p.ten.get(f"rules_{variant}", "") + p.ten["rules_footer"]
