"""How models are named in a report: aliases (a corpus from elsewhere may name a model by a local file path),
a split by language (each model's seats counted apart per game language), the models left out for too few
games, and file names made from model names.

A :class:`ModelNames` relabels the seats' ``model`` when a corpus is loaded (before any filter, so
``--model`` and ``--games-with-model`` take the new names): every per-model table, comparison and figure
then shows the new names, and aliasing two names to one pools their seats.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
SLUG_CHARS = 40
ALIAS_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def file_slug(name: str) -> str:
    """A file-name part for ``name``: the last component of a path, letters, digits, ``-`` and ``_`` only
    (no dot: a figure's suffix and LaTeX's graphics loader read the last dot), at most :data:`SLUG_CHARS`
    characters; when that changed the name, a short hash of the whole name follows, so two names never
    share a slug."""
    s = str(name)
    tail = re.split(r"[\\/]+", s.rstrip("\\/"))[-1] or s
    slug = _UNSAFE.sub("_", tail).strip("_-")[:SLUG_CHARS].strip("_-")
    if slug != s or not slug:
        slug = (slug or "model") + "-" + hashlib.sha256(s.encode("utf-8")).hexdigest()[:6]
    return slug


class AliasError(ValueError):
    """An alias argument or file that cannot be read (the message names it)."""


def read_aliases(values: list[str]) -> dict[str, str]:
    """``--alias`` values: ``OLD=NEW`` (split at the last ``=``), or a YAML/JSON file (``.yaml``, ``.yml``,
    ``.json``) mapping old names to new ones. Later values win."""
    import yaml

    from ..safe_yaml import load_bounded

    out: dict[str, str] = {}
    for v in values:
        if v.lower().endswith(ALIAS_FILE_SUFFIXES) and "=" not in v:
            path = Path(v)
            try:
                data = load_bounded(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise AliasError(f"--alias {v}: cannot read it ({exc.strerror or exc})") from None
            except (ValueError, yaml.YAMLError) as exc:
                raise AliasError(f"--alias {v}: not YAML ({(str(exc).splitlines() or ['?'])[0]})") from None
            if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(x, str) and x.strip()
                                                     for k, x in data.items()):
                raise AliasError(f"--alias {v}: must map model names to new names (name: New name), one a line")
            out.update({k: x.strip() for k, x in data.items()})
            continue
        old, sep, new = v.rpartition("=")
        if not sep or not old or not new.strip():
            raise AliasError(f"--alias {v!r}: give OLD=NEW (e.g. 'path/to/model=DeepSeek-V3') or a .yaml file")
        out[old] = new.strip()
    return out


@dataclass(frozen=True)
class ModelNames:
    """How seats' model names are read: ``aliases`` (old -> new) and ``by_language`` (the game's language
    appended: ``deepseek-chat (ru)``)."""

    aliases: dict[str, str] = field(default_factory=dict)
    by_language: bool = False

    def __bool__(self) -> bool:
        return bool(self.aliases) or self.by_language

    def label(self, model: str, language: str) -> str:
        name = self.aliases.get(model, model)
        return f"{name} ({language or '?'})" if self.by_language and name else name

    def games_models(self, games: pd.DataFrame) -> pd.Series:
        """The games table's ``models`` column (comma-joined names) relabelled."""
        return pd.Series([",".join(sorted({self.label(m, str(lang)) for m in str(ms).split(",")}))
                          for ms, lang in zip(games["models"], games["language"])], index=games.index, dtype=object)

    def players(self, players: pd.DataFrame, games: pd.DataFrame) -> pd.DataFrame:
        """The players table (with ``g``) with ``model`` relabelled by each seat's game language."""
        lang = games["language"].astype(str).to_numpy()
        out = players.copy()
        out["model"] = [self.label(str(m), lang[g]) if m is not None and m == m else m
                        for m, g in zip(players["model"], players["g"])]
        return out


def models_below(games_models: pd.Series, min_games: int) -> dict[str, int]:
    """Models seated in fewer than ``min_games`` of the games (``models`` column): model -> its games."""
    count: Counter = Counter(m for ms in games_models for m in set(str(ms).split(",")) if m)
    return {m: k for m, k in sorted(count.items()) if k < min_games}


def describe(names: ModelNames | None, min_games: int | None) -> dict[str, Any]:
    """The selection filters' record of the naming options in use (none: nothing, the record as before)."""
    out: dict[str, Any] = {}
    if names and names.aliases:
        out["aliases"] = dict(names.aliases)
    if names and names.by_language:
        out["by"] = "language"
    if min_games:
        out["min_games"] = min_games
    return out
