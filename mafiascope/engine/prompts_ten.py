"""The ten-seat (tournament) texts of the prompt packs, per language: the rules paragraphs, the
instructions of each stage, the host's lines and the no-elimination reasons. Merged into the
packs by :mod:`mafiascope.engine.prompts` (``Pack.ten``, ``Pack.reasons``).
"""

from __future__ import annotations

# Keys used by engine/phases/tournament.py. Instructions end with the same protocol lines as
# the classic ones (VOTE:, ACTION: Kill/Check) plus NOMINATE:, SUSPECTS:, ORDER: and PASS.
TEN_EN: dict[str, str] = {
    "rules_common": (
        "RULES (ten players): three Mafia, one of them the Don, and seven town, one of them the Sheriff. "
        "The Mafia know each other. Each night the Mafia shoot, the Don checks one player for the Sheriff and "
        "the Sheriff checks one player for Mafia; only the checker learns the result. The first player shot "
        "names three suspects. A player who leaves says last words. Roles are revealed only at the end. "
        "Town wins when no Mafia are left; Mafia win when they are at least as many as the town."
    ),
    "rules_sport": (
        " The Mafia meet only once, on night zero, where the Don sets the order of shots; afterwards each "
        "Mafia player shoots alone and the shot lands only if all living Mafia pick the same player. One speech "
        "each per day in seat order; you may nominate during your speech and only nominees can be voted on. "
        "No vote on day 1 unless two or more are nominated; later a lone nominee leaves without a vote. A tie "
        "gives a revote among the tied; a second tie, a yes/no vote on removing all of them."
    ),
    "rules_open_table": (
        " The day is an open floor: everyone speaks once in seat order, then players named may answer and anyone "
        "may speak again, up to three turns each. No vote on day 1. From day 2 anyone can be voted on; a tie "
        "gives each tied player a defence speech and a run-off. The Mafia talk privately every night and pick "
        "one shot by vote."
    ),
    "rules_imbalanced": (
        " One speech each per day in seat order, then a vote on anyone, from day 1. The Mafia talk privately "
        "every night and pick one shot by vote."
    ),
    "rules_footer": "\nKeep replies short (2-4 sentences).",
    "night_zero": (
        "NIGHT 0, MAFIA MEETING. Alive: {players}.\n"
        "This is the only time the Mafia talk privately. Agree with your partners on whom to shoot; the Don sets the order."
    ),
    "night_zero_don": (
        "NIGHT 0, MAFIA MEETING. Alive: {players}.\n"
        "This is the only time the Mafia talk privately. As the Don, set the order of shots for the coming nights. "
        "End with a line: ORDER: <name>, <name>, <name>"
    ),
    "mafia_talk": (
        "NIGHT {round}, MAFIA TALK. Alive: {players}.\n"
        "Only the Mafia hear this (turn {turn} of {turns}). Discuss tonight's shot with your partners in 1-3 sentences."
    ),
    "night_shot": (
        "NIGHT {round}. Alive: {players}.\nThe Don's order of shots: {order}.\n"
        "You shoot alone; the shot lands only if every living Mafia player picks the same player. "
        "End with a line: ACTION: Kill <name>"
    ),
    "night_don": (
        "NIGHT {round}. Alive: {players}.\nYour Don checks so far: {checks}.\n"
        "As the Don, check one player: are they the Sheriff? End with a line: ACTION: Check <name>"
    ),
    "speech_nominate": (
        "DAY {round}, YOUR SPEECH. Alive: {players}.\nNominated so far: {nominees}.\n"
        "Speak once, in character, 2-4 sentences. You may nominate one player for the vote: "
        "end with a line NOMINATE: <name> (or NOMINATE: nobody)."
    ),
    "open_floor": (
        "DAY {round}, OPEN FLOOR. Alive: {players}.\n{cue}"
        "Speak again in 1-3 sentences (turn {turn} of {turns}), or reply PASS to stay silent."
    ),
    "cue_named": "{names} named you.\n",
    "vote_nominees": (
        "DAY {round} VOTE. Alive: {players}.\nNominated: {nominees}. You may vote only for a nominee.\n"
        "Give a one-sentence final argument, then end with a line: VOTE: <name>"
    ),
    "revote": (
        "DAY {round} REVOTE. Alive: {players}.\nThe vote was tied between {nominees}; vote again, only among them.\n"
        "End with a line: VOTE: <name>"
    ),
    "remove_all": (
        "DAY {round}, SECOND TIE. Alive: {players}.\nThe vote is tied again between {nominees}. "
        "Should all of them leave the game? End with a line: VOTE: Yes or VOTE: No"
    ),
    "defence": (
        "DAY {round}, DEFENCE. Alive: {players}.\nThe vote is tied between {nominees}. Make your defence in 2-3 sentences."
    ),
    "last_words": (
        "LAST WORDS. Alive: {players}.\nYou are leaving the game ({how}). "
        "Say your last words in 1-3 sentences; you take no further part."
    ),
    "best_move": (
        "LAST WORDS. Alive: {players}.\nYou were the first player shot. Say your last words and name the three "
        "players you suspect most (the best move). End with a line: SUSPECTS: <name>, <name>, <name>"
    ),
    "how_vote": "voted out",
    "how_shot": "shot at night",
    "how_remove_all": "removed with the other tied players",
    "how_lone": "the only nominee",
    "obs_nomination": "{name} nominated {target}.",
    "obs_don_check": "DON CHECK RESULT: {target} is {verdict}.",
    "obs_shot_order": "[Mafia] The Don's order of shots: {order}.",
    "obs_passed": "{name} passed.",
    "verdict_sheriff": "the Sheriff",
    "verdict_not_sheriff": "not the Sheriff",
    "yes": "Yes",
    "no": "No",
    "pass_word": "PASS",
    "order_word": "ORDER",
    "none": "none",
    "no_order": "none agreed",
    "host_night_zero": "HOST: Night zero. The Mafia open their eyes and meet, for the only time.",
    "host_day": "HOST: Day {round}. The town wakes up.",
    "host_night": "HOST: Night {round}. The town falls asleep.",
    "host_killed": "HOST: {victim} was shot during the night.",
    "host_missed": "HOST: The night passed without a death.",
    "host_nominees": "HOST: Nominated for the vote: {nominees}.",
    "host_no_vote": "HOST: There is no vote today.",
    "host_lone": "HOST: {name} is the only nominee and leaves the game without a vote.",
    "host_eliminated": "HOST: {name} leaves the game by vote.",
    "host_tie": "HOST: The vote is tied between {nominees}.",
    "host_remove_all": "HOST: The town removes everyone tied: {nominees}.",
    "host_kept": "HOST: The town keeps {nominees}; nobody leaves today.",
    "host_open_floor": "HOST: The floor is open.",
    "host_game_over": "HOST: The game is over. {winner} win.",
    "winner_Mafia": "The Mafia",
    "winner_Villagers": "The town",
    "winner_Draw": "Nobody",
    "host_system": (
        "You are the host of a game of Mafia. You narrate in one or two short sentences; you decide nothing "
        "and never invent facts or reveal roles. Retell the host line you are given."
    ),
}

TEN_RU: dict[str, str] = {
    "rules_common": (
        "ПРАВИЛА (десять игроков): трое Мафии, один из них Дон, и семеро мирных, один из них Шериф. "
        "Мафия знает друг друга. Каждую ночь Мафия стреляет, Дон ищет Шерифа, а Шериф проверяет одного "
        "игрока на Мафию; результат узнаёт только проверяющий. Первый убитый называет трёх подозреваемых. "
        "Уходящий игрок говорит последнее слово. Роли раскрываются только в конце. Мирные побеждают, когда "
        "Мафии не осталось; Мафия — когда её не меньше, чем мирных."
    ),
    "rules_sport": (
        " Мафия договаривается только один раз, в нулевую ночь, где Дон задаёт порядок выстрелов; потом "
        "каждый мафиози стреляет сам, и выстрел попадает, только если все живые мафиози выбрали одного игрока. "
        "Днём каждый говорит один раз по порядку мест; в своей речи можно выставить кандидата, голосуют только "
        "за выставленных. В первый день голосования нет, если выставлено меньше двух; позже единственный "
        "кандидат уходит без голосования. При ничьей — переголосование среди равных; при второй ничьей — "
        "голосование да/нет за уход всех равных."
    ),
    "rules_open_table": (
        " День — свободное обсуждение: все говорят по разу по порядку мест, затем названные могут ответить, а "
        "любой может взять слово, до трёх раз каждый. В первый день голосования нет. Со второго дня голосуют "
        "за любого; при ничьей каждый из равных говорит оправдательную речь, затем повторное голосование. "
        "Мафия совещается каждую ночь и выбирает выстрел голосованием."
    ),
    "rules_imbalanced": (
        " Днём каждый говорит один раз по порядку мест, затем голосование за любого, с первого дня. "
        "Мафия совещается каждую ночь и выбирает выстрел голосованием."
    ),
    "rules_footer": "\nОтвечай коротко (2-4 предложения).",
    "night_zero": (
        "НОЧЬ 0, СХОДКА МАФИИ. Живы: {players}.\n"
        "Мафия совещается только сейчас. Договорись с партнёрами, в кого стрелять; порядок задаёт Дон."
    ),
    "night_zero_don": (
        "НОЧЬ 0, СХОДКА МАФИИ. Живы: {players}.\n"
        "Мафия совещается только сейчас. Как Дон, задай порядок выстрелов на следующие ночи. "
        "Закончи строкой: ПОРЯДОК: <имя>, <имя>, <имя>"
    ),
    "mafia_talk": (
        "НОЧЬ {round}, СОВЕЩАНИЕ МАФИИ. Живы: {players}.\n"
        "Это слышит только Мафия (ход {turn} из {turns}). Обсуди с партнёрами выстрел этой ночи в 1-3 предложениях."
    ),
    "night_shot": (
        "НОЧЬ {round}. Живы: {players}.\nПорядок выстрелов от Дона: {order}.\n"
        "Ты стреляешь сам; выстрел попадает, только если все живые мафиози выбрали одного игрока. "
        "Закончи строкой: ДЕЙСТВИЕ: Убить <имя>"
    ),
    "night_don": (
        "НОЧЬ {round}. Живы: {players}.\nТвои проверки Дона: {checks}.\n"
        "Как Дон, проверь одного игрока: Шериф ли он? Закончи строкой: ДЕЙСТВИЕ: Проверить <имя>"
    ),
    "speech_nominate": (
        "ДЕНЬ {round}, ТВОЯ РЕЧЬ. Живы: {players}.\nУже выставлены: {nominees}.\n"
        "Скажи речь в образе, 2-4 предложения. Можешь выставить одного игрока на голосование: "
        "закончи строкой ВЫСТАВЛЯЮ: <имя> (или ВЫСТАВЛЯЮ: никого)."
    ),
    "open_floor": (
        "ДЕНЬ {round}, СВОБОДНОЕ СЛОВО. Живы: {players}.\n{cue}"
        "Скажи ещё 1-3 предложения (ход {turn} из {turns}) или ответь ПАС, чтобы промолчать."
    ),
    "cue_named": "Тебя назвали: {names}.\n",
    "vote_nominees": (
        "ДЕНЬ {round}, ГОЛОСОВАНИЕ. Живы: {players}.\nВыставлены: {nominees}. Голосовать можно только за выставленных.\n"
        "Приведи последний довод одним предложением и закончи строкой: ГОЛОС: <имя>"
    ),
    "revote": (
        "ДЕНЬ {round}, ПЕРЕГОЛОСОВАНИЕ. Живы: {players}.\nНичья между: {nominees}; голосуй снова, только среди них.\n"
        "Закончи строкой: ГОЛОС: <имя>"
    ),
    "remove_all": (
        "ДЕНЬ {round}, ВТОРАЯ НИЧЬЯ. Живы: {players}.\nСнова ничья между: {nominees}. "
        "Должны ли все они покинуть игру? Закончи строкой: ГОЛОС: Да или ГОЛОС: Нет"
    ),
    "defence": (
        "ДЕНЬ {round}, ОПРАВДАТЕЛЬНАЯ РЕЧЬ. Живы: {players}.\nНичья между: {nominees}. "
        "Скажи оправдательную речь в 2-3 предложениях."
    ),
    "last_words": (
        "ПОСЛЕДНЕЕ СЛОВО. Живы: {players}.\nТы покидаешь игру ({how}). "
        "Скажи последнее слово в 1-3 предложениях; дальше ты не участвуешь."
    ),
    "best_move": (
        "ПОСЛЕДНЕЕ СЛОВО. Живы: {players}.\nТебя убили первым. Скажи последнее слово и назови трёх игроков, "
        "которых подозреваешь больше всего (лучший ход). Закончи строкой: ПОДОЗРЕВАЮ: <имя>, <имя>, <имя>"
    ),
    "how_vote": "изгнан голосованием",
    "how_shot": "убит ночью",
    "how_remove_all": "вместе с другими равными",
    "how_lone": "единственный кандидат",
    "obs_nomination": "{name} выставил(а) {target}.",
    "obs_don_check": "РЕЗУЛЬТАТ ПРОВЕРКИ ДОНА: {target} — {verdict}.",
    "obs_shot_order": "[Мафия] Порядок выстрелов от Дона: {order}.",
    "obs_passed": "{name} промолчал(а).",
    "verdict_sheriff": "Шериф",
    "verdict_not_sheriff": "не Шериф",
    "yes": "Да",
    "no": "Нет",
    "pass_word": "ПАС",
    "order_word": "ПОРЯДОК",
    "none": "нет",
    "no_order": "не задан",
    "host_night_zero": "ВЕДУЩИЙ: Нулевая ночь. Мафия просыпается и знакомится — единственный раз.",
    "host_day": "ВЕДУЩИЙ: День {round}. Город просыпается.",
    "host_night": "ВЕДУЩИЙ: Ночь {round}. Город засыпает.",
    "host_killed": "ВЕДУЩИЙ: Ночью убит(а) {victim}.",
    "host_missed": "ВЕДУЩИЙ: Ночь прошла без жертв.",
    "host_nominees": "ВЕДУЩИЙ: На голосование выставлены: {nominees}.",
    "host_no_vote": "ВЕДУЩИЙ: Сегодня голосования нет.",
    "host_lone": "ВЕДУЩИЙ: {name} — единственный кандидат и покидает игру без голосования.",
    "host_eliminated": "ВЕДУЩИЙ: {name} покидает игру по итогам голосования.",
    "host_tie": "ВЕДУЩИЙ: Ничья между: {nominees}.",
    "host_remove_all": "ВЕДУЩИЙ: Город выводит всех равных: {nominees}.",
    "host_kept": "ВЕДУЩИЙ: Город оставляет {nominees}; сегодня никто не уходит.",
    "host_open_floor": "ВЕДУЩИЙ: Слово свободно.",
    "host_game_over": "ВЕДУЩИЙ: Игра окончена. Победа: {winner}.",
    "winner_Mafia": "Мафия",
    "winner_Villagers": "город",
    "winner_Draw": "никто",
    "host_system": (
        "Ты ведущий игры в Мафию. Ты рассказываешь одним-двумя короткими предложениями, ничего не решаешь, "
        "не выдумываешь фактов и не раскрываешь роли. Перескажи данную тебе реплику ведущего."
    ),
}

TEN_REASONS_EN = {
    "too_few_nominees": "fewer than two nominees on day 1",
    "no_nominees": "no one was nominated",
    "remove_all_rejected": "the town kept the tied players",
    "second_tie": "the vote was tied again",
}
TEN_REASONS_RU = {
    "too_few_nominees": "в первый день выставлено меньше двух",
    "no_nominees": "никто не выставлен",
    "remove_all_rejected": "город оставил равных",
    "second_tie": "снова ничья",
}
