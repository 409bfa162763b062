"""Rule sets are data: which roles, which phases, which tie and reveal rules.

The phase functions of a rule family (``engine/phases/``) read these fields; a new
variant is a new RuleSet (usually a YAML file under configs/rules/), not a new loop.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..logs.schema import MAFIA_ROLES, ROLES

# Supported table sizes (docs/cli.md "Config files"): the classic family seats 3 to 16 players (16 is
# the size of prompts.NAME_POOL, which names unnamed seats); the ten-seat family exactly 10.
CLASSIC_SEATS = (3, 16)
TEN_SEATS = 10


class RuleSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "classic"
    family: Literal["classic", "tournament"] = "classic"
    roles: dict[str, int] = Field(default_factory=lambda: {"Mafia": 2, "Doctor": 1, "Villager": 4})
    intro_round: bool = True
    max_rounds: int = Field(10, ge=1, le=100)
    reveal_role_on_elimination: bool = False
    tie_rule: Literal["no_elimination", "random"] = "no_elimination"
    doctor_self_protect: bool = True
    doctor_repeat_protect: bool = True  # may protect the same player two nights in a row
    mafia_kill_tie: Literal["first_listed", "random"] = "first_listed"
    # tournament family (ten seats): sport | open_table | imbalanced
    variant: str | None = None
    options: dict[str, object] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_roles(self) -> RuleSet:
        unknown = sorted(set(self.roles) - set(ROLES))
        if unknown:
            raise ValueError(f"roles: unknown role(s) {unknown}; allowed: {list(ROLES)}")
        if sum(v for k, v in self.roles.items() if k in MAFIA_ROLES) < 1:
            raise ValueError("roles: at least one Mafia seat is required")
        if any(v < 0 for v in self.roles.values()):
            raise ValueError("roles: counts must be >= 0")
        n, mafia = self.n_seats, sum(v for k, v in self.roles.items() if k in MAFIA_ROLES)
        if self.family == "classic" and not CLASSIC_SEATS[0] <= n <= CLASSIC_SEATS[1]:
            raise ValueError(f"roles: {n} seats; the classic family seats {CLASSIC_SEATS[0]} to {CLASSIC_SEATS[1]} players")
        if self.family == "tournament" and n != TEN_SEATS:
            raise ValueError(f"roles: {n} seats; the ten-seat family seats exactly {TEN_SEATS} players")
        if n - mafia <= mafia:
            raise ValueError(
                f"roles: {mafia} Mafia-side and {n - mafia} town seats; the town must outnumber the Mafia at the start"
            )
        if self.family == "tournament" and self.variant not in TOURNAMENT_DEFAULTS and not self.options:
            raise ValueError(
                f"variant: {self.variant!r} is not a ten-seat variant; allowed: {list(TOURNAMENT_DEFAULTS)} (or give options)"
            )
        return self

    @property
    def n_seats(self) -> int:
        return sum(self.roles.values())

    def role_options(self) -> list[str]:
        """The roles a player may be guessed to hold under these rules (probe batteries' ``{roles}``).

        Canonical order, only roles dealt by this rule set: classic -> Mafia, Doctor, Villager;
        ten-seat -> Mafia, Don, Sheriff, Villager.
        """
        return [r for r in ROLES if self.roles.get(r, 0) > 0]

    def option(self, key: str, default: object = None) -> object:
        """A tournament option: ``options[key]``, else the variant's default, else ``default``."""
        if key in self.options:
            return self.options[key]
        return TOURNAMENT_DEFAULTS.get(self.variant or "", {}).get(key, default)

    def role_list(self) -> list[str]:
        """Roles in a canonical order (Mafia side first); seats are shuffled separately."""
        order = {r: i for i, r in enumerate(ROLES)}
        out: list[str] = []
        for role in sorted(self.roles, key=order.__getitem__):
            out += [role] * self.roles[role]
        return out


CLASSIC = RuleSet()
CLASSIC_SHERIFF = RuleSet(name="classic_sheriff", roles={"Mafia": 2, "Doctor": 1, "Sheriff": 1, "Villager": 3})


# ----------------------------------------------------------------------------- ten-seat family
# The variants differ only in these options (read by engine/phases/tournament.py):
#   night_zero_meeting  Mafia meet once on night zero; the Don sets the order of shots
#   mafia_night_talk    Mafia talk privately every night (turns each: night_talk_turns)
#   mafia_shot          "unanimous" (each shoots alone; lands only if all agree) | "vote" (one shot by plurality)
#   nominations         only players nominated during speeches can be voted on
#   day1_vote           "never" | "if_two_nominees" | "always"
#   lone_nominee_leaves a lone nominee leaves without a vote (from day 2)
#   open_floor          after the seat-order speeches, named players answer and anyone raises a hand
#   day_turns           speaking turns per player per day on an open floor (opening speech included)
#   tie                 "revote_then_remove_all" | "defence_runoff" | "runoff" | "none"
#   host                "template" | "llm" | "off";  host_backend: backend name for the LLM host
TOURNAMENT_ROLES = {"Don": 1, "Mafia": 2, "Sheriff": 1, "Villager": 6}
TOURNAMENT_DEFAULTS: dict[str, dict[str, object]] = {
    "sport": {
        "night_zero_meeting": True, "mafia_night_talk": False, "mafia_shot": "unanimous",
        "nominations": True, "day1_vote": "if_two_nominees", "lone_nominee_leaves": True,
        "open_floor": False, "day_turns": 1, "tie": "revote_then_remove_all", "host": "template",
    },
    "open_table": {
        "night_zero_meeting": False, "mafia_night_talk": True, "night_talk_turns": 2, "mafia_shot": "vote",
        "nominations": False, "day1_vote": "never", "lone_nominee_leaves": False,
        "open_floor": True, "day_turns": 3, "tie": "defence_runoff", "host": "template",
    },
    "imbalanced": {
        "night_zero_meeting": False, "mafia_night_talk": True, "night_talk_turns": 1, "mafia_shot": "vote",
        "nominations": False, "day1_vote": "always", "lone_nominee_leaves": False,
        "open_floor": False, "day_turns": 1, "tie": "runoff", "host": "template",
    },
}  # fmt: skip
TOURNAMENT_VARIANTS = tuple(TOURNAMENT_DEFAULTS)
VARIANT_ALIASES = {"open": "open_table", "open-table": "open_table", "sport": "sport", "imbalanced": "imbalanced"}


def tournament_rules(variant: str, **overrides: object) -> RuleSet:
    """The ten-seat rule set ``variant`` (sport | open_table | imbalanced; alias "open")."""
    v = VARIANT_ALIASES.get(variant, variant)
    if v not in TOURNAMENT_DEFAULTS:
        raise ValueError(f"unknown ten-seat variant {variant!r}; choose one of {list(TOURNAMENT_VARIANTS)} (or 'open')")
    data: dict[str, object] = {
        "name": v, "family": "tournament", "variant": v, "roles": dict(TOURNAMENT_ROLES),
        "intro_round": False, "max_rounds": 12, "reveal_role_on_elimination": False,
    }  # fmt: skip
    data.update(overrides)
    return RuleSet.model_validate(data)


SPORT = tournament_rules("sport")
OPEN_TABLE = tournament_rules("open_table")
IMBALANCED = tournament_rules("imbalanced")
