"""Decisions: whom to accuse, vote for, kill, protect or check.

Every choice is a function of the belief state, the preset and an RNG seeded from the
request, so it is reproducible. Town bots act on their honest beliefs; Mafia bots pick a
plausible town scapegoat, defend partners and occasionally bus a doomed partner.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .state import BotState


@dataclass
class Plan:
    target: str | None
    mode: str = "accuse"  # accuse | hedge | bus | reveal | defend | follow
    defend: str | None = None  # a seat to speak up for (Mafia partner, cleared town)
    distance: str | None = None  # Mafia: a partner to voice mild doubt about (hides the team)
    confidence: float = 0.5


COVER_KILL = 0.5  # chance (times lie_skill) that the Mafia kill a trusted voice rather than an accuser
DISTANCE = 0.45  # chance (times lie_skill) that a Mafia speech distances from a partner


def _noise(rng: random.Random, scale: float) -> float:
    return (rng.random() - 0.5) * scale


def vote_leader(st: BotState) -> str | None:
    counts: dict[str, int] = {}
    for v, t in st.votes_today.items():
        if t in st.alive and v != st.me:
            counts[t] = counts.get(t, 0) + 1
    if not counts:
        return None
    return max(counts, key=lambda n: (counts[n], -st.players.index(n) if n in st.players else 0))


CONSOLIDATE = 0.5  # town: a leading vote target is "plausible" at this fraction of my top suspect's P(Mafia)
VOTER_DOUBT = 1.5  # a vote counts 1 - VOTER_DOUBT x P(voter is Mafia) toward the table's lead


def consolidate(st: BotState, pm: dict[str, float], best: str, cands: list[str]) -> str | None:
    """Weak evidence: join the table's leading plausible suspect rather than split the town vote."""
    if st.known.get(best) is not None or st.checks:
        return None
    weight: dict[str, float] = {}
    for v, t in st.votes_today.items():
        if v == st.me or t not in cands or t not in st.alive:
            continue
        weight[t] = weight.get(t, 0.0) + (1.0 - VOTER_DOUBT * pm.get(v, 0.0))
    plaus = [n for n in weight if pm[n] >= CONSOLIDATE * pm[best] and st.known.get(n) is None]
    if not plaus:
        return None
    lead = max(plaus, key=lambda n: (weight[n], pm[n]))
    return lead if weight[lead] > weight.get(best, 0.0) else None


def town_target(st: BotState, rng: random.Random, voting: bool) -> Plan:
    cands = st.others()
    if not cands:
        return Plan(None, "hedge")
    found = [n for n, r in st.checks.items() if r == "Mafia" and n in st.alive]
    if found:
        mode = "reveal" if (n := found[0]) in st.revealed_by_me or rng.random() < st.params.reveal_rate else "accuse"
        return Plan(n, mode, confidence=1.0)
    pm = st.suspicion()
    leader = vote_leader(st) if voting else None
    score = {}
    for n in cands:
        s = pm[n] + _noise(rng, 0.06)
        if leader == n:  # follow the crowd only onto a player I do not think looks town
            prior_ = st.n_mafia() / max(1, len(st.players))
            s += 0.25 * st.params.herd * (1.0 if pm[n] >= prior_ or st.params.herd >= 0.5 else 0.3)
        if st.known.get(n) is not None:  # cleared by a check or reveal
            s -= 1.0
        score[n] = s
    best = max(cands, key=lambda n: (score[n], -st.players.index(n)))
    prior = st.n_mafia() / max(1, len(st.players))
    if voting and not st.is_mafia:
        alt = consolidate(st, pm, best, cands)
        if alt is not None:
            best = alt
    hedge_line = prior + 0.25 * (1 - st.params.aggression)
    mode = "accuse" if pm[best] >= hedge_line or voting else "hedge"
    defend = None
    trusted = [n for n in cands if pm[n] < 0.08 and n != best]
    if trusted and rng.random() < 0.4:
        defend = trusted[0]
    return Plan(best, mode, defend=defend, confidence=pm[best])


def mafia_target(st: BotState, rng: random.Random, voting: bool) -> Plan:
    partners = [p for p in st.ident.partners if p in st.alive]
    town = [n for n in st.others() if n not in st.ident.partners]
    if not town:
        return Plan(partners[0] if partners else None, "accuse")
    skill = st.params.lie_skill
    heat = st.heat
    # bus a partner who is going down anyway
    if partners and voting:
        hottest = max(st.others(), key=lambda n: (heat.get(n, 0.0), n))
        leader = vote_leader(st)
        doomed = [p for p in partners if p in (hottest, leader) and heat.get(p, 0.0) > 2.0]
        if doomed and rng.random() < st.params.bus_rate:
            return Plan(doomed[0], "bus")
    prev = [t for _, t, w in st.my_said if w > 0 and t in town]
    score = {}
    for n in town:
        threat = st.my_heat(n) + 0.5 * sum(
            ln.weight for ln in st.links if ln.actor == n and ln.target in partners and ln.weight > 0
        )
        s = skill * (0.6 * heat.get(n, 0.0) + 0.4 * threat) + _noise(rng, 2.5 * (1.2 - skill))
        if any(o == "save" and x == n for _, o, x in st.night_log):
            s -= 2.0 * skill  # the town knows the Mafia went for this one
        if prev and n == prev[-1]:
            s += 0.8 * skill  # keep the story consistent
        if voting and vote_leader(st) == n:
            s += 0.8 * st.params.herd + 0.5 * skill
        if not voting:  # a skilled team spreads its talk instead of all piling on one player
            s -= (
                0.9
                * skill
                * sum(
                    ln.weight
                    for ln in st.links
                    if ln.round == st.round and ln.target == n and ln.actor in partners and ln.weight > 0 and ln.kind == "said"
                )
            )
        score[n] = s
    best = max(town, key=lambda n: (score[n], -st.players.index(n)))
    defend = distance = None
    if partners:
        hot = max(partners, key=lambda p: heat.get(p, 0.0))
        if heat.get(hot, 0.0) > 0.8 and rng.random() < 0.3 + 0.5 * (1 - skill):
            defend = hot
        # a skilled liar now and then voices mild doubt about a partner nobody is chasing,
        # so the team does not stand out as the seats that never question each other
        cool = [p for p in partners if heat.get(p, 0.0) < 1.0 and p != defend]
        if cool and not voting and rng.random() < DISTANCE * skill:
            distance = cool[0]
    return Plan(best, "accuse", defend=defend, distance=distance, confidence=0.6)


def day_plan(st: BotState, rng: random.Random, voting: bool) -> Plan:
    return mafia_target(st, rng, voting) if st.is_mafia else town_target(st, rng, voting)


def kill_target(st: BotState, rng: random.Random) -> str | None:
    town = [n for n in st.others() if n not in st.ident.partners]
    if not town:
        return None
    chosen = [t for t in st.ally_choices.values() if t in town]
    if chosen and rng.random() < 0.85:
        return chosen[-1]
    # a skilled Mafia does not always shoot its own accusers (that would point the town at them):
    # some nights it removes a trusted, talkative voice instead
    cover = rng.random() < COVER_KILL * st.params.lie_skill

    def threat(n: str) -> float:
        t = st.my_heat(n) + sum(
            ln.weight for ln in st.links if ln.actor == n and ln.target in st.ident.partners and ln.weight > 0
        )
        if cover:
            t = -0.5 * st.heat.get(n, 0.0) - 0.3 * t
        # the town reads "X went after V, then V was shot": a skilled team avoids shooting its own scapegoats
        team_acc = sum(ln.weight for ln in st.links if ln.actor in st.ident.partners and ln.target == n and ln.weight > 0)
        team_acc += sum(w for _, t2, w in st.my_said if t2 == n and w > 0)
        t -= 0.6 * st.params.lie_skill * team_acc
        acc = st.style.get(n)
        if acc and acc[0]:
            t += 0.01 * min(60.0, acc[1] / acc[0])  # talkative players lead the town
        return t + _noise(rng, 1.0)

    return max(town, key=lambda n: (threat(n), n))


def protect_target(st: BotState, rng: random.Random) -> str | None:
    if st.me in st.alive and rng.random() < st.params.self_protect:
        return st.me
    cands = st.others()
    if not cands:
        return st.me or None
    pm = st.p_mafia()

    def value(n: str) -> float:
        # a town-looking player who pushes on suspects is the likeliest night target
        push = sum(ln.weight for ln in st.links if ln.actor == n and ln.weight > 0 and pm.get(ln.target, 0) > 0.3)
        return (1 - pm[n]) * (1.0 + 0.4 * push) + _noise(rng, 0.3)

    return max(cands, key=lambda n: (value(n), n))


def check_target(st: BotState, rng: random.Random) -> str | None:
    cands = [n for n in st.others() if n not in st.checks]
    if not cands:
        return None
    pm = st.p_mafia()
    # most uncertain first: P(Mafia) closest to one half, then the higher suspicion
    return max(cands, key=lambda n: (-abs(pm[n] - 0.5) + _noise(rng, 0.04), n))
