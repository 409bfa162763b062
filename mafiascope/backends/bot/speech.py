"""Speech: English and Russian template packs shaped by the Big Five.

Extraversion sets length and exclamations, Agreeableness softens or sharpens the tone,
Conscientiousness adds structure, Neuroticism adds worry, Openness adds new angles. The
phrases deliberately use words that :mod:`.cues` reads back, so bots can read each
other's accusations and personalities.
"""

from __future__ import annotations

import random

from mafiascope.engine import prompts

from .policy import Plan
from .state import BotState

EN: dict[str, list[str]] = {
    "intro_open": ["Hi everyone, I'm {me}.", "Hello all, {me} here.", "Hey, I'm {me}.", "Good evening, my name is {me}."],
    "E_hi": ["I like to think out loud, so you will hear a lot from me!", "I love a lively debate and I will be talking plenty!"],
    "E_lo": ["I usually listen more than I talk.", "I am on the quiet side, but I pay attention."],
    "A_hi": ["I hope we can keep this friendly and work together.", "Please be patient with me, I am happy to cooperate."],
    "A_lo": ["I will not sugar-coat my reads.", "Frankly, I expect people to defend their claims."],
    "C_hi": ["I will keep track of who says what, step by step.", "First I listen, then I compare the stories."],
    "C_lo": ["I mostly go with my gut.", "I do not take notes, I follow my instincts."],
    "N_hi": ["Honestly, games like this make me a bit nervous.", "I get anxious when things heat up, so bear with me."],
    "N_lo": ["I stay calm when things get heated.", "Pressure does not bother me much."],
    "O_hi": ["I enjoy looking at things from an unusual angle.", "I like testing a wild theory or two."],
    "O_lo": ["I prefer plain facts to clever theories.", "Keep it simple and we will get there."],
    "intro_close": ["Let's find the Mafia.", "Good luck to all of us.", "Let's get this right.", "May the town win."],
    "soft": ["Maybe I'm wrong, but ", "I might be off here, but ", "No offence, but ", "Sorry, but "],
    "harsh": ["Frankly, ", "Let's be honest: ", "Obviously ", "Come on, "],
    "anx": ["This makes me nervous.", "I'm worried we are running out of time.", "Oh no, this is getting tense."],
    "open": ["Here's another angle.", "What if we look at it differently?", "I have a theory."],
    "accuse": [
        "I suspect {t}.",
        "My top suspect right now is {t}.",
        "I think {t} is Mafia.",
        "{t} looks like Mafia to me.",
        "I'd vote for {t} today.",
    ],
    "doubt": [
        "I have no strong read yet, but {t} seems a little suspicious.",
        "To be fair, {t} looks like Mafia to me as well, a little.",
    ],
    "hedge": [
        "I have no strong read yet, but {t} seems a little suspicious.",
        "It's early; I'm watching {t} closely.",
        "Nothing solid yet, though {t} feels slightly off.",
    ],
    "bus": [
        "Too many red flags around {t}, I can't ignore them.",
        "I've gone back and forth, but {t} is suspicious and I'll vote for {t}.",
    ],
    "reveal": [
        "I'm the Sheriff: I checked {t} and {t} is Mafia.",
        "Listen, I checked {t} last night. {t} is Mafia, vote with me.",
    ],
    "defend": [
        "{d} seems honest to me.",
        "I trust {d} for now.",
        "I don't think {d} is Mafia.",
        "Leave {d} alone, {d} looks like town.",
    ],
    "self": [
        "I am not Mafia, whatever {a} says.",
        "{a} keeps pushing on me with nothing solid.",
        "{a}, attacking me is a waste of a day.",
    ],
    "agree": ["I agree with {y} about {t}.", "{y} made a good point about {t}."],
    "r_pushed": ["{t} pushed hard on {y}, and {y} was innocent.", "{t} went after {y}, who turned out to be town."],
    "r_voted": ["{t} voted for {y} without much reason.", "{t} put a vote on {y} yesterday, which I didn't like."],
    "r_on_me": ["{t} has been pointing at me for no reason.", "{t} jumped on me out of nowhere."],
    "r_defended": ["{t} rushed to defend {y}.", "{t} keeps covering for {y}."],
    "r_victim": ["{v} had doubts about {t} before being killed.", "{v} suspected {t}, and then {v} was killed."],
    "r_quiet": ["{t} has said very little so far.", "{t} is staying too quiet."],
    "r_generic": ["{t}'s story doesn't add up.", "Something in how {t} argues feels evasive.", "{t} keeps deflecting."],
    "vote": [
        "My vote goes to {t}.",
        "{t} is my strongest suspect, so I vote for {t}.",
        "I'm voting for {t}; the story doesn't add up.",
    ],
    "vote_bus": ["It hurts, but {t} has to go.", "I'll vote for {t}, the evidence is too strong."],
    "vote_reveal": ["I checked {t}: Mafia, so I vote for {t}."],
    "kill": ["{t} is the biggest threat to us.", "We should remove {t} tonight.", "{t} is reading us too well."],
    "protect": ["I'll keep {t} safe tonight.", "{t} looks like the Mafia's next target.", "Protecting {t} tonight."],
    "protect_self": ["I'll protect myself tonight.", "I'm guarding myself this time."],
    "check": ["I want to know the truth about {t}.", "Checking {t} tonight.", "{t} is the one I can't read, so I check {t}."],
    "plain": ["I'm listening.", "Noted.", "Understood."],
    "reask": ["Sorry, here is my answer again."],
}

RU: dict[str, list[str]] = {
    "intro_open": ["Всем привет, я {me}.", "Добрый вечер, меня зовут {me}.", "Привет, это {me}."],
    "E_hi": ["Я люблю рассуждать вслух, так что слышать меня будете часто!", "Обожаю живые споры, буду говорить много!"],
    "E_lo": ["Обычно я больше слушаю, чем говорю.", "Я человек тихий, но внимательный."],
    "A_hi": ["Надеюсь, мы сыграем дружно и поможем друг другу.", "Пожалуйста, давайте без обид, я готов(а) сотрудничать."],
    "A_lo": ["Смягчать свои подозрения я не буду.", "Давайте честно: каждому придётся отвечать за свои слова."],
    "C_hi": ["Я буду по порядку следить, кто что говорит.", "Во-первых, слушаю, во-вторых, сравниваю версии."],
    "C_lo": ["Я больше доверяю интуиции.", "Записей не веду, играю по ощущениям."],
    "N_hi": ["Честно говоря, такие игры меня немного тревожат.", "Я нервничаю, когда страсти накаляются."],
    "N_lo": ["Я сохраняю спокойствие в любой ситуации.", "Давление меня не пугает."],
    "O_hi": ["Мне интересно смотреть на вещи с необычной стороны.", "Люблю проверять смелые теории."],
    "O_lo": ["Я предпочитаю простые факты хитрым теориям.", "Чем проще, тем лучше."],
    "intro_close": ["Давайте найдём Мафию.", "Всем удачи.", "Пусть победит город."],
    "soft": ["Может быть, я ошибаюсь, но ", "Мне кажется, ", "Не хочу обидеть, но ", "Возможно, "],
    "harsh": ["Давайте честно: ", "Очевидно, ", "Хватит ходить кругами: "],
    "anx": ["Меня это тревожит.", "Я волнуюсь, время уходит.", "Мне не по себе от этого."],
    "open": ["А что если посмотреть с другой стороны?", "У меня есть теория.", "Есть интересная версия."],
    "accuse": [
        "Я подозреваю игрока {t}.",
        "Главный подозреваемый для меня сейчас {t}.",
        "Думаю, {t} — мафия.",
        "{t} выглядит как мафия.",
    ],
    "doubt": [
        "Твёрдого мнения нет, но {t} кажется немного подозрительным.",
        "Честно говоря, я подозреваю и игрока {t}, хоть и немного.",
    ],
    "hedge": ["Твёрдого мнения нет, но {t} кажется немного подозрительным.", "Пока рано, но я внимательно слежу за игроком {t}."],
    "bus": ["Вокруг игрока {t} слишком много красных флагов.", "Я сомневался, но {t} подозрителен, голосую против {t}."],
    "reveal": [
        "Я Шериф: я проверил(а) игрока {t}, {t} — мафия.",
        "Слушайте, прошлой ночью я проверил(а) {t}. {t} — мафия, голосуйте со мной.",
    ],
    "defend": ["{d} кажется мне честным игроком.", "Пока я доверяю игроку {d}.", "Не думаю, что {d} — мафия."],
    "self": [
        "Я не мафия, что бы ни говорил(а) {a}.",
        "{a} давит на меня без оснований.",
        "{a}, нападать на меня — пустая трата дня.",
    ],
    "agree": ["Согласен с игроком {y} насчёт {t}.", "{y} верно заметил(а) про {t}."],
    "r_pushed": ["{t} давил(а) на игрока {y}, а {y} оказался мирным.", "{t} нападал(а) на {y}, а {y} был(а) невиновен."],
    "r_voted": ["{t} голосовал(а) против игрока {y} без причины.", "{t} вчера голосовал(а) за {y}, и мне это не понравилось."],
    "r_on_me": ["{t} без причины указывает на меня.", "{t} набросился на меня на ровном месте."],
    "r_defended": ["{t} поспешно защищал(а) игрока {y}.", "{t} всё время прикрывает игрока {y}."],
    "r_victim": ["{v} подозревал(а) игрока {t} перед смертью.", "{v} сомневался в игроке {t}, и {v} убили."],
    "r_quiet": ["{t} почти ничего не говорит.", "{t} слишком тихо себя ведёт."],
    "r_generic": ["У игрока {t} не сходится история.", "{t} уводит разговор в сторону.", "{t} постоянно увиливает."],
    "vote": ["Мой голос против игрока {t}.", "{t} мой главный подозреваемый, голосую за {t}."],
    "vote_bus": ["Жаль, но {t} должен уйти.", "Голосую за {t}, улик слишком много."],
    "vote_reveal": ["Я проверил(а) {t}: мафия, голосую за {t}."],
    "kill": ["{t} для нас самая большая угроза.", "Этой ночью стоит убрать игрока {t}.", "{t} слишком хорошо нас читает."],
    "protect": ["Этой ночью я защищаю игрока {t}.", "{t} похож на следующую цель мафии."],
    "protect_self": ["Этой ночью защищаю себя.", "На этот раз прикрою себя."],
    "check": ["Хочу узнать правду об игроке {t}.", "Проверяю игрока {t}.", "{t} для меня загадка, проверю его."],
    "plain": ["Я слушаю.", "Понял(а).", "Принято."],
    "reask": ["Извините, повторю ответ."],
}

TEMPLATES = {"en": EN, "ru": RU}


def pick_line(rng: random.Random, lang: str, key: str, **kw: str) -> str:
    return rng.choice(TEMPLATES.get(lang, EN)[key]).format(**kw)


def protocol_line(lang: str, action: str, target: str) -> str:
    p = prompts.PACKS.get(lang, prompts.EN)
    return prompts.action_format(p, action).replace("<name>", target).replace("<имя>", target)


def suspicion_reasons(st: BotState, t: str, rng: random.Random) -> list[str]:
    """Grounded reasons to suspect ``t``, best first."""
    lang = st.ident.language
    out: list[tuple[float, str]] = []
    town_known = {n for n, r in st.known.items() if r not in ("Mafia", "Don") and n != t}
    for ln in reversed(st.links[-200:]):
        if ln.actor != t or ln.weight <= 0:
            continue
        if ln.target == st.me:
            out.append((3.0, pick_line(rng, lang, "r_on_me", t=t)))
        elif ln.target in town_known:
            key = "r_voted" if ln.kind == "voted" else "r_pushed"
            out.append((2.5, pick_line(rng, lang, key, t=t, y=ln.target)))
        elif ln.kind == "voted":
            out.append((1.0, pick_line(rng, lang, "r_voted", t=t, y=ln.target)))
    pm = st.p_mafia()
    for ln in st.links[-200:]:
        if ln.actor == t and ln.weight < 0 and pm.get(ln.target, 0) > 0.5 and ln.target != st.me:
            out.append((2.0, pick_line(rng, lang, "r_defended", t=t, y=ln.target)))
            break
    for _, outcome, v in st.night_log:
        if outcome == "kill" and any(ln.actor == v and ln.target == t and ln.weight > 0 for ln in st.links):
            out.append((2.2, pick_line(rng, lang, "r_victim", t=t, v=v)))
    acc = st.style.get(t)
    avg = sorted(a[1] / a[0] for a in st.style.values() if a[0])
    if acc and acc[0] and avg and acc[1] / acc[0] < 0.7 * avg[len(avg) // 2]:
        out.append((0.8, pick_line(rng, lang, "r_quiet", t=t)))
    out.append((0.5, pick_line(rng, lang, "r_generic", t=t)))
    seen, res = set(), []
    for _, s in sorted(out, key=lambda x: -x[0]):
        if s not in seen:
            seen.add(s)
            res.append(s)
    return res


def _style(st: BotState, core: list[str], extras: list[str], rng: random.Random, intro: bool = False) -> str:
    """Trim to a personality-dependent length and apply tone."""
    pers = st.ident.personality
    lang = st.ident.language
    e, a, c, n, o = (pers.get(k, 50) for k in "EACNO")
    want = round((1.6 + e / 45) * st.params.verbosity)
    want = max(2, min(4, want))
    if n >= 65 and not intro and rng.random() < 0.6:
        extras.insert(0, pick_line(rng, lang, "anx"))
    if o >= 65 and not intro and rng.random() < 0.5:
        core.insert(0, pick_line(rng, lang, "open"))
    sentences = core[:want] + extras[: max(0, want - len(core))]
    if sentences:
        tone = "soft" if a >= 65 else "harsh" if a <= 35 else None
        if tone and rng.random() < 0.7:
            i = 0 if len(sentences) == 1 else rng.randrange(1 if intro else 0, len(sentences))
            s = sentences[i]
            sentences[i] = pick_line(rng, lang, tone) + (
                s[0].lower() + s[1:] if s[:1].isupper() and not _starts_with_name(st, s) else s
            )
        if c >= 65 and len(sentences) >= 3 and not intro:
            marks = ("First, ", "Second, ") if lang == "en" else ("Во-первых, ", "Во-вторых, ")
            for i, m in enumerate(marks):
                s = sentences[1 + i]
                sentences[1 + i] = m + (s[0].lower() + s[1:] if not _starts_with_name(st, s) else s)
        if e >= 65:
            for i in range(len(sentences)):
                if sentences[i].endswith(".") and rng.random() < 0.6:
                    sentences[i] = sentences[i][:-1] + "!"
    return " ".join(sentences)


def _starts_with_name(st: BotState, s: str) -> bool:
    return any(s.startswith(p) for p in st.players) or s.startswith("I ") or s.startswith("I'")


def intro(st: BotState, rng: random.Random) -> str:
    lang = st.ident.language
    pers = st.ident.personality
    traits = sorted("OCEAN", key=lambda k: -abs(pers.get(k, 50) - 50))
    lines = [pick_line(rng, lang, "intro_open", me=st.me)]
    for k in traits[:2]:
        v = pers.get(k, 50)
        if v != 50:
            lines.append(pick_line(rng, lang, f"{k}_{'hi' if v > 50 else 'lo'}"))
    lines.append(pick_line(rng, lang, "intro_close"))
    return _style(st, lines[:1], lines[1:], rng, intro=True)


def discussion(st: BotState, plan: Plan, rng: random.Random) -> str:
    lang = st.ident.language
    t = plan.target
    core: list[str] = []
    extras: list[str] = []
    if t is None:
        return pick_line(rng, lang, "plain")
    if plan.mode == "reveal":
        core.append(pick_line(rng, lang, "reveal", t=t))
    elif plan.mode == "bus":
        core.append(pick_line(rng, lang, "bus", t=t))
    elif plan.mode == "hedge":
        core.append(pick_line(rng, lang, "hedge", t=t))
    else:
        core.append(pick_line(rng, lang, "accuse", t=t))
    reasons = suspicion_reasons(st, t, rng)
    extras.extend(reasons[:2])
    agreeing = [
        ln.actor
        for ln in reversed(st.links[-60:])
        if ln.target == t and ln.weight > 0 and ln.actor not in (st.me, t) and ln.actor in st.alive
    ]
    if agreeing and rng.random() < 0.5:
        extras.insert(1, pick_line(rng, lang, "agree", y=agreeing[0], t=t))
    if plan.defend:
        extras.insert(0 if st.is_mafia else len(extras), pick_line(rng, lang, "defend", d=plan.defend))
    if plan.distance:
        extras.insert(0, pick_line(rng, lang, "hedge", t=plan.distance))
    attackers = sorted((a for a in st.toward_me if a in st.alive and st.toward_me[a] > 1.0), key=lambda a: -st.toward_me[a])
    if attackers and rng.random() < 0.6:
        extras.insert(0, pick_line(rng, lang, "self", a=attackers[0]))
    return _style(st, core, extras, rng)


def vote(st: BotState, plan: Plan, rng: random.Random) -> str:
    lang = st.ident.language
    t = plan.target or st.me
    key = {"bus": "vote_bus", "reveal": "vote_reveal"}.get(plan.mode, "vote")
    return pick_line(rng, lang, key, t=t) + "\n" + protocol_line(lang, "vote", t)


def night(st: BotState, action: str, target: str, rng: random.Random) -> str:
    lang = st.ident.language
    key = "protect_self" if action == "protect" and target == st.me else action
    return pick_line(rng, lang, key, t=target) + "\n" + protocol_line(lang, action, target)


def plain(st: BotState, rng: random.Random) -> str:
    return pick_line(rng, st.ident.language, "plain")
