"""A parent game and its branches aligned at the fork step: suspicion, eliminations, transcripts.

Steps are (round, message number) keys ordered by round, then message number, the round
end (-1) last. ``k`` is a step's position relative to the fork step (the parent step the
branches restarted from, ``setup.fork_point``): 0 at the fork step, 1 for the first step
after it. Steps up to the fork step are shared history (a branch inherits them).

The crowd's suspicion of a player at a step is the share of the *other living* players
whose latest parsed role assessment (``role_assessment``, carried forward from earlier
steps) labels that player Mafia or Don; n is how many such assessments there are. It is
the same belief the Live Game page draws per player, summarised over the table.

A transcript is the game's public utterances after the fork step in log order; the first
divergence is the first position where a branch's (speaker, text) differs from the
parent's, or where one of them has ended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..logs import LogFormatError, kinds, read_game
from ..logs.steps import ROUND_END as END
from ..logs.steps import step_label as _label
from ..logs.steps import step_order
from .source import ReplayError

MAFIA_LABELS = frozenset({"mafia", "don", "мафия", "дон"})


def _order(key: tuple[int, int]) -> tuple[int, float]:
    return step_order(*key)


NIGHT_KILL = "night kill"


def step_label(key: tuple[int, int]) -> str:
    return _label(*key)


def elimination_label(key: tuple[int, int], how: str) -> str:
    """When an elimination happened, as a reader says it: a night kill (counted at its round's start, a step no
    message has) is ``Night 2``; a day vote is the timeline step of its last message (``R1.12``)."""
    return f"Night {key[0]}" if how == NIGHT_KILL else step_label(key)


@dataclass
class GameTrace:
    """What one game needs for the comparison, read from its logs."""

    game_id: str
    setup: dict[str, Any]
    events: list[dict[str, Any]]
    assessments: list[tuple[tuple[int, int], str, dict[str, bool]]]  # (step, agent, {player: labelled Mafia})
    steps: list[tuple[int, int]]

    @property
    def fork_point(self) -> tuple[int, int] | None:
        fp = self.setup.get("fork_point")
        return (int(fp[0]), int(fp[1])) if isinstance(fp, (list, tuple)) and len(fp) == 2 else None


def read_trace(gdir: str | Path) -> GameTrace:
    gdir = Path(gdir)
    try:
        log = read_game(gdir, skip_corrupt=True)
    except (LogFormatError, FileNotFoundError) as exc:
        raise ReplayError(str(exc)) from None
    setup, events = log.raw_setup, log.records
    steps: set[tuple[int, int]] = set()
    assessments: list[tuple[tuple[int, int], str, dict[str, bool]]] = []
    for rec in log.probe_dicts:
        try:
            key = (int(rec.get("round")), int(rec.get("public_msg_seq")))
        except (TypeError, ValueError):
            continue
        steps.add(key)
        ans = rec.get("answer_parsed")
        if rec.get("probe_id") != "role_assessment" or not isinstance(ans, list) or not rec.get("answer_parse_ok", True):
            continue
        labels = {}
        for item in ans:
            if isinstance(item, dict) and isinstance(item.get("player"), str):
                lab = item.get("guessed_role", item.get("role"))
                labels[item["player"]] = isinstance(lab, str) and lab.strip().lower() in MAFIA_LABELS
        assessments.append((key, str(rec.get("player_name")), labels))
    for ev in events:
        if isinstance(ev.get("msg_seq"), int) and isinstance(ev.get("round"), int) and kinds.of(ev) in kinds.UTTERANCE_KINDS:
            steps.add((ev["round"], ev["msg_seq"]))
    return GameTrace(str(setup.get("game_id") or gdir.name), setup, events, assessments, sorted(steps, key=_order))


def _eliminations(t: GameTrace) -> list[tuple[tuple[int, int], str, str]]:
    """(step, victim, how) in log order; a night kill counts at its round's start."""
    out = []
    last = (0, 0)
    for ev in t.events:
        if isinstance(ev.get("round"), int) and isinstance(ev.get("msg_seq"), int):
            last = (ev["round"], ev["msg_seq"])
        if kinds.of(ev) == kinds.DAY_ELIMINATE and isinstance(ev.get("eliminated"), str):
            out.append((last if last[0] == ev.get("round") else (int(ev.get("round") or 0), END), ev["eliminated"], "day vote"))
        elif kinds.of(ev) == kinds.NIGHT_KILL and isinstance(ev.get("victim"), str) and ev.get("visible_to") is None:
            out.append(((int(ev.get("round") or 0), 0), ev["victim"], NIGHT_KILL))
    return out


def _players(t: GameTrace) -> list[str]:
    return [str(p.get("name")) for p in t.setup.get("players") or [] if isinstance(p, dict) and p.get("name")]


def suspicion_series(t: GameTrace) -> pd.DataFrame:
    """Per step and player: the crowd's suspicion (share of other living assessors saying Mafia) and n."""
    players = _players(t)
    dead_at = {victim: step for step, victim, _ in _eliminations(t)}
    by_step: dict[tuple[int, int], list[tuple[str, dict[str, bool]]]] = {}
    for key, agent, labels in t.assessments:
        by_step.setdefault(key, []).append((agent, labels))
    latest: dict[str, dict[str, bool]] = {}
    rows = []
    for key in t.steps:
        for agent, labels in by_step.get(key, []):
            latest[agent] = labels
        alive = [p for p in players if p not in dead_at or _order(key) < _order(dead_at[p])]
        for p in players:
            votes = [latest[a][p] for a in alive if a != p and a in latest and p in latest[a]] if p in alive else []
            rows.append({"round": key[0], "seq": key[1], "label": step_label(key), "player": p, "alive": p in alive,
                         "suspicion": (sum(votes) / len(votes)) if votes else None, "n": len(votes)})
    return pd.DataFrame(rows, columns=["round", "seq", "label", "player", "alive", "suspicion", "n"])


def transcript(t: GameTrace, after: tuple[int, int] | None) -> list[dict[str, Any]]:
    """Public utterances after the step ``after`` (all of them when None), in log order."""
    out = []
    for ev in t.events:
        if kinds.of(ev) not in kinds.UTTERANCE_KINDS or ev.get("visible_to") is not None or not isinstance(ev.get("response"), str):
            continue
        key = (int(ev.get("round") or 0), int(ev.get("msg_seq") if isinstance(ev.get("msg_seq"), int) else 0))
        if after is not None and _order(key) <= _order(after):
            continue
        if ev.get("inherited"):
            continue
        out.append({"round": key[0], "seq": key[1], "label": step_label(key), "player": str(ev.get("player")), "text": ev["response"]})
    return out


def first_divergence(parent: list[dict[str, Any]], branch: list[dict[str, Any]]) -> int | None:
    """Index of the first utterance where the two transcripts differ (None when identical)."""
    for i, (a, b) in enumerate(zip(parent, branch)):
        if (a["player"], a["text"]) != (b["player"], b["text"]):
            return i
    return None if len(parent) == len(branch) else min(len(parent), len(branch))


@dataclass
class BranchComparison:
    parent_id: str
    fork_point: tuple[int, int]
    suspicion: pd.DataFrame  # game_id, is_parent, k, round, seq, label, player, alive, suspicion, n
    eliminations: pd.DataFrame  # game_id, is_parent, k, label, victim, how, before_fork
    transcripts: dict[str, list[dict[str, Any]]]  # game_id -> utterances after the fork step
    divergence: dict[str, int | None] = field(default_factory=dict)  # branch id -> first differing utterance
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)  # game_id -> winner, rounds
    # branch id -> whether it has role assessments of its own after the fork step (a branch run without probes, or with
    # a battery without role_assessment, only carries the inherited answers forward: its suspicion would be flat)
    assessed: dict[str, bool] = field(default_factory=dict)

    def band(self) -> pd.DataFrame:
        """Branches with assessments of their own after the fork (:attr:`assessed`) summarised per (k, player): mean,
        min and max suspicion and how many branches."""
        own = [g for g, ok in self.assessed.items() if ok] if self.assessed else list(self.suspicion["game_id"].unique())
        s = self.suspicion
        b = s[~s["is_parent"] & s["k"].ge(0) & s["game_id"].isin(own)].dropna(subset=["suspicion"])
        if b.empty:
            return pd.DataFrame(columns=["k", "player", "mean", "lo", "hi", "branches"])
        return (b.groupby(["k", "player"])["suspicion"].agg(mean="mean", lo="min", hi="max", branches="count").reset_index())


def compare_branches(parent_dir: str | Path, branch_dirs: list[str | Path]) -> BranchComparison:
    """Align ``branch_dirs`` (forks of the parent at one step) with the parent at the fork step."""
    parent = read_trace(parent_dir)
    branches = [read_trace(d) for d in branch_dirs]
    if not branches:
        raise ReplayError(f"game {parent.game_id}: no branches to compare")
    points = {b.fork_point for b in branches}
    wrong = [b.game_id for b in branches if b.setup.get("forked_from") != parent.game_id]
    if wrong:
        raise ReplayError(f"{', '.join(wrong)}: not a branch of {parent.game_id}")
    if len(points) != 1 or None in points:
        raise ReplayError(f"branches of {parent.game_id} start at different steps: {sorted(step_label(p) for p in points if p)}")
    fp = points.pop()
    assert fp is not None
    frames, elims = [], []
    transcripts: dict[str, list[dict[str, Any]]] = {}
    outcomes: dict[str, dict[str, Any]] = {}
    for t, is_parent in [(parent, True)] + [(b, False) for b in branches]:
        s = suspicion_series(t)
        order = [_order(k) for k in t.steps]
        pos = {k: i for i, k in enumerate(t.steps)}
        base = sum(1 for o in order if o <= _order(fp)) - 1  # index of the fork step (or the last step before it)
        s["k"] = [pos[(r, q)] - base for r, q in zip(s["round"], s["seq"])]
        s["game_id"], s["is_parent"] = t.game_id, is_parent
        frames.append(s)
        for step, victim, how in _eliminations(t):
            k = sum(1 for o in order if o <= _order(step)) - 1 - base
            elims.append({"game_id": t.game_id, "is_parent": is_parent, "k": k, "label": elimination_label(step, how), "victim": victim,
                          "how": how, "before_fork": _order(step) <= _order(fp)})
        transcripts[t.game_id] = transcript(t, fp)
        over = next((e for e in reversed(t.events) if kinds.of(e) == kinds.GAME_OVER), None)
        outcomes[t.game_id] = {"winner": over.get("winner") if over else None, "rounds": over.get("round") if over else None,
                               "finished": over is not None}
    sus = pd.concat(frames, ignore_index=True)
    cols = ["game_id", "is_parent", "k", "round", "seq", "label", "player", "alive", "suspicion", "n"]
    div = {b.game_id: first_divergence(transcripts[parent.game_id], transcripts[b.game_id]) for b in branches}
    assessed = {b.game_id: any(_order(key) > _order(fp) for key, _, _ in b.assessments) for b in branches}
    return BranchComparison(parent.game_id, fp, sus[cols],
                            pd.DataFrame(elims, columns=["game_id", "is_parent", "k", "label", "victim", "how", "before_fork"]),
                            transcripts, div, outcomes, assessed)
