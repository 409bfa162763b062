"""Words that make a protocol line something other than a cast vote (English and Russian).

Used by :mod:`.parsing` on the text after the name of a ``VOTE:``/``ГОЛОС:`` line, on the
line before it and on the reply after it. Each pattern is one kind of cue (docs/parsing.md
lists them with examples); they are data for the reader, kept apart from its structure.
"""

from __future__ import annotations

import re

# words running on from the name (no delimiter between) that undo the vote: negation, condition, past
HEDGE = re.compile(
    r"(?<![\w'’])(?:not|never|no|nor|\w+n['’]t|if|unless|would|could|might|may|should|maybe|perhaps|possibly"
    r"|was|were|had|did|voted|yesterday|earlier|last|before|previously"
    r"|не|ни|нет|если|бы|может|возможно|наверное|вчера|раньше|ранее|был|была|было|были|голосовал\w*|прошл\w*)(?![\w'’])",
    re.I,
)
# a clause after the name that opens with these makes the vote conditional or one of several
ALTERNATIVE = re.compile(
    r"^(?:if|unless|otherwise|or|no,?\s+wait|wait|actually|i\s+mean|rather|correction"
    r"|если|или|либо|разве|хотя\s+нет|нет,?\s+стоп|стоп|точнее|вернее)(?!\w)",
    re.I,
)
# the speaker's own earlier vote mentioned on the marker line: "VOTE: Gray (that was my vote yesterday)"
PAST_VOTE = re.compile(
    r"(?=.*(?<!\w)(?:my\s+vote|i\s+voted|мой\s+голос|я\s+(?:про)?голосовал\w*))"
    r"(?=.*(?<!\w)(?:was|were|yesterday|last\s+(?:round|night|day|time)|earlier|before|previous\w*"
    r"|был\w?|вчера|прошл\w+|ранее|раньше)(?!\w))",
    re.I | re.S,
)
RETRACT = re.compile(
    r"(?<!n't )(?<!not )(?<!never )changed my mind|take (?:that|it) back|no,? wait|wait\W+no(?!\w)|hold on|хотя нет|погоди\w*|беру (?:свои слова )?назад|scratch that|on second thought|never ?mind|ignore (?:that|this|the line|my vote)|just kidding|joking|kidding|(?<!\w)jk(?!\w)|шучу|шутка"
    r"|disregard (?:that|this|the above|my)|not my (?:real |actual |final )?vote|передумал|забудьте|отменяю|не мой (?:настоящий |итоговый )?голос|не считается",
    re.I,
)
# a line that ends by leading into a quoted line: "Dana's last line was" / VOTE: Casey
LEADS_INTO = re.compile(r"(?<!\w)(?:was|were|wrote|writes|said|says|posted|ended with|reads|like|написал\w*|сказал\w*|был\w?)$", re.I)
# a line before a marker line that presents it as someone's (or a hypothetical) line
QUOTE_INTRO = re.compile(
    r"(?<!\w)(?:wrote|writes|said|says|posted|ended with|line was|reply was|example|like this|e\.g\.|for instance|such as"
    r"|quote|quoting|yesterday|last round|past|previous\w*|earlier|history|if|would|imagine|suppose|let's say|say (?:I|we)|hypothetic\w*"
    r"|написал\w*|пишет|сказал\w*|например|вот так|цитат\w*|вчера|прошл\w*|ранее|история|если|бы|представ\w+|предположим|допустим|гипотетич\w*)(?!\w)",
    re.I,
)
# after "Name's": words that read as "Name is ..." (a vote), not as "Name's alibi" (a possessive)
# doubt on the marker line itself: "VOTE: Finley, not sure", "ГОЛОС: Финли, не знаю"
UNSURE = re.compile(
    r"(?<!\w)(?:not (?:\w+ )?sure|unsure|(?:don't|do not) know|dunno|can'?not decide|can't decide|undecided|no idea"
    r"|не знаю|не уверен\w*|сомневаюсь|не решил\w*)(?!\w)",
    re.I,
)
# a hedge opening the words after the name: "VOTE: Harper (maybe)", "VOTE: Jordan pending his answer"
HEDGE_FIRST = re.compile(
    r"^(?:maybe|perhaps|probably|possibly|tentative\w*|pending|i guess|наверное|возможно|может быть|пожалуй|вероятно)(?!\w)",
    re.I,
)
# a condition anywhere on the marker line: "VOTE: Ellis, but only if nobody claims"
CONDITION = re.compile(
    r"(?<!\w)(?:if|unless|assuming|provided|supposing|in case|as long as|если|разве что|при условии|в случае|допустим|предположим)(?!\w)",
    re.I,
)
# set phrases with "if" that condition nothing: "VOTE: Jordan — if I'm wrong, blame me", "если честно"
IDLE_IF = re.compile(
    r"(?<!\w)(?:if (?:you ask me|i'?m wrong|i am wrong|i'?m mistaken|i turn out wrong|anyone asks|you must know)"
    r"|если (?:честно|что|я ошибаюсь|я ошибусь|ошибусь))(?!\w)",
    re.I,
)
# the line is an example, a test or a hypothetical, not a cast vote: "VOTE: Harper, in theory"
NOT_REAL = re.compile(
    r"(?<!\w)(?:in theory|theoretically|hypothetic\w*|for example|as an example|for instance|just testing|testing|in another world"
    r"|pretend\w*|теоретически|в теории|гипотетич\w*|для примера|например|понарошку|проверка формата|в другом мире)(?!\w)",
    re.I,
)
# a short clause after the name that dates the line to an earlier round: "VOTE: Ellis (last round)"
EARLIER = re.compile(
    r"^\W*(?:(?:that was |it was )?(?:yesterday|earlier|previously|before|last (?:round|night|day|time)|(?:on )?day (?:one|1))"
    r"|вчера|ранее|раньше|в прошлом раунде|в прошлый раз)\W*$",
    re.I,
)
# words right before another player that offer them instead: "Gray, or maybe Jordan", "Грей, а может Джордан"
ALT_BEFORE = re.compile(
    r"(?<!\w)(?:or|maybe|perhaps|no|или|либо|может|возможно|точнее|вернее|нет)(?!\w)\W*(?:\w+\W+)?$", re.I
)
CONTRACTION_OK = {"the", "a", "an", "my", "our", "it", "mafia", "scum", "guilty", "sus", "suspicious", "been", "got", "gotta",
                   "definitely", "clearly", "obviously", "surely", "too", "so", "just", "always", "lying", "hiding"}  # fmt: skip
ING_NOUNS = {"reasoning", "thinking", "voting", "timing", "wording", "posting", "thing", "nothing", "something", "everything"}
# reasons open a new clause: "VOTE: Logan because he wasn't straight"
REASON = re.compile(r"(?<!\w)(?:because|since|cause|потому|так как|ибо|ведь)(?!\w)", re.I)
