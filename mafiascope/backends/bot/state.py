"""The bot's belief state, rebuilt by folding over what the seat has seen.

``ev[x]`` is log-odds evidence that seat x is Mafia; role probabilities are derived from it
so that the expected number of hidden Mafia matches what is still unaccounted for. Updates
are scaled by a learning rate that depends on the preset and on the bot's Neuroticism and
Openness. The fold is deterministic (no randomness), so a state cached for a message
prefix is exactly the state a fresh replay would build.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from mafiascope.engine.parsing import parse_list
from mafiascope.engine.phases.tournament import MARKERS as TEN_SEAT_MARKERS
from mafiascope.logs.schema import MAFIA_ROLES

from .cues import net_cues, style_of
from .posterior import TOWN, Link, Posterior
from .presets import BotParams
from .reader import Identity, Obs, find_names

VICTIM_READS = 0.3  # weight of a night victim's earlier reads (a town player's honest suspicions)

# a public Sheriff claim ("I'm the Sheriff", "Я Шериф") and the word alone (Mafia night talk)
_SHERIFF_CLAIM = re.compile(r"\bI(?:'m| am) (?:the )?Sheriff\b|\bЯ\s*(?:[—-]\s*)?Шериф", re.I)
_SHERIFF_WORD = re.compile(r"sheriff|шериф", re.I)
_FOUND = re.compile(r"\bmafia\b|мафи", re.I)
_CLEARED = re.compile(r"not (?:the )?mafia|не мафи", re.I)


def ten_list(text: str, action: str, players: tuple[str, ...]) -> list[str]:
    """Names on a ten-seat list line (``SUSPECTS:``, ``ORDER:``, ``NOMINATE:``), read like the engine does."""
    return parse_list(text, action, list(players), limit=len(players) if action == "order" else 3, markers=TEN_SEAT_MARKERS)


@dataclass
class BotState(Posterior):
    ident: Identity
    params: BotParams
    players: tuple[str, ...] = ()
    alive: set[str] = field(default_factory=set)
    dead: dict[str, str] = field(default_factory=dict)  # name -> "night" | "vote"
    known: dict[str, str] = field(default_factory=dict)  # name -> role or TOWN
    ev: dict[str, float] = field(default_factory=dict)
    p_at_death: dict[str, float] = field(default_factory=dict)
    heat: dict[str, float] = field(default_factory=dict)  # public suspicion against a seat
    toward_me: dict[str, float] = field(default_factory=dict)  # how much each seat signals suspicion of me
    links: list[Link] = field(default_factory=list)
    style: dict[str, list[float]] = field(default_factory=dict)  # name -> summed style features
    round: int = 0
    phase: str = ""  # kind of the last instruction seen ("intro", "discuss", "vote", "night_mafia" ...)
    votes_today: dict[str, str] = field(default_factory=dict)
    votes_prev: dict[str, str] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)  # own sheriff checks: name -> "Mafia" | TOWN
    ally_choices: dict[str, str] = field(default_factory=dict)
    night_log: list[tuple[int, str, str]] = field(default_factory=list)  # (round, outcome, name)
    my_said: list[tuple[int, str, float]] = field(default_factory=list)  # my own accusations (round, target, w)
    my_votes: list[tuple[int, str]] = field(default_factory=list)
    my_protects: list[str] = field(default_factory=list)
    my_checks_asked: list[str] = field(default_factory=list)
    revealed_by_me: set[str] = field(default_factory=set)
    n_obs: int = 0
    # ten-seat (tournament) rules
    nominees: list[str] = field(default_factory=list)  # nominated today, in order
    nominated_by: dict[str, str] = field(default_factory=dict)  # nominee -> nominator (today)
    my_noms: list[tuple[int, str]] = field(default_factory=list)
    shot_order: list[str] = field(default_factory=list)  # the Don's order of shots (Mafia only)
    don_name: str = ""  # the Don, when a Mafia bot has seen who set the order
    don_checks: dict[str, str] = field(default_factory=dict)  # own Don checks: name -> "Sheriff" | TOWN
    sheriff_claims: dict[str, float] = field(default_factory=dict)  # public Sheriff claims
    night_talk: bool = False  # between the host's night line and the next day (Mafia talk is private)
    proposals: list[tuple[str, str]] = field(default_factory=list)  # (speaker, target) of tonight's Mafia talk
    best_move: dict[str, list[str]] = field(default_factory=dict)  # first player shot -> named suspects
    shot_view: list[str] | None = None  # the order shown in my last sport shot instruction
    vote_cands: list[str] = field(default_factory=list)  # nominees / tied players of my last vote instruction
    # accuser credibility: log-factor per speaker, lowered when its accusations hit players shown to be town
    record: dict[str, float] = field(default_factory=dict)
    talk_rounds: set[int] = field(default_factory=set)  # rounds with public speech seen (the first is "day 1")
    # team structure: per (actor, target) summed accusation weight (> 0) and defence weight (< 0 as positive)
    pair_acc: dict[tuple[str, str], float] = field(default_factory=dict)
    pair_def: dict[tuple[str, str], float] = field(default_factory=dict)
    talk_count: dict[tuple[int, str], int] = field(default_factory=dict)  # public speeches per (round, speaker)
    _pm_cache: tuple[Any, dict[str, float]] | None = None

    # ------------------------------------------------------------------ basics
    def clone(self) -> BotState:
        c = BotState(self.ident, self.params)
        for k, v in self.__dict__.items():
            if k in ("ident", "params", "_pm_cache"):
                continue
            if isinstance(v, dict):
                v = {kk: (list(vv) if isinstance(vv, list) else vv) for kk, vv in v.items()}
            elif isinstance(v, (list, set)):
                v = type(v)(v)
            setattr(c, k, v)
        return c

    @property
    def me(self) -> str:
        return self.ident.name

    @property
    def is_mafia(self) -> bool:
        return self.ident.role in MAFIA_ROLES

    @property
    def lr(self) -> float:
        pers = self.ident.personality
        return self.params.learning_rate * (0.7 + 0.6 * pers.get("N", 50) / 100) * (0.85 + 0.3 * pers.get("O", 50) / 100)

    def others(self, alive_only: bool = True) -> list[str]:
        pool = [p for p in self.players if p != self.me]
        return [p for p in pool if p in self.alive] if alive_only else pool

    def add_players(self, names: list[str], alive: bool) -> None:
        new = [n for n in names if n and n not in self.players]
        if new:
            self.players = self.players + tuple(new)
            for n in new:
                self.ev.setdefault(n, 0.0)
                if n not in self.dead:
                    self.alive.add(n)
        if alive and names:
            for n in self.players:
                if n not in names and n in self.alive:
                    self.alive.discard(n)
                    self.dead.setdefault(n, "unknown")
                    self.p_at_death.setdefault(n, self.p_mafia().get(n, 0.0))
        if self.me and self.me not in self.known:
            self.known[self.me] = self.ident.role
            for pt in self.ident.partners:
                self.known[pt] = "Don" if pt == self.ident.don else "Mafia"
            if self.ident.don:
                self.don_name = self.ident.don

    # ------------------------------------------------------------------ updates
    def _push(self, name: str, delta: float) -> None:
        if name and name != self.me and name in self.ev:
            self.ev[name] = max(-8.0, min(8.0, self.ev[name] + delta))

    def _credibility(self, name: str, pm: dict[str, float]) -> float:
        """How much a speaker's reads count: town-looking and with a good track record."""
        return (1.0 - pm.get(name, 0.3)) * math.exp(max(-1.5, min(0.6, self.record.get(name, 0.0))))

    def _credit(self, name: str, delta: float) -> None:
        if name and name != self.me:
            self.record[name] = max(-3.0, min(1.5, self.record.get(name, 0.0) + delta))

    @property
    def first_day(self) -> bool:
        """No public day has ended yet: accusations rest on nothing but talk."""
        return len(self.talk_rounds) <= 1 and not any(
            r != TOWN for n, r in self.known.items() if n != self.me and n not in self.ident.partners
        )

    def _damping(self) -> float:
        """Bandwagon damping: how little an echoed accusation adds (gullible herds less damped).

        Neuroticism makes a bot more reactive to the crowd, Agreeableness more willing to follow it."""
        pers = self.ident.personality
        return max(0.1, (1.0 - 0.8 * self.params.herd) * (1.25 - 0.3 * pers.get("N", 50) / 100 - 0.2 * pers.get("A", 50) / 100))

    def apply(self, ob: Obs) -> None:
        self.n_obs += 1
        k = ob.kind
        if k in ("said", "intro", "voted"):
            self._speech(ob)
        elif k == "ally":
            self.ally_choices[ob.name] = ob.target
        elif k == "night":
            self._night(ob)
        elif k == "check":
            self.known[ob.name] = "Mafia" if ob.role == "Mafia" else self.known.get(ob.name, TOWN)
            self.checks[ob.name] = "Mafia" if ob.role == "Mafia" else TOWN
        elif k == "elim":
            self._eliminated(ob.name, ob.role)
        elif k == "round":
            try:
                self.new_round(int(ob.text))
            except ValueError:
                pass
        elif k == "nominated":
            self._nominated(ob.name, ob.target)
        elif k == "don_check":
            self.don_checks[ob.name] = "Sheriff" if ob.role == "Sheriff" else TOWN
            if ob.role == "Sheriff":
                self.known[ob.name] = "Sheriff"
        elif k == "shot_order":
            self.shot_order = [n for n in ob.text.split(", ") if n]
        elif k == "host_night":
            self.night_talk, self.proposals = True, []
        elif k == "host_day":
            self.night_talk = False
            if ob.text.isdigit():
                self.new_round(int(ob.text))

    def new_round(self, rnd: int) -> None:
        if rnd <= self.round:
            return
        self.round = rnd
        if self.votes_today:
            self.votes_prev = dict(self.votes_today)
        self.votes_today = {}
        self.heat = {n: v * 0.6 for n, v in self.heat.items()}
        self.nominees, self.nominated_by = [], {}

    def _nominated(self, actor: str, target: str) -> None:
        """A nomination reads like a vote: a public, committed accusation."""
        if target and target not in self.nominees:
            self.nominees.append(target)
            self.nominated_by[target] = actor
        self._cue_links(actor, {target: 1.2}, "voted")

    def _speech(self, ob: Obs) -> None:
        a = ob.name
        if a not in self.players:
            self.add_players([a], alive=False)
        if self.night_talk and ob.kind == "said":
            self._night_talk(a, ob.text)  # the Mafia's private talk: plans, not public reads
            return
        if ob.kind == "said":
            self.talk_count[(self.round, a)] = self.talk_count.get((self.round, a), 0) + 1
        st = style_of(ob.text)
        acc = self.style.setdefault(a, [0.0] * 9)
        for i, v in enumerate((1, st.words, st.excl, st.questions, st.soft, st.harsh, st.struct, st.anx, st.open)):
            acc[i] += v
        cues = net_cues(ob.text, a, self.players)
        if ob.kind == "voted" and ob.target:
            self.votes_today[a] = ob.target
            cues = dict(cues)
            cues[ob.target] = max(cues.get(ob.target, 0.0), 0.0) + 1.5
        named = ten_list(ob.text, "suspects", self.players) if ob.kind == "said" else []
        if named:  # the best move of the first player shot: three committed suspicions
            self.best_move[a] = named
            cues = dict(cues)
            for t in named:
                cues[t] = max(cues.get(t, 0.0), 0.0) + 1.3
        claim = _SHERIFF_CLAIM.search(ob.text) if ob.kind == "said" and a != self.me else None
        if claim:  # "I'm the Sheriff: I checked X, X is Mafia" -- a public claim weighs far more than a read
            self.sheriff_claims[a] = self.sheriff_claims.get(a, 0.0) + 1.0
            after = ob.text[claim.end() :]
            hits = [n for _, n in find_names(after, self.players) if n != a]
            if hits and _FOUND.search(after) and not _CLEARED.search(after):
                cues = dict(cues)
                cues[hits[0]] = max(cues.get(hits[0], 0.0), 0.0) + 2.5
        self._cue_links(a, cues, ob.kind)

    def _night_talk(self, a: str, text: str) -> None:
        """A partner's line in the Mafia's night talk: whom they propose, a found Sheriff, the Don's order."""
        order = ten_list(text, "order", self.players)
        if order:
            self.don_name = a
            self.shot_order = order
            if a in self.ident.partners:
                self.known[a] = "Don"
        town = [n for _, n in find_names(text, self.players) if n not in self.ident.partners and n != self.me]
        if not town:
            return
        self.proposals.append((a, town[0]))
        if _SHERIFF_WORD.search(text) and a in self.ident.partners:
            self.known[town[0]] = "Sheriff"

    def _cue_links(self, a: str, cues: dict[str, float], kind: str) -> None:
        if a == self.me:
            return
        if kind in ("said", "voted"):
            self.talk_rounds.add(self.round)
        pm = self.p_mafia()
        prior = self.n_mafia() / max(1, len(self.players))
        lr, trust = self.lr, self.params.trust
        first_day, damp = self.first_day, self._damping()
        for t, w in cues.items():
            # accusers of t earlier today: a later accusation mostly echoes them
            echo = {
                ln.actor for ln in self.links if ln.round == self.round and ln.target == t and ln.weight > 0 and ln.actor != a
            }
            self.links.append(Link(a, t, w, self.round, kind))
            if w > 0:
                self.heat[t] = self.heat.get(t, 0.0) + w
                # joining a crowd against a partner is cheap cover (a bus), so an echo says less about the team
                self.pair_acc[(a, t)] = self.pair_acc.get((a, t), 0.0) + w / (1.0 + 0.7 * len(echo))
            else:
                self.pair_def[(a, t)] = self.pair_def.get((a, t), 0.0) - w
            if t == self.me:
                self.toward_me[a] = self.toward_me.get(a, 0.0) + w
                if not self.is_mafia:  # I know I am innocent: accusing me is suspicious, and the accuser is wrong
                    self._push(a, lr * (0.35 * w if w > 0 else 0.1 * w))
                    if w > 0:
                        self._credit(a, -0.3 * w)
                continue
            cred = self._credibility(a, pm)
            scale = 1.0
            if w > 0 and kind == "said":  # a vote or nomination is a commitment, not an echo
                scale = 1.0 / (1.0 + damp * 0.8 * len(echo))
                if first_day:  # a first-day accusation rests on talk alone
                    scale *= 0.6 + 0.4 * (1.0 - damp)
            pt = pm.get(t, prior)
            if t in self.known:
                pt = 1.0 if self.known[t] in MAFIA_ROLES else 0.0
            if w < 0 and pt > prior + 0.05 and t not in self.known:
                scale *= 0.4  # vouching for a suspect is weak evidence for the suspect
            self._push(t, lr * trust * w * (cred - 0.4) * 0.9 * scale)
            # buddy / contrarian evidence about the speaker
            self._push(a, lr * 0.45 * (-w) * (pt - prior))

    def _night(self, ob: Obs) -> None:
        self.ally_choices = {}  # the night is over
        self.night_talk = False
        self.night_log.append((self.round, ob.text, ob.name))
        x = ob.name
        if ob.text == "kill" and x:
            self.known.setdefault(x, TOWN)
            self._mark_dead(x, "night")
            lr = self.lr
            for ln in self.links:
                if ln.actor == x and ln.target != self.me:  # the victim's reads were a town player's reads
                    self._push(ln.target, lr * VICTIM_READS * ln.weight)
                elif ln.target == x and ln.weight > 0:  # accusing an innocent
                    self._push(ln.actor, lr * (0.35 if ln.kind == "voted" else 0.25) * ln.weight)
                    self._credit(ln.actor, -0.35 * ln.weight)
                elif ln.target == x and ln.weight < 0:
                    self._credit(ln.actor, 0.1)
            self._co_votes(x, mafia=False)
        elif ob.text == "save" and x:
            self._push(x, -1.5 * self.lr)

    def _mark_dead(self, x: str, how: str) -> None:
        if x not in self.players:
            self.add_players([x], alive=False)
        self.p_at_death[x] = self.p_mafia().get(x, 0.0)
        self.alive.discard(x)
        self.dead[x] = how

    def _eliminated(self, x: str, role: str) -> None:
        self._mark_dead(x, "vote")
        if not role:
            return
        self.known[x] = role
        lr = self.lr
        mafia = role in MAFIA_ROLES
        for ln in self.links:
            if ln.target == x and ln.actor != self.me:
                self._push(ln.actor, lr * (-0.8 * ln.weight if mafia else 0.4 * ln.weight))
                self._credit(ln.actor, (0.35 if mafia else -0.35) * ln.weight)
            elif ln.actor == x:
                if mafia:
                    self._push(ln.target, lr * (-0.6 * ln.weight if ln.weight > 0 else 0.9))
                else:
                    self._push(ln.target, lr * 0.4 * ln.weight)
        self._co_votes(x, mafia=mafia)

    def _co_votes(self, x: str, mafia: bool) -> None:
        """Vote patterns once x's side is evident: Mafia vote as a block.

        x is Mafia: whoever voted with x (same target, same day) leans Mafia. x is town (a night
        victim, or revealed): pairs who voted together against x lean Mafia together."""
        lr = self.lr
        votes = [ln for ln in self.links if ln.kind == "voted" and ln.weight > 0]
        if mafia:
            mine = {(ln.round, ln.target) for ln in votes if ln.actor == x}
            for ln in votes:
                if ln.actor != x and (ln.round, ln.target) in mine:
                    self._push(ln.actor, lr * 0.3)
            return
        against = [ln.actor for ln in votes if ln.target == x and ln.actor != self.me]
        if len(set(against)) >= 2:
            for a in set(against):
                self._push(a, lr * 0.1 * (len(set(against)) - 1) / max(1, len(self.alive) // 3))

    def apply_own(self, kind: str, text: str, target: str | None) -> None:
        """Remember what this seat itself said or did (replayed from its assistant messages)."""
        if kind in ("discuss", "intro", "vote", "reask_vote"):
            for t, w in net_cues(text, self.me, self.players).items():
                self.my_said.append((self.round, t, w))
                if self.checks.get(t) == "Mafia":
                    self.revealed_by_me.add(t)
        if target:
            if kind in ("vote", "reask_vote"):
                self.my_votes.append((self.round, target))
                self.votes_today[self.me] = target
            elif kind == "night_doctor":
                self.my_protects.append(target)
            elif kind == "night_sheriff":
                self.my_checks_asked.append(target)
