"""Question templates: only known ``{identifier}`` placeholders are substituted.

Every other brace is literal, so JSON answer formats are written as they should look
(``[{"player": "...", "score": N}]``) -- no doubling. Anything that looks like a
placeholder but is not a known one, and the usual mistakes of ``str.format`` habits
(``{{``, ``{ player }``, ``{player!r}``, ``{player:>5}``, an unclosed ``{player``), are
reported by :func:`check_template` at load time, naming the probe and the placeholder.
"""

from __future__ import annotations

import re

from ..logs.templates import NA, PLACEHOLDER, placeholders, render

__all__ = ["NA", "PLACEHOLDER", "BASE_PLACEHOLDERS", "CHAIN_PREFIXES", "check_template", "placeholders", "render"]

BASE_PLACEHOLDERS = ("player", "players", "roles")
CHAIN_PREFIXES = ("prev_", "last_")

# things that look like an attempt at a placeholder but are not one
_SUSPICIOUS = [
    (re.compile(r"\{\s*\d*\s*\}"), "positional placeholder (str.format style) is not supported; "
     "use a named one: {player}, {players}, {roles}, {prev_<id>}, {last_<id>}"),
    (re.compile(r"\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}"), "doubled braces around a placeholder (write {name} once; braces are literal here)"),
    (re.compile(r"\{\{"), "doubled brace '{{' (braces are literal here, no doubling needed)"),
    (re.compile(r"\{\s+[A-Za-z_][A-Za-z0-9_]*\s*\}|\{[A-Za-z_][A-Za-z0-9_]*\s+\}"), "placeholder with spaces inside the braces"),
    (re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:[!:.\[][^{}\"\n]*)\}"), "format spec/attribute access is not supported in placeholders"),
    (re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?=$|[^A-Za-z0-9_}!:.\[\s])"), "unclosed placeholder"),
    (re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\s*$"), "unclosed placeholder"),
]


def check_template(template: str, probe_ids: list[str]) -> list[str]:
    """Problems of a template (empty list = fine). ``probe_ids`` are the battery's ids."""
    errors: list[str] = []
    for rx, why in _SUSPICIOUS:
        m = rx.search(template)
        if m:
            errors.append(f"{why}: {m.group(0).strip()!r}")
            break
    for name in placeholders(template):
        if name in BASE_PLACEHOLDERS:
            continue
        prefix = next((p for p in CHAIN_PREFIXES if name.startswith(p)), None)
        if prefix is not None:
            ref = name[len(prefix) :]
            if ref not in probe_ids:
                errors.append(f"{{{name}}} refers to unknown probe id {ref!r}; battery ids: {probe_ids}")
            continue
        allowed = [*BASE_PLACEHOLDERS, "prev_<id>", "last_<id>"]
        errors.append(f"unknown placeholder {{{name}}}; allowed: {allowed}")
    rest = PLACEHOLDER.sub("", template)
    opens, closes = rest.count("{"), rest.count("}")
    if opens != closes and not errors:
        errors.append(f"unbalanced braces: {opens} '{{' vs {closes} '}}' outside placeholders")
    return errors
