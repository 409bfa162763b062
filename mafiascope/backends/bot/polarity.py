"""Which way a custom probe's question points: at the players the seat trusts or at those it
suspects (docs/bots.md, "Custom probes").

A declared schema says what an answer holds (a player, a probability ...), not whom it is about:
"Which player do you trust most?" and "Who is most likely Mafia?" both declare ``player``. The bot
reads the direction from the question's words (English and Russian), a negation or "least" right
next to a word turning it round ("trust least" asks for a suspect, "least suspicious" for a trusted
player). A question that points both ways ("Whom do you trust and whom do you suspect?") is read
field by field from the field names (``trusted``, ``suspect``); a question or field with no such
word has no direction, and the bot's answer to it is marked as not meaningful.
"""

from __future__ import annotations

import re

TRUST, SUSPECT = "trust", "suspect"

_TRUST_WORDS = (
    r"trust\w*|innocent|town|townie\w*|cleared?|safe|safest|ally|allies|friend\w*|rely|reliable|honest\w*|vouch\w*"
    r"|defend\w*|protect\w*|believe\s+in|on\s+your\s+side|good\s+guy\w*"
    r"|довер\w*|невинов\w*|мирн\w*|чист\w*|союзник\w*|друг\w*|друзья|честн\w*|надёжн\w*|надежн\w*|полага\w*"
    r"|защит\w*|на\s+твоей\s+стороне|на\s+вашей\s+стороне"
)
_SUSPECT_WORDS = (
    r"suspect\w*|suspicious\w*|suspicion\w*|mafia\w*|mafioso|threat\w*|danger\w*|lie|lies|liar\w*|lying|guilty|scum\w*"
    r"|eliminat\w*|vote\s+out|evil|deceiv\w*|decept\w*|wolf|wolves|enem\w*|distrust\w*|mistrust\w*|sketch\w*|shady"
    r"|подозр\w*|мафи\w*|угроз\w*|опасн\w*|лж\w*|лгун\w*|вр[её]т|виновн\w*|враг\w*|устран\w*|исключ\w*|обман\w*"
)
_CUE = re.compile(rf"(?<!\w)(?:(?P<trust>{_TRUST_WORDS})|(?P<suspect>{_SUSPECT_WORDS}))(?!\w)", re.I)
# words that turn a cue round: "not trust", "least suspicious", "trust ... least", "не доверяешь", "меньше всего"
_BEFORE_TURN = re.compile(
    r"(?<!\w)(?:not|n't|never|least|fewest|lowest|no\s+longer|не|ни|наименее|менее|меньше(?:\s+всего)?)(?:\W+\w+){0,2}?\W*$", re.I
)
_AFTER_TURN = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:least|the\s+least|меньше\s+всего|наименее)(?!\w)", re.I)


def direction(text: str) -> str | None:
    """TRUST or SUSPECT when every cue of ``text`` points one way, "both" when they disagree, None when
    there is none."""
    found = set()
    for m in _CUE.finditer(text):
        pol = TRUST if m.group("trust") else SUSPECT
        turned = bool(_BEFORE_TURN.search(text[max(0, m.start() - 40) : m.start()])) ^ bool(
            _AFTER_TURN.match(text[m.end() : m.end() + 40])
        )
        if m.group(0).lower().startswith(("distrust", "mistrust")):
            turned = bool(_BEFORE_TURN.search(text[max(0, m.start() - 40) : m.start()]))
        found.add((SUSPECT if pol == TRUST else TRUST) if turned else pol)
    if not found:
        return None
    return found.pop() if len(found) == 1 else "both"


def field_direction(question: str, field: str) -> str | None:
    """The direction of one answer field: the question's when it points one way, else the field name's
    (``most_trusted``, ``top_suspect``); None when neither says."""
    q = direction(question)
    if q in (TRUST, SUSPECT):
        return q
    name = direction(re.sub(r"[_\W]+|(?<=[a-z])(?=[A-Z])", " ", field))
    return name if name in (TRUST, SUSPECT) else None
