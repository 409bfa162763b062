"""Okabe-Ito role colours with shape redundancy (colour-blind safe, readable on light and dark)."""

from __future__ import annotations

from mafiascope.analytics.figures import AGENT_PALETTE, ROLE_COLORS  # one palette for the app and the saved figures

# Vega-Lite point shapes: redundancy for the colour channel (also readable in greyscale).
ROLE_SHAPES = {
    "Mafia": "triangle-up",
    "Don": "diamond",
    "Doctor": "cross",
    "Sheriff": "square",
    "Villager": "circle",
    "Unknown": "circle",
}
ROLE_ICONS = {"Mafia": "▲", "Don": "◆", "Doctor": "✚", "Sheriff": "■", "Villager": "●", "Unknown": "○"}
ATTITUDE_COLORS = {"trusts": "#009E73", "neutral": "#8A8F98", "suspects": "#D55E00"}
MISMATCH_COLOR = "#E69F00"  # amber: dashed ring on ego-panel nodes whose believed and actual attitudes differ
CROWD_COLOR = "#f0883e"
BRAND = "#a16207"


def role_color(role: str | None) -> str:
    return ROLE_COLORS.get(canonical_role(role), ROLE_COLORS["Unknown"])


def role_shape(role: str | None) -> str:
    return ROLE_SHAPES.get(canonical_role(role), "circle")


def role_icon(role: str | None) -> str:
    return ROLE_ICONS.get(canonical_role(role), "○")


def canonical_role(role: str | None) -> str:
    """Display bucket of a role label (only for colouring; scoring uses mafiascope.lexicon.labels)."""
    if not role:
        return "Unknown"
    if role in ROLE_COLORS:
        return role
    try:
        from mafiascope.lexicon.labels import CODE_NAMES, normalise_role

        code = normalise_role(role)
        return CODE_NAMES.get(code, "Unknown") if isinstance(code, int) else "Unknown"
    except Exception:  # analytics not importable: fall back to exact labels only
        return "Unknown"


def role_scale(domain: list[str] | None = None) -> tuple[list[str], list[str]]:
    dom = domain or list(ROLE_COLORS)
    return dom, [ROLE_COLORS.get(r, ROLE_COLORS["Unknown"]) for r in dom]


def agent_colors(names: list[str]) -> dict[str, str]:
    return {n: AGENT_PALETTE[i % len(AGENT_PALETTE)] for i, n in enumerate(names)}


def lerp_hex(a: str, b: str, t: float) -> str:
    t = max(0.0, min(1.0, t))
    ca = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))
