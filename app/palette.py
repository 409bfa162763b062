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
HEAT_LOW, HEAT_HIGH = "#fdebd3", "#a63603"  # heatmap cells: light to dark orange
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


INK_DARK, INK_LIGHT = "#1d1b17", "#ffffff"


def luminance(hex_colour: str) -> float:
    """WCAG relative luminance of ``#rrggbb`` (0 black - 1 white)."""
    lin = [(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
           for c in (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def ink_on(fill: str) -> str:
    """Text colour with the higher WCAG contrast on ``fill``: white on dark cells, near-black on light ones."""
    lum = luminance(fill)
    return INK_LIGHT if (1.05) / (lum + 0.05) > (lum + 0.05) / (luminance(INK_DARK) + 0.05) else INK_DARK


def lerp_hex(a: str, b: str, t: float) -> str:
    t = max(0.0, min(1.0, t))
    ca = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))
