"""Rosters: the models of an arena run, each a label and a backend entry of the registry.

YAML::

    name: bots
    models:
      bot-balanced: {type: bot, preset: balanced}
      gpt: {type: openai, model: gpt-4o-mini, api_key: "${OPENAI_API_KEY}"}

A model's label is its backend name in every game it plays, so the leaderboards read it
from ``setup.players[].backend``; seats play under human names and never see labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from ..backends.registry import parse_backend_spec
from ..config import REPO_ROOT, ConfigError, read_yaml

DEFAULT_ROSTER = REPO_ROOT / "configs" / "roster_bots.yaml"


@dataclass
class Roster:
    name: str
    models: dict[str, dict[str, Any]]  # label -> backend entry (as data, secrets unexpanded)
    source: str = "<roster>"
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        return list(self.models)

    def fingerprint(self) -> dict[str, Any]:
        """What must match for a run to be resumed (labels and their entries, secrets redacted)."""
        from ..config import redact

        return {"name": self.name, "models": redact(self.models)}


def parse_roster(data: Any, source: str = "<roster>") -> Roster:
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict) or not data["models"]:
        raise ConfigError(f"{source}: a roster needs a non-empty mapping 'models: {{label: backend entry}}'")
    errors = []
    models: dict[str, dict[str, Any]] = {}
    for label, entry in data["models"].items():
        label = str(label)
        if isinstance(entry, str):  # shorthand: a bot preset name
            entry = {"type": "bot", "preset": entry}
        try:
            parse_backend_spec(label, entry)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        models[label] = dict(entry)
    if errors:
        raise ConfigError(f"{source}: invalid roster\n  " + "\n  ".join(errors))
    return Roster(str(data.get("name") or Path(source).stem), models, source, {k: v for k, v in data.items() if k != "models"})


def load_roster(path: str | Path | None = None) -> Roster:
    p = Path(path) if path else DEFAULT_ROSTER
    return parse_roster(read_yaml(p, ConfigError, "roster"), str(p))


def bot_roster() -> Roster:
    """Every offline bot preset as a model (the default roster, needs no keys)."""
    from ..backends.bot.presets import list_presets

    return Roster("bots", {f"bot-{n}": {"type": "bot", "preset": n} for n in list_presets()}, "<bot presets>")
