"""Rule sets are data: which roles, which phases, which tie and reveal rules.

The phase functions of a rule family (``engine/phases/``) read these fields; a new
variant is a new RuleSet (usually a YAML file under configs/rules/), not a new loop.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..logs.schema import MAFIA_ROLES, ROLES


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
    def _check_roles(self) -> "RuleSet":
        unknown = sorted(set(self.roles) - set(ROLES))
        if unknown:
            raise ValueError(f"roles: unknown role(s) {unknown}; allowed: {list(ROLES)}")
        if sum(v for k, v in self.roles.items() if k in MAFIA_ROLES) < 1:
            raise ValueError("roles: at least one Mafia seat is required")
        if any(v < 0 for v in self.roles.values()):
            raise ValueError("roles: counts must be >= 0")
        return self

    @property
    def n_seats(self) -> int:
        return sum(self.roles.values())

    def role_list(self) -> list[str]:
        """Roles in a canonical order (Mafia side first); seats are shuffled separately."""
        order = {r: i for i, r in enumerate(ROLES)}
        out: list[str] = []
        for role in sorted(self.roles, key=order.__getitem__):
            out += [role] * self.roles[role]
        return out


CLASSIC = RuleSet()
CLASSIC_SHERIFF = RuleSet(name="classic_sheriff", roles={"Mafia": 2, "Doctor": 1, "Sheriff": 1, "Villager": 3})
