"""Reading speech: who accuses or defends whom, and how a speaker's style looks.

Works on bot speech and on free LLM speech, English and Russian. Each suspicion or trust
cue (a phrase) is attributed to the nearest player name in its sentence; a cue in a
sentence without names falls back on the single name of the previous sentence
("Harper jumped on me. That is suspicious.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .reader import find_names

# (regex, weight): weight > 0 = suspicion, < 0 = trust, 0 = consumes a phrase that is neither
_CUES: list[tuple[str, float]] = [
    # English: neutral phrases that would otherwise read as cues
    (r"the mafia (?:killed|kill|took out|targeted|went after|chose|picked|wants?|would)", 0.0),
    (r"killed by (?:the )?mafia|if i were (?:the )?mafia|mafia (?:partner|team)s?\b", 0.0),
    # English: negated forms first (leftmost match wins)
    (r"(?:is ?n[o']t|not|never|hardly) (?:the )?(?:mafia|suspicious|sus|lying|a liar|guilty)", -0.9),
    (r"(?:don'?t|do not|no reason to) suspect", -0.8),
    (r"(?:don'?t|do not|can'?t|cannot|won'?t) (?:trust|believe)", 0.8),
    (r"not (?:innocent|convinced|buying)|doesn'?t add up|don'?t buy", 0.7),
    (r"(?:is|are|be|as|looks?|seems?|smells?) (?:like )?(?:the |a )?mafia|mafia member|scum\w*", 1.0),
    (r"suspici\w*|suspect\w*|\bsus\b|lying|liar|lied|guilty|red flags?", 1.0),
    (r"vot(?:e|ing|ed) (?:for|out|against)|eliminate|get rid of|lynch", 1.0),
    (r"deflect\w*|shady|fishy|evasive|inconsistent|doubt\w*|manipulat\w*|dodg\w*|hiding", 0.6),
    (r"push(?:ed|ing)? (?:hard )?on|jump(?:ed|ing)? on|piling on|bandwagon\w*|calculated|sketchy", 0.5),
    (r"weird|odd\b|strange|too quiet|quiet one|off about|watch\w* (?:closely|carefully)", 0.35),
    (r"\bmafia\b", 0.4),
    (r"not mafia|innocent|townie|\btown\b|cleared?\b|vouch\w*|on our side|on my side", -0.8),
    (r"\btrust\w*|believe\w*|honest\w*|genuine\w*|sincere", -0.6),
    (r"agree(?:d)? with|good point|makes sense|reasonable|solid|defend\w*|stand with|with you", -0.5),
    # Russian
    (r"мафия (?:убила|убили|выбрала|целилась|хочет|будет)|убит\w* мафией|если бы я был\w* мафией", 0.0),
    (r"не (?:мафия|мафией|мафиози|похож\w* на мафию|подозр\w*|врёт|врет|лжёт|лжет|виноват\w*)", -0.9),
    (r"не (?:доверяю|верю|убедил\w*)|не сходится", 0.8),
    (r"подозр\w*|мафиоз\w*|явля\w* мафией|врёт|врет|лжёт|лжет|лжец\w*|вран\w*|ложь|красн\w* флаг\w*", 1.0),
    (r"(?:голосую|голосовать|проголосую|проголосовал\w*|голос) (?:за|против)|изгна\w*|выгна\w*|убрать", 1.0),
    (r"перевод\w* стрелки|увод\w*|увилива\w*|уклон\w*|манипул\w*|сомнева\w*|сомнени\w*|мутн\w*", 0.6),
    (r"давит|давил\w*|набросил\w*|нападает|напал\w*|странн\w*|слишком тих\w*|молчит", 0.4),
    (r"\bмафи\w*", 0.4),
    (r"невинов\w*|мирн\w*|чист\w*|на нашей стороне|ручаюсь", -0.8),
    (r"доверя\w*|верю|честн\w*|искренн\w*", -0.6),
    (r"соглас\w* с|логичн\w*|разумн\w*|защищ\w*|поддерживаю", -0.5),
]
_CUE_RX = re.compile("|".join(f"(?P<c{i}>{rx})" for i, (rx, _) in enumerate(_CUES)), re.I)
_SENT_RX = re.compile(r"[^.!?\n]+[.!?]*")

_STYLE = {
    "soft": r"\bmaybe\b|\bmight\b|\bperhaps\b|\bsorry\b|i could be wrong|no offen[cs]e|\bplease\b|gently|i feel"
    r"|может быть|возможно|пожалуй|извин\w*|мне кажется|не хочу обидеть|пожалуйста",
    "harsh": r"frankly|obviously|clearly|ridiculous|nonsense|come on|wake up|enough\b|no excuses"
    r"|очевидно|ерунд\w*|чушь|явно|хватит|давайте честно",
    "struct": r"\bfirst(?:ly)?\b|\bsecond(?:ly)?\b|\bfinally\b|to sum up|\bstep\b|^\s*\d[.)]|point by point"
    r"|во-первых|во-вторых|итак|в итоге|по порядку",
    "anx": r"nervous|worried|anxious|scared|panic\w*|uneasy|on edge|oh no|freaking|afraid"
    r"|нервн\w*|боюсь|тревож\w*|волну\w*|страшно|паник\w*|не по себе",
    "open": r"angle|what if|theory|interesting|imagine|alternatively|another way|curious|creative|wild guess"
    r"|интересн\w*|а что если|теори\w*|с другой стороны|представ\w*|верси\w*|любопытн\w*",
}
_STYLE_RX = {k: re.compile(v, re.I | re.M) for k, v in _STYLE.items()}


@dataclass(frozen=True)
class Style:
    words: int = 0
    excl: int = 0
    questions: int = 0
    soft: int = 0
    harsh: int = 0
    struct: int = 0
    anx: int = 0
    open: int = 0


@lru_cache(maxsize=4096)
def style_of(text: str) -> Style:
    return Style(
        words=len(text.split()),
        excl=text.count("!"),
        questions=text.count("?"),
        **{k: len(rx.findall(text)) for k, rx in _STYLE_RX.items()},
    )


def analyse(text: str, speaker: str, players: tuple[str, ...]) -> list[tuple[str, float]]:
    """(target, polarity) per cue: polarity > 0 suspicion of target, < 0 trust in target."""
    return list(_analyse(text, speaker, players))


@lru_cache(maxsize=4096)
def _analyse(text: str, speaker: str, players: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    mentions = [(pos, n) for pos, n in find_names(text, players) if n != speaker]
    if not mentions:
        return ()
    out: list[tuple[str, float]] = []
    prev_names: list[str] = []
    for sm in _SENT_RX.finditer(text):
        a, b = sm.span()
        names = [(pos, n) for pos, n in mentions if a <= pos < b]
        sentence = text[a:b]
        for cm in _CUE_RX.finditer(sentence):
            w = _CUES[int(cm.lastgroup[1:])][1]  # type: ignore[index]
            if w == 0.0:
                continue
            pos = a + cm.start()
            if names:
                target = min(names, key=lambda x: abs(x[0] - pos))[1]
                out.append((target, w))
            elif len(prev_names) == 1:
                out.append((prev_names[0], w * 0.5))
        if names:
            prev_names = sorted({n for _, n in names})
        elif sentence.strip():
            prev_names = prev_names if len(sentence) < 60 else []
    return tuple(out)


def net_cues(text: str, speaker: str, players: tuple[str, ...], cap: float = 2.0) -> dict[str, float]:
    """Net polarity per target for one message, clipped to +-cap."""
    acc: dict[str, float] = {}
    for t, w in _analyse(text, speaker, players):
        acc[t] = acc.get(t, 0.0) + w
    return {t: max(-cap, min(cap, v)) for t, v in acc.items() if abs(v) > 1e-9}
