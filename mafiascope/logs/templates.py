"""Rendering question templates: only known ``{identifier}`` placeholders are substituted.

In the logs layer because a compact probe record (:mod:`.probe_codec`) stores a question as its
template (once per file) plus the placeholder values, and the reader renders it again, byte for
byte. Template checks (what a battery may contain) stay in :mod:`mafiascope.probes.render`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

NA = "N/A"
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def placeholders(template: str) -> list[str]:
    """Placeholder names in order of first appearance."""
    return list(dict.fromkeys(PLACEHOLDER.findall(template)))


def render(template: str, values: Mapping[str, str | None]) -> str:
    """Substitute known placeholders; a missing or None value renders as ``N/A``."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            return m.group(0)  # cannot happen for a validated template
        v = values[name]
        return NA if v is None or v == "" else v

    return PLACEHOLDER.sub(sub, template)
