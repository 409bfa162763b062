"""How a player's name is written and read: case-folded, in Russian case forms and Cyrillic
spellings (lexicon.names), possessive; and the lenient match of a free-text fragment (a probe
answer's name field, a speech token) to one of the living names. The strict reading of
protocol lines (``VOTE: X``) is parsing.py's.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from ..lexicon.names import RUSSIAN_SPELLINGS

END = r"(?![^\W_])"  # end of a word; '_' is Markdown here (__VOTE__), not a letter

# Latin names of the name pool as Russian speakers write them (folded Cyrillic -> folded Latin).
_CYRILLIC = {cyr.lower(): latin.lower() for latin, spellings in RUSSIAN_SPELLINGS.items() for cyr in spellings}

NONE_WORDS = {"none", "nobody", "no one", "noone", "abstain", "skip", "никого", "никто", "воздерживаюсь", "пропуск"}


def fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return text.replace("ё", "е")


def declined(base: str) -> list[str]:
    """Russian case forms of a Cyrillic name (nominative first); indeclinable names give one form.

    A final -ел/-ев loses its vowel (Павел -> Павла, Лев -> Льва); both stems are kept, since an
    unused form costs nothing and some such names keep the vowel."""
    if re.fullmatch(r"[а-я]*[бвгджзклмнпрстфхцчшщ]е[лв]", base):
        fleeting = base[:-2] + ("ь" if len(base) == 3 else "") + base[-1]
        return [base] + [stem + e for stem in (fleeting, base) for e in ("а", "у", "ом", "е")]
    if len(base) < 4 or not re.fullmatch(r"[а-я]+", base):
        return [base]
    last, stem = base[-1], base[:-1]
    if last == "й":
        return [base] + [stem + e for e in ("я", "ю", "ем", "е")]
    if last == "ь":
        return [base] + [stem + e for e in ("я", "ю", "ем", "е")]
    if last == "а":
        return [base] + [stem + e for e in ("ы", "и", "е", "у", "ой", "ою")]
    if last == "я":
        return [base] + [stem + e for e in ("и", "е", "ю", "ей", "ею")]
    if last in "иоуеыэю":
        return [base]
    return [base] + [base + e for e in ("а", "у", "ом", "е")]


@lru_cache(maxsize=256)
def name_forms(names: tuple[str, ...]) -> tuple[re.Pattern[str], tuple[tuple[str, str], ...]]:
    """One pattern matching any written form of any candidate at the start of a fragment.

    Group ``g<i>`` matched -> ``table[i]`` = (candidate, how it was written). Longer forms
    come first so ``Logana`` is not read as ``Logan`` + ``a``.
    """
    forms: list[tuple[str, str, str]] = []  # (folded form regex, name, note)
    for name in names:
        base = fold(name).strip()
        if not base:
            continue
        tokens = r"\s+".join(re.escape(t) for t in base.split())
        forms.append((tokens, name, "exact"))
        forms.append((tokens + r"['’]s", name, "possessive"))
        if base.endswith("s"):
            forms.append((tokens + r"['’]", name, "possessive"))
        if re.fullmatch(r"[a-z]+", base) and base[-1] not in "aeiouy":
            forms.append((tokens + r"['’-]?(?:а|у|ом|е)", name, "russian inflection"))
        spellings = [c for c, latin in _CYRILLIC.items() if latin == base] or ([base] if re.fullmatch(r"[а-я]+", base) else [])
        for cyr in spellings:
            for i, form in enumerate(declined(cyr)):
                note = "russian inflection" if i else ("exact" if cyr == base else "transliteration")
                forms.append((re.escape(form), name, note))
    forms.sort(key=lambda f: len(f[0]), reverse=True)
    pattern = "|".join(f"(?P<g{i}>{rx})" for i, (rx, _, _) in enumerate(forms))
    table = tuple((n, note) for _, n, note in forms)
    return re.compile(rf"(?:{pattern or '(?!)'}){END}", re.I), table


def name_at(fragment: str, names: list[str]) -> tuple[str, str, int] | None:
    """(name, note, end) of the candidate written at the very start of ``fragment``."""
    rx, table = name_forms(tuple(names))
    m = rx.match(fragment) if fragment else None  # forms are folded; the pattern ignores case
    if not m or not m.lastgroup:
        return None
    name, note = table[int(m.lastgroup[1:])]
    return name, note, m.end()


def match_name(fragment: str, names: list[str]) -> tuple[str | None, str]:
    """Resolve a free-text fragment (a probe answer's name field, a speech token) to one of ``names``.

    Lenient on purpose (the name may come a few words in); protocol lines use the strict
    reading of :func:`parse_target` instead.
    """
    frag = fold(fragment)
    frag = re.sub(r"[*_`~\"'“”«»()\[\]{}<>.,;!?]", " ", frag)
    tokens = [t for t in re.split(r"\s+", frag) if t]
    if not tokens:
        return None, "empty target"
    if " ".join(tokens[:2]) in NONE_WORDS or tokens[0] in NONE_WORDS:
        return None, "explicit abstention"
    folded = {fold(n): n for n in names}
    # 1. exact token match, first token first (handles "Logan - he lied")
    for i, tok in enumerate(tokens[:6]):
        tok = re.sub(r"(?:'s|’s)$", "", tok)
        tok = _CYRILLIC.get(tok, tok)
        if tok in folded:
            return folded[tok], "exact" if i == 0 else f"name at word {i + 1}"
        # Russian case endings: Логана, Логану, Логаном -> логан
        for name_ru, latin in _CYRILLIC.items():
            stem = name_ru[:-1] if name_ru[-1] in "йаяиь" else name_ru
            if tok.startswith(stem) and len(tok) - len(stem) <= 3 and latin in folded:
                return folded[latin], "russian inflection"
    # 2. unique prefix of the first token (at least 3 letters), e.g. "Fin" -> Finley
    first = tokens[0]
    if len(first) >= 3:
        cands = [n for f, n in folded.items() if f.startswith(first)]
        if len(cands) == 1:
            return cands[0], "unique prefix"
    return None, f"no living player matches {fragment.strip()[:40]!r}"
