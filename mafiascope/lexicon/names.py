"""The Russian spellings of the default name pool: the one table the vote parser, the offline
bots' reader and the F4 transcript baselines read.

Russian speakers write the pool's Latin names in Cyrillic, not always the same way; the
usual spelling comes first, then the other common ones (Грэй, Бэйли, Квинн ...).
"""

from __future__ import annotations

RUSSIAN_SPELLINGS: dict[str, tuple[str, ...]] = {
    "Alex": ("Алекс",),
    "Bailey": ("Бейли", "Бэйли", "Бейлей"),
    "Casey": ("Кейси", "Кэйси"),
    "Dana": ("Дана",),
    "Ellis": ("Эллис",),
    "Finley": ("Финли", "Финлей"),
    "Gray": ("Грей", "Грэй"),
    "Harper": ("Харпер",),
    "Indigo": ("Индиго",),
    "Jordan": ("Джордан",),
    "Kennedy": ("Кеннеди", "Кэннеди"),
    "Logan": ("Логан",),
    "Morgan": ("Морган",),
    "Parker": ("Паркер",),
    "Quinn": ("Куинн", "Квинн", "Куин"),
    "Riley": ("Райли", "Райлей"),
}


def russian_spellings(name: str) -> tuple[str, ...]:
    """The Cyrillic spellings of a pool name (exact Latin spelling), usual first; () for other names."""
    return RUSSIAN_SPELLINGS.get(name, ())
