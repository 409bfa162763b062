"""Bot presets: the named offline "models" of the Arena.

Each preset is a fixed parameter set. Presets differ in how readily they accuse, how much
they trust other players' accusations, how fast they change their mind, how well they lie
as Mafia and how their stated confidence relates to their actual belief (calibration).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class BotParams:
    aggression: float = 0.5  # 0..1: how hard and how early it accuses
    trust: float = 0.5  # 0..1: weight given to other players' accusations and votes
    learning_rate: float = 1.0  # scale of every belief update (personality modulates it)
    lie_skill: float = 0.6  # 0..1: Mafia deflection quality (plausible targets, consistency)
    calibration: float = 1.0  # logit stretch of stated confidence: >1 overconfident, <1 underconfident
    confidence_shift: float = 0.0  # added to stated confidence (percentage points)
    unknown_below: float = 0.5  # a role guess below this belief is reported as "Unknown"
    herd: float = 0.3  # 0..1: pull toward the current vote leader
    bus_rate: float = 0.15  # chance a Mafia bot votes out a heavily suspected partner
    reveal_rate: float = 0.6  # chance a Sheriff reveals a found Mafia in speech
    self_protect: float = 0.15  # Doctor's chance to protect itself
    format_noise: float = 0.02  # probe replies wrapped in a fence or preceded by prose
    verbosity: float = 1.0  # multiplies the number of sentences (with Extraversion)
    insight: float = 0.6  # 0..1: how far the bot reads team structure (who never accuses / covers whom)

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


BOT_PRESETS: dict[str, BotParams] = {
    "balanced": BotParams(),
    "cautious": BotParams(
        aggression=0.2, trust=0.35, learning_rate=0.6, lie_skill=0.55, calibration=0.55,
        confidence_shift=-8.0, unknown_below=0.62, herd=0.2, bus_rate=0.05, reveal_rate=0.3,
        self_protect=0.35, format_noise=0.01, verbosity=0.8, insight=0.6,
    ),
    "aggressive": BotParams(
        aggression=0.9, trust=0.4, learning_rate=1.3, lie_skill=0.5, calibration=1.35,
        confidence_shift=6.0, unknown_below=0.4, herd=0.25, bus_rate=0.3, reveal_rate=0.95,
        self_protect=0.05, format_noise=0.02, verbosity=1.2, insight=0.45,
    ),
    "gullible": BotParams(
        aggression=0.45, trust=0.95, learning_rate=1.7, lie_skill=0.3, calibration=1.9,
        confidence_shift=10.0, unknown_below=0.35, herd=0.75, bus_rate=0.1, reveal_rate=0.7,
        self_protect=0.1, format_noise=0.03, verbosity=1.0, insight=0.15,
    ),
    "analyst": BotParams(
        aggression=0.55, trust=0.55, learning_rate=0.9, lie_skill=0.85, calibration=1.0,
        confidence_shift=0.0, unknown_below=0.5, herd=0.1, bus_rate=0.2, reveal_rate=0.8,
        self_protect=0.2, format_noise=0.01, verbosity=1.1, insight=0.95,
    ),
}  # fmt: skip


def list_presets() -> list[str]:
    """Names of the built-in presets, in a stable order."""
    return sorted(BOT_PRESETS)


def get_preset(name: str) -> BotParams:
    try:
        return BOT_PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown bot preset {name!r}; choose one of {list_presets()}") from None
