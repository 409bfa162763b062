"""Ten-seat (tournament) play: nominations, the Don's order and checks, sport shots, best move,
last words, open floor, Mafia night talk, defence speeches and the remove-all vote.

Every handler is ``handler(state, instruction, rng) -> reply`` (registered in
``backend.EXTRA_HANDLERS``) and decides from the bot's belief state only; replies end with the
protocol line the engine parses (``NOMINATE:``, ``SUSPECTS:``, ``ORDER:``, ``ACTION:``,
``VOTE:``, or ``PASS`` on an open floor). Randomness comes only from the request's RNG.

Coordination without talk (sport rules): every Mafioso shoots the first living player of the
order shown in its shot instruction, so all of them pick the same player; with no order they
fall back on the first town player in seat order, which every Mafioso can also compute.
"""

from __future__ import annotations

import random
from typing import Any

from mafiascope.engine import prompts

from . import policy, speech
from .policy import Plan
from .reader import find_names, split_names
from .state import BotState
from .ten_words import TEXTS as T
from .ten_words import WORDS


def _say(st: BotState, key: str, rng: random.Random, **kw: str) -> str:
    return rng.choice(T.get(st.ident.language, T["en"])[key]).format(**kw)


def _ten(st: BotState) -> dict[str, str]:
    return prompts.PACKS.get(st.ident.language, prompts.EN).ten


def _words(st: BotState) -> dict[str, str]:
    return WORDS.get(st.ident.language, WORDS["en"])


def _names(st: BotState, text: str) -> list[str]:
    """Known player names in an instruction list (``Ann, Bob``), in order."""
    out = [n for n in split_names(text or "") if n in st.players]
    return out or [n for _, n in find_names(text or "", st.players)]


def _prior(st: BotState) -> float:
    return st.n_mafia() / max(1, len(st.players))


def confident_line(st: BotState) -> float:
    """How sure a town bot must be before it nominates (preset-dependent: aggression)."""
    return _prior(st) + 0.06 + 0.22 * (1 - st.params.aggression)


def town_alive(st: BotState) -> list[str]:
    """Living players a Mafia bot may target (not itself, not a partner)."""
    return [n for n in st.players if n in st.alive and n != st.me and n not in st.ident.partners]


def _said_today(st: BotState, target: str) -> bool:
    return any(r == st.round and t == target and w > 0 for r, t, w in st.my_said)


# ================================================================ decisions


def nominee(st: BotState, rng: random.Random) -> str | None:
    """Whom to nominate in a speech (None: nobody)."""
    noms = [n for n in st.nominees if n in st.alive]
    cands = [n for n in st.others() if n not in noms]
    if not cands:
        return None
    lone_leaves = st.round >= 2  # sport: a lone nominee leaves without a vote from day 2
    if st.is_mafia:
        partners = set(st.ident.partners)
        team_up = [n for n in noms if n in partners or n == st.me]
        town_up = [n for n in noms if n not in partners and n != st.me]
        scapegoat = policy.mafia_target(st, rng, voting=False).target
        if scapegoat in partners or scapegoat not in cands:
            pool = [n for n in cands if n not in partners]
            scapegoat = max(pool, key=lambda n: (st.heat.get(n, 0.0), n)) if pool else None
        if team_up:  # force a vote with a town alternative, so a partner does not leave alone
            return scapegoat if len(town_up) == 0 or rng.random() < 0.5 else None
        if lone_leaves and len(town_up) == 1:
            return None  # a lone town nominee leaves without a vote: let it happen
        if not town_up and rng.random() < 0.3 + 0.5 * st.params.aggression:
            return scapegoat
        return None
    if st.me in noms and not lone_leaves:
        return None  # day 1: a second nominee would only open a vote on me
    pm = st.p_mafia()
    found = [n for n, r in st.checks.items() if r == "Mafia" and n in st.alive]
    if found:
        return found[0] if found[0] not in noms else None
    line = confident_line(st)
    ranked = [n for n in st.ranked_suspects() if n in cands and st.known.get(n) is None]
    if not ranked:
        return None
    top = ranked[0]
    mine_up = [n for n in noms if pm.get(n, 0.0) >= line]
    if mine_up:
        return None  # my suspect is already up
    if pm[top] + (rng.random() - 0.5) * 0.04 >= line:
        return top
    if noms and lone_leaves and all(pm.get(n, 0.0) < _prior(st) + 0.05 for n in noms):
        return top  # keep a town-looking lone nominee from leaving without a vote
    return None


FLOOR_DISTANCE = 0.8  # chance (times lie_skill) that a Mafioso speaking on an open floor also doubts a cool partner


def choose_vote(st: BotState, cands: list[str], rng: random.Random) -> Plan:
    """A vote restricted to ``cands`` (nominees or the tied players)."""
    cands = [n for n in cands if n != st.me] or cands
    if not cands:
        return Plan(None, "hedge")
    if st.is_mafia:
        partners = set(st.ident.partners)
        town = [n for n in cands if n not in partners and n != st.me]
        if town:
            plan = policy.mafia_target(st, rng, voting=True)
            if plan.target in town:
                return plan
            return Plan(max(town, key=lambda n: (st.heat.get(n, 0.0), -st.players.index(n))), "accuse")
        return Plan(max(cands, key=lambda n: (st.heat.get(n, 0.0), n)), "bus")
    found = [n for n in cands if st.checks.get(n) == "Mafia"]
    if found:
        return Plan(found[0], "reveal" if rng.random() < st.params.reveal_rate else "accuse", confidence=1.0)
    pm = st.p_mafia()
    leader = policy.vote_leader(st)

    def score(n: str) -> float:
        s = pm.get(n, 0.0) + (rng.random() - 0.5) * 0.06
        if n == leader:
            s += 0.25 * st.params.herd
        if st.known.get(n) is not None:
            s -= 1.0
        return s

    best = max(cands, key=lambda n: (score(n), -st.players.index(n)))
    return Plan(best, "accuse", confidence=pm.get(best, 0.0))


def first_in_order(st: BotState, order: list[str]) -> str | None:
    """The agreed sport shot: the first living town player of the order, else the first in seat order."""
    town = town_alive(st)
    for n in order:
        if n in town:
            return n
    return town[0] if town else None


def don_check_target(st: BotState, rng: random.Random, checked: set[str]) -> str | None:
    """The seat most likely to be the Sheriff: claims, then accurate pressure on my team."""
    team = set(st.ident.partners) | {st.me}
    cands = [n for n in st.others() if n not in team and n not in checked and n not in st.don_checks]
    if not cands:
        cands = [n for n in st.others() if n not in team] or st.others()
    if not cands:
        return None

    def score(n: str) -> float:
        s = 3.0 * st.sheriff_claims.get(n, 0.0)
        s += 0.6 * sum(ln.weight for ln in st.links if ln.actor == n and ln.target in team and ln.weight > 0)
        s += 0.3 * sum(1 for ln in st.links if ln.actor == n and ln.kind == "voted" and ln.target in team)
        return s + (rng.random() - 0.5) * 0.8

    return max(cands, key=lambda n: (score(n), n))


def night_target(st: BotState, rng: random.Random) -> str | None:
    """The Mafia's agreed target on a talking night: a found Sheriff, else the first proposal."""
    town = town_alive(st)
    if not town:
        return None
    sheriff = [n for n in town if st.known.get(n) == "Sheriff"]
    if sheriff:
        return sheriff[0]
    for _, t in st.proposals:
        if t in town:
            return t
    chosen = [t for t in st.ally_choices.values() if t in town]
    if chosen:
        return chosen[0]
    return policy.kill_target(st, rng)


# ================================================================ handlers


def _protocol(st: BotState, key: str, names: list[str]) -> str:
    w = _words(st)
    return f"{w[key]}: {', '.join(names) if names else w['nobody']}"


def on_nominate(st: BotState, inst: Any, rng: random.Random) -> str:
    n = nominee(st, rng)
    plan = policy.day_plan(st, rng, voting=False)
    if n and plan.target != n:
        plan = Plan(n, "reveal" if st.checks.get(n) == "Mafia" and rng.random() < st.params.reveal_rate else "accuse",
                    defend=plan.defend)  # fmt: skip
    body = speech.discussion(st, plan, rng)
    tail = _say(st, "nominate", rng, t=n) if n else _say(st, "no_nominate", rng)
    return f"{body} {tail}\n{_protocol(st, 'nominate', [n] if n else [])}"


def _vote_cands(st: BotState, inst: Any) -> list[str]:
    cands = _names(st, inst.groups.get("nominees", "")) if inst is not None else []
    cands = cands or [n for n in st.vote_cands if n in st.alive]
    return cands or st.others()


def on_vote(st: BotState, inst: Any, rng: random.Random) -> str:
    cands = _vote_cands(st, inst)
    return speech.vote(st, choose_vote(st, cands, rng), rng)


def on_remove_all(st: BotState, inst: Any, rng: random.Random) -> str:
    tied = _vote_cands(st, inst)
    t = _ten(st)
    if st.is_mafia:
        team = set(st.ident.partners) | {st.me}
        yes = not any(n in team for n in tied)
    elif st.me in tied:
        yes = False
    else:
        pm = st.p_mafia()
        share = sum(pm.get(n, 0.0) for n in tied) / max(1, len(tied))
        found = any(st.checks.get(n) == "Mafia" for n in tied)
        cleared = any(st.known.get(n) is not None and st.known.get(n) not in ("Mafia", "Don") for n in tied)
        yes = found or (not cleared and share >= _prior(st) + 0.08 * (1.5 - st.params.aggression))
    word = t["yes"] if yes else t["no"]
    vote_word = prompts.PACKS.get(st.ident.language, prompts.EN).vote_word
    return f"{_say(st, 'yes' if yes else 'no', rng)}\n{vote_word}: {word}"


def on_order(st: BotState, inst: Any, rng: random.Random) -> str:
    """The Don on night zero: partners' proposals first, then the other town players."""
    town = town_alive(st)
    order: list[str] = []
    for _, t in st.proposals:
        if t in town and t not in order:
            order.append(t)
    rest = [n for n in town if n not in order]
    rng.shuffle(rest)
    if rng.random() >= policy.COVER_KILL * st.params.lie_skill:  # else: a shuffled order hides who threatens us
        rest.sort(key=lambda n: -policy_threat(st, n))
    order += rest
    if not order:
        return speech.plain(st, rng)
    st.shot_order = order
    word = _ten(st)["order_word"]
    return f"{_say(st, 'order', rng, t=order[0])}\n{word}: {', '.join(order)}"


def policy_threat(st: BotState, n: str) -> float:
    t = st.my_heat(n) + sum(ln.weight for ln in st.links if ln.actor == n and ln.target in st.ident.partners and ln.weight > 0)
    team_acc = sum(ln.weight for ln in st.links if ln.actor in st.ident.partners and ln.target == n and ln.weight > 0)
    team_acc += sum(w for _, t2, w in st.my_said if t2 == n and w > 0)
    return t - 0.6 * st.params.lie_skill * team_acc  # shooting our own scapegoat would point at us


def on_mafia_talk(st: BotState, inst: Any, rng: random.Random) -> str:
    town = town_alive(st)
    if not town:
        return speech.plain(st, rng)
    if "round" not in (inst.groups if inst is not None else {}) and st.round == 0:  # night zero, not the Don
        props = [t for _, t in st.proposals if t in town]
        t = props[0] if props else policy.kill_target(st, rng) or town[0]
        return _say(st, "agree" if props else "propose0", rng, t=t)
    sheriff = [n for n in town if st.known.get(n) == "Sheriff"]
    if sheriff:
        key = "sheriff_found" if st.don_checks.get(sheriff[0]) == "Sheriff" else "sheriff_agree"
        return _say(st, key, rng, t=sheriff[0])
    props = [t for _, t in st.proposals if t in town]
    if props:
        return _say(st, "agree", rng, t=props[0])
    t = policy.kill_target(st, rng) or town[0]
    return _say(st, "propose", rng, t=t)


def on_shot(st: BotState, inst: Any, rng: random.Random) -> str:
    """A night shot: the sport order (no talk), else the target agreed in the night talk."""
    if st.ident.variant == "sport" or st.shot_view is not None:
        t = first_in_order(st, st.shot_view or [])
    else:
        t = night_target(st, rng)
    t = t or (st.others()[0] if st.others() else st.me)
    return _say(st, "shot", rng, t=t) + "\n" + speech.protocol_line(st.ident.language, "kill", t)


def on_don_check(st: BotState, inst: Any, rng: random.Random) -> str:
    checked = set()
    raw = inst.groups.get("checks", "") if inst is not None else ""
    for part in raw.split(";"):
        name = part.split(":")[0].strip()
        if name in st.players:
            checked.add(name)
    t = don_check_target(st, rng, checked) or (st.others()[0] if st.others() else st.me)
    return _say(st, "don_check", rng, t=t) + "\n" + speech.protocol_line(st.ident.language, "check", t)


def on_best_move(st: BotState, inst: Any, rng: random.Random) -> str:
    alive = [n for n in _names(st, inst.groups.get("players", "")) if n != st.me] if inst is not None else []
    alive = alive or st.others()
    pm = st.p_mafia()
    ranked = sorted(alive, key=lambda n: (-(pm.get(n, 0.0) - (1.0 if st.known.get(n) not in (None, "Mafia", "Don") else 0.0)),
                                          st.players.index(n)))  # fmt: skip
    if st.is_mafia:  # cannot happen under these rules (the Mafia never shoot their own), but stay on side
        ranked = [n for n in ranked if n not in st.ident.partners] + [n for n in ranked if n in st.ident.partners]
    three = ranked[:3]
    lines = [_say(st, "best", rng)]
    if three:
        lines.append(_say(st, "best_top", rng, t=three[0]))
    return " ".join(lines) + "\n" + _protocol(st, "suspects", three)


def on_last_words(st: BotState, inst: Any, rng: random.Random) -> str:
    plan = policy.day_plan(st, rng, voting=False)
    lines = [_say(st, "last_mafia" if st.is_mafia else "last_town", rng)]
    if plan.target:
        lines.append(_say(st, "last_accuse", rng, t=plan.target))
        reasons = speech.suspicion_reasons(st, plan.target, rng)
        if reasons and rng.random() < 0.7:
            lines.append(reasons[0])
    if plan.defend and rng.random() < 0.5:
        lines.append(_say(st, "last_trust", rng, d=plan.defend))
    return " ".join(lines[:4])


def on_defence(st: BotState, inst: Any, rng: random.Random) -> str:
    tied = _names(st, inst.groups.get("nominees", "")) if inst is not None else []
    lines = [_say(st, "defence_self", rng)]
    plan = policy.day_plan(st, rng, voting=True)
    others = [n for n in tied if n != st.me and (not st.is_mafia or n not in st.ident.partners)]
    t = others[0] if others and (st.is_mafia or st.p_mafia().get(others[0], 0) >= _prior(st)) else plan.target
    if t and t != st.me:
        lines.append(_say(st, "defence_other", rng, t=t))
        reasons = speech.suspicion_reasons(st, t, rng)
        if reasons:
            lines.append(reasons[0])
    return " ".join(lines)


def on_open_floor(st: BotState, inst: Any, rng: random.Random) -> str:
    """Answer when named; otherwise speak again only with something new to say, else PASS."""
    t = _ten(st)
    groups = inst.groups if inst is not None else {}
    cue = groups.get("cue", "")
    named_by = [n for _, n in find_names(cue, st.players) if n != st.me]
    turn = int(groups.get("turn", "2") or 2)
    plan = policy.day_plan(st, rng, voting=False)
    if named_by:
        a = named_by[-1]
        accused = st.toward_me.get(a, 0.0) > 0.3
        lines = [_say(st, "answer_accused" if accused else "answer_named", rng, a=a)]
        if plan.target and plan.target != a or (accused and plan.target):
            lines.append(speech.pick_line(rng, st.ident.language, "accuse", t=plan.target))
        return " ".join(lines)
    if turn >= 3 or not plan.target:
        return t["pass_word"]
    pm = st.p_mafia()
    fresh = not _said_today(st, plan.target)
    if st.is_mafia:
        speak = fresh and rng.random() < 0.5 + 0.3 * st.params.aggression
        cool = [p for p in st.ident.partners if p in st.alive and st.heat.get(p, 0.0) < 1.0]
        if speak and cool and rng.random() < FLOOR_DISTANCE * st.params.lie_skill:
            # on an open floor a skilled Mafioso questions a partner too, or the team stands out
            return speech.discussion(st, plan, rng) + " " + speech.pick_line(rng, st.ident.language, "doubt", t=cool[0])
    else:
        speak = fresh and (pm.get(plan.target, 0.0) >= confident_line(st) - 0.05 or plan.mode == "reveal")
    if not speak:
        return t["pass_word"]
    return speech.discussion(st, plan, rng)


HANDLERS = {
    "nominate": on_nominate,
    "best_move": on_best_move,
    "order": on_order,
    "night_don": on_don_check,
    "open_floor": on_open_floor,
    "mafia_talk": on_mafia_talk,
    "last_words": on_last_words,
    "defence": on_defence,
    "remove_all": on_remove_all,
}

__all__ = ["HANDLERS", "choose_vote", "nominee", "first_in_order", "don_check_target", "night_target"]
