"""What the bot concludes from its belief state: P(Mafia) of every seat, role probabilities,
and the views built on them (ranked suspects, how suspicious a seat finds me, the Big-Five read
of a seat's style). A mixin of :class:`~.state.BotState`: it reads the state's evidence ``ev``,
``known`` roles, accusation and defence pairs and speech counts.

Small tables enumerate the possible Mafia teams (each weighted by its members' evidence and by
how well it explains who accused and defended whom); larger ones use an independent estimate
whose expected number of Mafia matches what is still unaccounted for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from mafiascope.logs.schema import MAFIA_ROLES

if TYPE_CHECKING:
    from .presets import BotParams
    from .reader import Identity

TOWN = "Town"  # known not-Mafia, exact town role unknown
TEAM_ACC = 0.9  # team model: log-odds against two seats being partners when one clearly accused the other
TEAM_DEF = 0.9  # ... and for them when one vouched for the other


@dataclass
class Link:
    """One seat's public stance toward another: the evidence the team model weighs."""

    actor: str
    target: str
    weight: float  # > 0 accusation / vote, < 0 defence
    round: int
    kind: str  # "said" | "voted"


def mafia_count(n_players: int) -> int:
    """Expected Mafia seats for a table size (7 -> 2, 10 -> 3)."""
    return max(1, round(n_players * 2 / 7))


class Posterior:
    if TYPE_CHECKING:  # the state this mixin reads: BotState's fields and properties
        ident: Identity
        params: BotParams
        players: tuple[str, ...]
        alive: set[str]
        dead: dict[str, str]
        known: dict[str, str]
        ev: dict[str, float]
        p_at_death: dict[str, float]
        heat: dict[str, float]
        toward_me: dict[str, float]
        links: list[Link]
        style: dict[str, list[float]]
        checks: dict[str, str]
        my_said: list[tuple[int, str, float]]
        my_votes: list[tuple[int, str]]
        n_obs: int
        pair_acc: dict[tuple[str, str], float]
        pair_def: dict[tuple[str, str], float]
        talk_count: dict[tuple[int, str], int]
        _pm_cache: tuple[Any, dict[str, float]] | None

        @property
        def me(self) -> str: ...

        @property
        def is_mafia(self) -> bool: ...

        def others(self, alive_only: bool = True) -> list[str]: ...

    def n_mafia(self) -> int:
        if self.is_mafia:
            return 1 + len(self.ident.partners)
        return mafia_count(len(self.players))

    def p_mafia(self) -> dict[str, float]:
        """P(Mafia) for every seat (self included).

        Small tables (<= 2,000 possible Mafia teams) enumerate the teams: a team's weight is the
        product of its members' evidence odds times how well the team explains who accused and
        defended whom (Mafia rarely accuse a partner and do defend one), scaled by the preset's
        ``insight``; larger ones use the independent estimate."""
        key = (
            self.n_obs,
            len(self.links),
            tuple(self.ev.values()),
            tuple(self.known.items()),
            tuple(sorted(self.alive)),
            len(self.dead),
            len(self.talk_count),
            sum(self.talk_count.values()),
        )
        if self._pm_cache is not None and self._pm_cache[0] == key:
            return dict(self._pm_cache[1])
        out = self._p_teams()
        if out is None:
            out = self._p_independent()
        self._pm_cache = (key, out)
        return dict(out)

    def speech_rate(self) -> float:
        """Public speeches per speaker per day (1 on a one-speech table; an open floor gives more)."""
        if not self.talk_count:
            return 1.0
        return max(1.0, sum(self.talk_count.values()) / len(self.talk_count))

    def _team_terms(self, hidden: list[str]) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
        """Log-likelihood terms of the team model: single[a] if a is Mafia, pair[a, b] if both are."""
        single: dict[str, float] = {}
        pair: dict[tuple[str, str], float] = {}
        km = {n for n, r in self.known.items() if r in MAFIA_ROLES and n != self.me}
        hid = set(hidden)
        for (a, t), w in self.pair_acc.items():
            if a not in hid:
                continue
            mm = -TEAM_ACC * math.tanh(w / 1.5)  # Mafia rarely attack a partner (saturating: one clear attack says it)
            if t in hid:
                pair[(a, t)] = pair.get((a, t), 0.0) + mm
            elif t in km:
                single[a] = single.get(a, 0.0) + mm
        for (a, t), d in self.pair_def.items():
            if a not in hid:
                continue
            single[a] = single.get(a, 0.0) - 0.15 * min(d, 2.0)  # Mafia seldom vouch for town
            mm = TEAM_DEF * math.tanh(d / 1.5)  # ... and do cover a partner
            if t in hid:
                pair[(a, t)] = pair.get((a, t), 0.0) + mm
            elif t in km:
                single[a] = single.get(a, 0.0) + mm
        return single, pair

    def _p_teams(self) -> dict[str, float] | None:
        out = {n: 1.0 if self.known[n] in MAFIA_ROLES else 0.0 for n in self.players if n in self.known}
        unresolved = sum(out.values())
        hidden = [n for n in self.players if n not in out]
        m_rem = int(round(self.n_mafia() - unresolved))
        if not hidden:
            return out
        if m_rem <= 0 or m_rem > len(hidden):
            for n in hidden:
                out[n] = 0.0 if m_rem <= 0 else 1.0
            return out
        if math.comb(len(hidden), m_rem) > 2000:
            return None
        insight = self.params.insight / self.speech_rate()  # five speeches a day: each absent attack says less
        single, pair = self._team_terms(hidden) if insight > 0 else ({}, {})
        logw: list[tuple[tuple[str, ...], float]] = []
        for team in combinations(hidden, m_rem):
            if not any(n in self.alive for n in team) and self.alive:
                continue  # the game goes on, so a Mafioso is still alive
            lw = sum(max(-8.0, min(8.0, self.ev.get(n, 0.0))) for n in team)
            if insight > 0:
                lw += insight * sum(single.get(n, 0.0) for n in team)
                lw += insight * sum(pair.get((a, b), 0.0) for a in team for b in team if a != b)
            logw.append((team, lw))
        if not logw:
            return None
        top = max(lw for _, lw in logw)
        tot = 0.0
        marg = {n: 0.0 for n in hidden}
        for team, lw in logw:
            w = math.exp(lw - top)
            tot += w
            for n in team:
                marg[n] += w
        for n in hidden:
            out[n] = min(0.97, marg[n] / tot) if n in self.alive else marg[n] / tot
        return out

    def _p_independent(self) -> dict[str, float]:
        out: dict[str, float] = {}
        unresolved = 0.0
        for n in self.players:
            role = self.known.get(n)
            if role is not None:
                out[n] = 1.0 if role in MAFIA_ROLES else 0.0
                unresolved += out[n]
            elif n in self.dead:
                out[n] = self.p_at_death.get(n, 0.0)
                unresolved += out[n]
        hidden = [n for n in self.players if n not in out]
        if not hidden:
            return out
        m_rem = max(0.0, min(len(hidden), self.n_mafia() - unresolved))
        w = {n: math.exp(max(-8.0, min(8.0, self.ev.get(n, 0.0)))) for n in hidden}
        fixed: dict[str, float] = {}
        for _ in range(4):  # cap at 0.97 and hand the excess to the others
            free = [n for n in hidden if n not in fixed]
            budget = m_rem - sum(fixed.values())
            tot = sum(w[n] for n in free) or 1.0
            over = [n for n in free if budget * w[n] / tot > 0.97]
            if not over:
                break
            for n in over:
                fixed[n] = 0.97
        free = [n for n in hidden if n not in fixed]
        budget = max(0.0, m_rem - sum(fixed.values()))
        tot = sum(w[n] for n in free) or 1.0
        for n in free:
            out[n] = min(0.97, budget * w[n] / tot)
        out.update(fixed)
        return out

    def role_probs(self) -> dict[str, dict[str, float]]:
        """Per seat: {Mafia, Doctor, Sheriff, Villager} probabilities (Don folded into Mafia)."""
        pm = self.p_mafia()
        has_sheriff = (self.ident.role == "Sheriff" or bool(self.checks) or "Sheriff" in self.known.values()
                       or self.ident.variant is not None)  # fmt: skip
        town_unknown = [n for n in self.players if n != self.me and self.known.get(n) in (None, TOWN)]
        n_doc = 0 if self.ident.role == "Doctor" or "Doctor" in self.known.values() or self.ident.variant else 1
        n_sher = 0 if (not has_sheriff or self.ident.role == "Sheriff") else 1
        tot_town = sum(1 - pm[n] for n in town_unknown) or 1.0
        out: dict[str, dict[str, float]] = {}
        for n in self.players:
            role = self.known.get(n)
            if role is not None and role != TOWN:
                r = "Mafia" if role in MAFIA_ROLES else role
                out[n] = {k: float(k == r) for k in ("Mafia", "Doctor", "Sheriff", "Villager")}
                continue
            town = 1 - pm[n]
            share = town / tot_town
            d = min(town, n_doc * share)
            s = min(town - d, n_sher * share)
            out[n] = {"Mafia": pm[n], "Doctor": d, "Sheriff": s, "Villager": max(0.0, town - d - s)}
        return out

    # ------------------------------------------------------------------ views of the beliefs
    def suspicion(self) -> dict[str, float]:
        """What the bot would say if asked honestly: P(Mafia) of every other living seat."""
        pm = self.p_mafia()
        return {n: pm[n] for n in self.others()}

    def ranked_suspects(self) -> list[str]:
        s = self.suspicion()
        return sorted(s, key=lambda n: (-s[n], self.players.index(n)))

    def my_heat(self, name: str) -> float:
        """How suspicious seat ``name`` probably finds me: its own signals plus retaliation."""
        v = self.toward_me.get(name, 0.0)
        v += 0.5 * sum(w for _, t, w in self.my_said if t == name and w > 0)
        v += 0.8 * sum(1 for _, t in self.my_votes if t == name)
        v += 0.25 * self.heat.get(self.me, 0.0) if name not in self.toward_me else 0.0
        return v

    def personality_of(self, name: str) -> dict[str, int]:
        acc = self.style.get(name)
        if not acc or acc[0] == 0:
            return {t: 50 for t in "OCEAN"}
        n, words, excl, q, soft, harsh, struct, anx, opn = acc
        n = max(1.0, n)

        def c(v: float) -> int:
            return int(max(5, min(95, round(v))))

        return {
            "O": c(40 + 22 * opn / n),
            "C": c(40 + 25 * struct / n - 4 * excl / n),
            "E": c(15 + 0.9 * min(60.0, words / n) + 12 * min(2.0, excl / n)),
            "A": c(50 + 16 * (soft - harsh) / n),
            "N": c(35 + 25 * anx / n + 5 * min(2.0, q / n)),
        }
