"""The words of the bots' ten-seat replies, per language: the protocol words (the engine's
markers) and the phrases a bot picks from (seeded) for nominations, shots, last words, defences,
the open floor and the remove-all vote."""

from __future__ import annotations

# protocol words of the ten-seat lines, per language (the engine's markers in parsing.py)
WORDS = {
    "en": {"nominate": "NOMINATE", "suspects": "SUSPECTS", "nobody": "nobody"},
    "ru": {"nominate": "ВЫСТАВЛЯЮ", "suspects": "ПОДОЗРЕВАЮ", "nobody": "никого"},
}

TEXTS: dict[str, dict[str, list[str]]] = {
    "en": {
        "nominate": ["I nominate {t}.", "{t} goes up for the vote from me.", "I'm putting {t} up for the vote."],
        "no_nominate": ["I'm not nominating anyone yet.", "No nomination from me for now.", "I'll hold my nomination."],
        "order": [
            "We start with {t} and go down the list.",
            "First {t}, then the rest in this order.",
            "{t} first; stick to the list.",
        ],
        "propose0": ["I'd start with {t}.", "My pick for the first shot is {t}.", "{t} looks dangerous, let's begin there."],
        "propose": ["Let's shoot {t} tonight.", "I say we take out {t} tonight.", "{t} is our target tonight."],
        "agree": ["Agreed, {t} tonight.", "Fine by me: {t}.", "Yes, {t}. Let's all go for {t}."],
        "sheriff_found": ["I checked {t}: {t} is the Sheriff. We shoot {t}.", "{t} is the Sheriff, I checked. {t} tonight."],
        "sheriff_agree": ["The Sheriff first: {t}.", "Agreed, {t} is the Sheriff, {t} tonight."],
        "shot": ["Following the order: {t}.", "As agreed, {t}.", "Sticking to the plan: {t}."],
        "don_check": [
            "Is {t} the Sheriff? Let's see.",
            "{t} acts like someone with information. Checking {t}.",
            "I check {t} tonight.",
        ],
        "best": ["I was the first one shot, so here is my best move.", "They shot me first. My three suspects, in order:"],
        "best_top": ["{t} worries me the most.", "Look hardest at {t}."],
        "last_town": ["I was town, remember that.", "I'm leaving as an innocent villager."],
        "last_mafia": ["You are making a mistake, I was town.", "I was innocent, and the real Mafia are still here."],
        "last_accuse": ["My top suspect is {t}.", "Vote out {t} next.", "Watch {t}, I'm sure about {t}."],
        "last_trust": ["{d} is town, trust {d}.", "{d} has been honest."],
        "defence_self": [
            "I am not Mafia.",
            "I'm innocent, and voting me out helps the Mafia.",
            "I am town, you are on the wrong player.",
        ],
        "defence_other": ["Look at {t} instead.", "{t} is the one who deflects.", "My suspect is {t}, not me."],
        "answer_accused": ["{a}, I am not Mafia.", "{a}, you are wrong about me.", "{a}, I'm town, look elsewhere."],
        "answer_named": ["{a}, yes, I stand by my read.", "{a}, thanks, I agree.", "To answer {a}: my read has not changed."],
        "yes": ["Remove them all; the odds favour the town.", "Yes, both have to go."],
        "no": ["No, we would lose too many innocents.", "No, keep them; this is too risky."],
    },
    "ru": {
        "nominate": [
            "Предлагаю на голосование игрока {t}.",
            "Моя кандидатура на голосование: {t}.",
            "Ставлю на голосование {t}.",
        ],
        "no_nominate": [
            "Пока никого не предлагаю на голосование.",
            "Без кандидатуры от меня.",
            "Пока воздержусь от кандидатуры.",
        ],
        "order": [
            "Начинаем с игрока {t}, дальше по списку.",
            "Первым {t}, затем остальные по порядку.",
            "{t} первым; держимся списка.",
        ],
        "propose0": [
            "Я бы начал(а) с игрока {t}.",
            "Мой выбор для первого выстрела: {t}.",
            "{t} выглядит опасным, начнём с него.",
        ],
        "propose": ["Стреляем сегодня в игрока {t}.", "Предлагаю убрать игрока {t} этой ночью.", "{t} — наша цель этой ночью."],
        "agree": ["Согласен(на), {t} этой ночью.", "Я за: {t}.", "Да, {t}. Все стреляем в {t}."],
        "sheriff_found": [
            "Я проверил(а) игрока {t}: {t} — Шериф. Стреляем в {t}.",
            "{t} — Шериф, я проверил(а). Этой ночью {t}.",
        ],
        "sheriff_agree": ["Сначала Шериф: {t}.", "Согласен(на), {t} — Шериф, стреляем в {t}."],
        "shot": ["По порядку: {t}.", "Как договорились, {t}.", "Держусь плана: {t}."],
        "don_check": [
            "Шериф ли {t}? Проверим.",
            "{t} говорит как человек с информацией. Проверяю {t}.",
            "Этой ночью проверяю игрока {t}.",
        ],
        "best": ["Меня убили первым, вот мой лучший ход.", "Меня застрелили первым. Мои трое подозреваемых:"],
        "best_top": ["Больше всего меня тревожит {t}.", "Присмотритесь к игроку {t}."],
        "last_town": ["Я был(а) мирным, помните это.", "Ухожу мирным жителем."],
        "last_mafia": ["Вы ошибаетесь, я был(а) мирным.", "Я невиновен(на), а настоящая мафия ещё здесь."],
        "last_accuse": [
            "Мой главный подозреваемый — {t}.",
            "Следующим изгоняйте игрока {t}.",
            "Следите за игроком {t}, я уверен(а) в нём.",
        ],
        "last_trust": ["{d} — мирный, доверяйте ему.", "{d} играл(а) честно."],
        "defence_self": ["Я не мафия.", "Я невиновен(на), мой уход поможет мафии.", "Я мирный, вы ошиблись игроком."],
        "defence_other": [
            "Посмотрите лучше на игрока {t}.",
            "{t} постоянно уводит разговор в сторону.",
            "Мой подозреваемый — {t}, а не я.",
        ],
        "answer_accused": ["{a}, я не мафия.", "{a}, ты ошибаешься насчёт меня.", "{a}, я мирный, ищи в другом месте."],
        "answer_named": [
            "{a}, да, я остаюсь при своём мнении.",
            "{a}, спасибо, согласен(на).",
            "Отвечу игроку {a}: моё мнение не изменилось.",
        ],
        "yes": ["Выводим всех; шансы на стороне города.", "Да, оба должны уйти."],
        "no": ["Нет, мы потеряем слишком много мирных.", "Нет, оставим их; это слишком рискованно."],
    },
}
