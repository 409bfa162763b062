"""Rosters: the models of an arena run, each a label and a backend entry of the registry.

YAML::

    name: bots
    models:
      bot-balanced: {type: bot, preset: balanced}
      gpt: {type: openai, model: gpt-4o-mini, api_key: "${OPENAI_API_KEY}"}

A model's label is its backend name in every game it plays, so the leaderboards read it
from ``setup.players[].backend``; seats play under human names and never see labels.

An optional ``seating:`` list (ten labels, one per seat, a label may repeat) switches the run
from the balanced schedule to fixed seating: every game seats exactly these models and the
engine deals the roles (docs/arena.md). ``mafiascope arena run --seating FILE`` gives the same
list from a separate file (a YAML list, or a mapping with a ``seating:`` list).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends.registry import Source, mark_source, parse_backend_spec
from ..config import CONFIG_DIR, ConfigError, read_yaml, shipped_config

DEFAULT_ROSTER = CONFIG_DIR / "roster_bots.yaml"


@dataclass
class Roster:
    name: str
    models: dict[str, dict[str, Any]]  # label -> backend entry (as data, secrets unexpanded)
    source: str = "<roster>"
    meta: dict[str, Any] = field(default_factory=dict)
    seating: list[str] | None = None  # fixed seating: one label per seat; None = the balanced schedule

    def backend_specs(self, labels: Any = None) -> dict[str, Any]:
        """The models (``labels`` of them, default all) as validated specs marked as read from a roster: a roster
        is a shared file, so its ``${VAR}`` keys reach only their providers unless a key policy says otherwise."""
        out = {k: parse_backend_spec(k, v) for k, v in self.models.items() if labels is None or k in labels}
        mark_source(out.values(), Source.ROSTER)
        return out

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
    seating = parse_seating(data["seating"], list(models), source) if data.get("seating") is not None else None
    meta = {k: v for k, v in data.items() if k not in ("models", "seating")}
    return Roster(str(data.get("name") or Path(source).stem), models, source, meta, seating)


def parse_seating(data: Any, labels: list[str], source: str = "<seating>") -> list[str]:
    """Ten roster labels, one per seat; errors name the field (``seating``, ``seating[i]``) and the known labels."""
    from ..engine.rules import TOURNAMENT_ROLES

    n = sum(TOURNAMENT_ROLES.values())
    if not isinstance(data, list):
        raise ConfigError(f"{source}: seating: expected a list of {n} roster labels (one per seat), got {type(data).__name__}")
    if len(data) != n:
        raise ConfigError(f"{source}: seating: the ten-seat rules need exactly {n} seats, got {len(data)}")
    errors = [f"seating[{i}]: unknown label {x!r}" for i, x in enumerate(data) if not isinstance(x, str) or x not in labels]
    if errors:
        raise ConfigError(f"{source}: invalid seating (roster labels: {', '.join(labels)})\n  " + "\n  ".join(errors))
    return list(data)


def load_seating(path: str | Path, roster: Roster) -> Roster:
    """The roster with the seating of a YAML file (a list, or a mapping with a ``seating:`` list)."""
    from dataclasses import replace

    p = Path(path)
    data = read_yaml(p, ConfigError, "seating")
    if isinstance(data, dict):
        if "seating" not in data:
            raise ConfigError(f"{p}: seating: missing (expected a list of roster labels, or a mapping with a 'seating:' list)")
        data = data["seating"]
    return replace(roster, seating=parse_seating(data, roster.labels, str(p)))


def load_roster(path: str | Path | None = None) -> Roster:
    p = Path(path) if path else DEFAULT_ROSTER
    if not p.is_file():  # configs/roster_bots.yaml from any directory
        p = shipped_config(p) or p
    return parse_roster(read_yaml(p, ConfigError, "roster"), str(p))


def bot_roster() -> Roster:
    """Every offline bot preset as a model (the default roster, needs no keys)."""
    from ..backends.bot.presets import list_presets

    return Roster("bots", {f"bot-{n}": {"type": "bot", "preset": n} for n in list_presets()}, "<bot presets>")
