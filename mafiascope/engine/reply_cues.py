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
    r"(?<!n't )(?<!not )(?<!never )(?<!nothing has )(?<!nothing's )(?<!hasn't )(?<!has not )changed my mind|take (?:that|it) back|no,? wait|wait\W+no(?!\w)|hold on|хотя нет|погоди\w*|беру (?:свои слова )?назад|scratch that|on second thought|never ?mind|ignore (?:that|this|the line|my vote)|just kidding|joking|kidding|(?<!\w)jk(?!\w)|шучу|шутка"
    r"|disregard (?:that|this|the above|my)|not my (?:real |actual |final )?vote|передумал|забудьте|отменяю|не мой (?:настоящий |итоговый )?голос|не считается",
    re.I,
)
# a line that ends by leading into a quoted line: "Dana's last line was" / VOTE: Casey
LEADS_INTO = re.compile(
    r"(?<!\w)(?:was|were|wrote|writes|said|says|posted|ended with|reads|like|написал\w*|сказал\w*|был\w?)$", re.I
)
# a line before a marker line that presents it as someone's (or a hypothetical) line
QUOTE_INTRO = re.compile(
    r"(?<!\w)(?:wrote|writes|said|says|told|posted|ended with|line was|reply was|example|like this|e\.g\.|for instance|such as"
    r"|quote|quoting|yesterday|last round|past|previous\w*|earlier|history|if|would|imagine|suppose|let's say|say (?:I|we)|hypothetic\w*"
    r"|написал\w*|пишет|сказал\w*|например|вот так|цитат\w*|вчера|прошл\w*|ранее|история|если|бы|представ\w+|предположим|допустим|гипотетич\w*)(?!\w)",
    re.I,
)
# reported speech before a colon: the words after it are someone else's even past a sentence end
SPEECH_INTRO = re.compile(
    r"(?<!\w)(?:wrote|writes|said|says|told|posted|ended with|line was|reply was|quote|quoting"
    r"|написал\w*|пишет|сказал\w*|цитат\w*)(?!\w)",
    re.I,
)
# after "Name's": words that read as "Name is ..." (a vote), not as "Name's alibi" (a possessive)
# doubt on the marker line itself: "VOTE: Finley, not sure", "ГОЛОС: Финли, не знаю"
UNSURE = re.compile(
    r"(?<!\w)(?:not (?:\w+ )?sure|unsure|(?:don't|do not) know|dunno|can'?not decide|can't decide|undecided|no idea"
    r"|or maybe not|maybe not|а может и нет|а может быть и нет|still thinking|still deciding|ещё думаю|еще думаю|пока думаю"
    r"|not final|not set in stone|not locked in|subject to change|не окончательн\w*|не точно|может измениться"
    r"|не знаю|не уверен\w*|сомневаюсь|не решил\w*)(?!\w)",
    re.I,
)
# the words after the name take the vote back at once: "VOTE: Dana... not.", "I'm voting for Dana. Nope."
NEGATED_AFTER = re.compile(r"^(?:not|nope|nah|psych)(?:\W*$|\W+(?:really|yet|today|now|anymore)(?!\w))", re.I)
# another player offered right after the vote, in the next sentence: "I'm voting for Dana. Or Logan."
ALT_NEXT = re.compile(
    r"^[\s*_`)\]]*(?:or|or\s+maybe|maybe|perhaps|possibly|или|ну\s+или|либо|а\s+может(?:\s+быть)?)(?!\w)\W*(?:[\w'’]+\W+){0,2}?",
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
ALT_BEFORE = re.compile(r"(?<!\w)(?:or|maybe|perhaps|no|или|либо|может|возможно|точнее|вернее|нет)(?!\w)\W*(?:\w+\W+)?$", re.I)
CONTRACTION_OK = {"the", "a", "an", "my", "our", "it", "mafia", "scum", "guilty", "sus", "suspicious", "been", "got", "gotta",
                   "definitely", "clearly", "obviously", "surely", "too", "so", "just", "always", "lying", "hiding"}  # fmt: skip
ING_NOUNS = {"reasoning", "thinking", "voting", "timing", "wording", "posting", "thing", "nothing", "something", "everything"}
# reasons open a new clause: "VOTE: Logan because he wasn't straight"
REASON = re.compile(r"(?<!\w)(?:because|since|cause|потому|так как|ибо|ведь)(?!\w)", re.I)

# ----------------------------------------------------------------------------- stated votes (stated_votes.py)
# words allowed between "I" and the vote verb: "I'm definitely voting for", "Я всё-таки голосую за"
STATED_ADVERBS = frozenset(
    "also now still definitely certainly officially firmly hereby therefore thus then again finally ultimately really "
    "absolutely honestly obviously clearly gladly happily confidently reluctantly unfortunately sadly proudly formally "
    "personally just simply today too so fully publicly openly once hence unhesitatingly instead "
    "сегодня теперь всё-таки все-таки тоже также однозначно уверенно точно твёрдо твердо опять снова лично решительно "
    "окончательно уже всё все итак поэтому поэтому-то тогда значит сейчас открыто честно".split()
)
# between "I" and the verb, these make the statement tentative: "I'm probably voting for Dana"
STATED_HEDGES = frozenset(
    "probably maybe perhaps likely possibly tentatively kinda leaning guess think suppose "
    "наверное пожалуй возможно вероятно видимо думаю кажется может".split()
)
# between "I" and the verb, these negate it: "I'm not voting for Dana", "Я не голосую за Дану"
STATED_NEGATIONS = frozenset("not never no longer n't не ни нет".split())
# a clause before the statement that conditions it or makes it an antecedent: "If Logan claims, I vote Dana"
STATED_CONDITION = re.compile(
    r"(?<!\w)(?:if|unless|when|whenever|once|whether|until|till|suppose|supposing|assuming|provided|in case|as long as"
    r"|imagine|pretend\w*|what if|even if|let's say|let us say|^\W*say"
    r"|если|когда|как только|пока|разве|при условии|в случае|допустим|предположим|представ\w+|вдруг|лишь бы)(?!\w)",
    re.I,
)
# a condition word right before the subject: the statement is the condition itself ("If I vote for Dana, ...")
STATED_ANTECEDENT = re.compile(
    r"(?<!\w)(?:if|unless|when|whenever|once|whether|until|suppose|supposing|imagine|what if|even if|say|let's say"
    r"|если|когда|как только|пока|допустим|предположим|вдруг)\W*$",
    re.I,
)
# the statement belongs to another round: "Yesterday I voted", "I'll vote for Dana tomorrow"
STATED_OTHER_ROUND = re.compile(
    r"(?<!\w)(?:yesterday|tomorrow|last (?:round|night|day|time|vote)|next (?:round|day|time|vote)|previous round|later"
    r"|earlier|previously|on day (?:one|two|1|2)|in round \d|round (?:one|two|1|2)|the other day"
    r"|вчера|завтра|раньше|ранее|позже|потом|в прошл\w+|на прошл\w+|в следующ\w+|на следующ\w+|в другой раз)(?!\w)",
    re.I,
)
# a question word or an auxiliary right before the subject: "Would I vote Gray?", "Why do I vote for Dana"
STATED_AUX_BEFORE = re.compile(
    r"(?<!\w)(?:would|should|could|can|do|does|did|shall|will|might|must|may|why|how|where|whom?|what|"
    r"разве|неужели|зачем|почему|как|ли)\W*$",
    re.I,
)
# someone reports, believes or predicts the statement: "Dana thinks I'm voting for Logan", "Финли думает, что я голосую"
STATED_EMBEDDING = re.compile(
    r"(?<!\w)(?:thinks?|thought|believes?|believed|assumes?|assumed|says|said|claims?|claimed|pretends?|expects?|expected"
    r"|suspects?|suspected|wonders?|wondered|knows|knew|hopes|hoped|wish(?:es)?|bet|feels?|seems?|means|told|accuse[sd]?"
    r"|heard|hears|predicts?|predicted|insists?|insisted|implies|implied|wrote|writes|posted|asks?|asked|guess(?:es)?"
    r"|insisting|saying|claiming|thinking|assuming|suggesting|implying|pretending|hinting|believing|telling\s+\w+"
    r"|думает|думаешь|думаете|думают|думал\w*|кажется|считает|считаешь|считаете|считают|сказал\w*|говорит|говоришь"
    r"|говорят|пишет|написал\w*|надеется|надеются|уверен\w*|утверждает|спрашивает|ждёт|ждет|ждут|намекает"
    r"|думаю|считаю|полагаю|надеюсь|думайте|думай|считайте|считай|надейтесь|ждите|рассчитывайте"
    r"|think|believe|assume|say|claim|expect|know|suspect|pretend|imagine|guess|tell)(?:\W*(?:that|что|будто|мол))?\W*(?:я\W*)?$",
    re.I,
)
# the speaker's own hedge before the statement: "I think I'm voting for Dana", "Мне кажется, голосую за Дану"
STATED_OWN_EMBEDDING = re.compile(
    r"(?:(?<![\w'’])(?:I|я)\s+[\w'’]+|(?<!\w)(?:думаю|считаю|полагаю|надеюсь))(?:\W*(?:that|что))?\W*(?:я\W*)?$", re.I
)
STATED_OWN_HEDGE = re.compile(
    r"(?<!\w)(?:i (?:think|guess|suppose|believe|feel like|reckon|figure)|i'd say|probably|maybe|perhaps|likely|possibly"
    r"|for now|at least for now|tentatively|leaning|i'm leaning|kind of|sort of"
    r"|думаю|мне кажется|наверное|пожалуй|возможно|вероятно|видимо|скорее всего|может быть|может|пока что)(?!\w)",
    re.I,
)
# an example or a hypothetical anywhere before the statement in its sentence
STATED_NOT_REAL = re.compile(
    r"(?<!\w)(?:for example|for instance|e\.g\.|in theory|theoretically|hypothetic\w*|as an example|such as|like this"
    r"|например|к примеру|теоретически|гипотетич\w*|для примера|в теории)(?!\w)",
    re.I,
)
# a negation in the statement's own clause before the subject: "Don't think I'm voting", "It's not that I vote"
STATED_NEGATED_CLAUSE = re.compile(
    r"(?<!\w)(?:not|never|no|nobody|no one|neither|nor|\w+n't|as if|like hell|in your dreams"
    r"|не|ни|нет|никто|никогда|как будто|ещё чего|еще чего)(?!\w)",
    re.I,
)
# words after the target that keep the sentence a plain statement: "I'm voting for Dana today", "... again"
STATED_TAIL_OK = re.compile(
    r"^\W*(?:today|now|right now|this round|this time|this time around|tonight|for today|here|again|too|as well|instead"
    r"|once more|without hesitation|with confidence|with conviction|for sure|no question|no doubt|out|then|and that's final"
    r"|сегодня|сейчас|теперь|снова|опять|тоже|в этот раз|в этом раунде|без колебаний|однозначно|окончательно)(?!\w)",
    re.I,
)
# the statement is sarcastic or put in another's mouth: "Ещё чего, голосую за Эллиса, как же", "as Harper would say"
STATED_NOT_MEANT = re.compile(
    r"(?<!\w)(?:yeah,? right|sure,? sure|as \w+ (?:would|might|will) (?:say|put it)|as \w+ (?:said|says|put it)|so to speak"
    r"|ещё чего|еще чего|как же|ага,? конечно|как бы сказал\w*|как сказал\w*|как говорит|как выразил\w*)(?!\w)",
    re.I,
)
# the vote is a habit, not this day's decision: "I vote for Alex in every game", "Я всегда голосую за ..."
STATED_HABIT = re.compile(
    r"(?<!\w)(?:every (?:game|time|round|day|single time)|in every game|always|usually|each time|whenever"
    r"|каждый раз|в каждой игре|всегда|обычно)(?!\w)",
    re.I,
)
# undecided right after a vote: "VOTE: Dana. I haven't decided anything."
STILL_UNDECIDED = re.compile(
    r"^\W*(?:(?:but\s+)?i\s+(?:haven['’]t|have\s+not|still\s+haven['’]t)\s+(?:decided|made\s+up\s+my\s+mind)|i['’]m\s+still\s+undecided"
    r"|(?:но\s+)?я\s+(?:ещё|еще|пока)\s+не\s+решил\w*)(?!\w)",
    re.I,
)
