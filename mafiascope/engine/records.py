"""The records the engine writes, built and serialised through the log schema's models
(mafiascope/logs/schema.py), so a field the schema does not allow, or of the wrong type, fails
where it is made instead of reaching a log.

A record keeps the key order its writer gives (the order logs and fixtures have always had; the
schema declares fields in another order) and only the keys the writer set: a default the
writer did not set is not added to the line. A field the schema does not declare is refused
(the models keep unknown fields for readers of other writers' logs, never for our own).
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..logs.schema import EVENT_MODELS, Event, Record, undeclared

R = TypeVar("R", bound=Record)
E = TypeVar("E", bound=Event)


def build(model: type[R], fields: dict[str, Any], opaque: tuple[str, ...] = ()) -> dict[str, Any]:
    """``fields`` validated as ``model`` and dumped by it, keys in the order of ``fields``.

    ``opaque``: fields the schema types as free mappings (a snapshot's ``state``): only checked
    to be one, and passed through as they are instead of being copied twice per record."""
    light = {k: {} if k in opaque and isinstance(v, dict) else v for k, v in fields.items()}
    rec = model.model_validate(light)
    if bad := undeclared(rec):
        raise ValueError(f"{model.__name__} record: {', '.join(bad)} not declared in mafiascope/logs/schema.py")
    dumped = _ordered_like(rec.model_dump(exclude_unset=True), light)
    return {k: fields[k] if light[k] is not fields[k] else v for k, v in dumped.items()}


def check(model: type[R], fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` as they are, once they validate as ``model`` with every field declared (for records whose
    values already have the schema's types: a probe record is checked, not copied)."""
    if bad := undeclared(model.model_validate(fields)):
        raise ValueError(f"{model.__name__} record: {', '.join(bad)} not declared in mafiascope/logs/schema.py")
    return fields


def _ordered_like(dumped: Any, given: Any) -> Any:
    """``dumped`` with every mapping's keys in the order ``given`` has them (nested records too)."""
    if isinstance(dumped, dict) and isinstance(given, dict):
        return {k: _ordered_like(dumped[k], given[k]) for k in given}
    if isinstance(dumped, list) and isinstance(given, (list, tuple)) and len(dumped) == len(given):
        return [_ordered_like(d, g) for d, g in zip(dumped, given, strict=True)]
    return dumped


def event(model: type[E], game_id: str, **fields: Any) -> dict[str, Any]:
    """A game event as the phases keep it (``state.events``): no ``game_id``/``ts``, which the
    runner adds when it writes the line. ``kind`` comes first, from the model unless given."""
    kind = fields.pop("kind", None) or model.model_fields["kind"].default
    rec = build(model, {"game_id": game_id, "kind": kind, **fields})
    del rec["game_id"]
    return rec


def line(rec: dict[str, Any]) -> dict[str, Any]:
    """A whole game.jsonl record (``game_id`` ... ``ts``), checked against the model of its kind."""
    return build(EVENT_MODELS.get(rec.get("kind", ""), Event), rec)
