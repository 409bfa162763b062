"""One probe answer's item rows: the role assessments (ra), suspicion ranks (sr), social map (sm),
personality profiles (pp) and planned actions (pa) tables of the columnar loader (load.py), each
row without its record index, and the answer-shape audit counts. A pure function of the answer, so
the loader computes it once per distinct answer value in a game."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from . import labels as L

LIST_PROBES = ("role_assessment", "suspicion_ranking", "personality_profile")
TRAITS = ("O", "C", "E", "A", "N")
TABLE_OF = {"role_assessment": "ra", "role_beliefs": "ra", "suspicion_ranking": "sr", "social_map": "sm",
            "personality_profile": "pp", "planned_action": "pa"}  # fmt: skip


def num(v: Any) -> float:
    """float() of a value like the original; NaN when not convertible."""
    cls = v.__class__
    if cls is float:
        return v
    if cls is int:  # float() of an int cannot fail but for overflow (a huge integer)
        try:
            return float(v)
        except OverflowError:
            return math.nan
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return math.nan


def wrapped_list(v: Any) -> list | None:
    """The single list value of an object answer, if it has exactly one."""
    if not isinstance(v, dict):
        return None
    lists = [x for x in v.values() if isinstance(x, list)]
    return lists[0] if len(lists) == 1 else None


_ROLE_MEMO: dict[str, tuple[int, int, int]] = {}


def role_codes(lab: Any) -> tuple[int, int, int]:
    """(English-only normalised, normalised, exact) codes of a guessed-role label (memoised)."""
    hit = _ROLE_MEMO.get(lab) if lab.__class__ is str else None
    if hit is None:
        hit = (L.normalise_role(lab, russian=False), L.normalise_role(lab), L.exact_role(lab))
        if lab.__class__ is str and len(_ROLE_MEMO) < 4096:
            _ROLE_MEMO[lab] = hit
    return hit


def item_seat(it: dict[str, Any], seat: dict[str, int], audit: Counter | None) -> int:
    """Seat of an answer item's ``player`` (exact name match, docs/metrics.md §3.3); -1 if none,
    counted in ``audit`` when given."""
    who = it.get("player")
    t = seat.get(who, -1) if isinstance(who, str) else -1
    if t < 0 and audit is not None:
        audit["answers.unknown_player"] += 1
    return t


def answer_rows(pid: str, eff: Any, src: int, seat: dict[str, int], audit: Counter) -> list[tuple]:
    """The rows (after ``rec``) an answer ``eff`` of probe ``pid`` adds to its table (:data:`TABLE_OF`);
    what its shape breaks is counted in ``audit``."""
    rows: list[tuple] = []
    if pid in LIST_PROBES and not isinstance(eff, list):
        audit[f"answers.non_list.{pid}"] += 1
    if pid == "role_assessment" and isinstance(eff, list):
        for pos, it in enumerate(eff):
            if not isinstance(it, dict):
                audit["answers.non_dict_item"] += 1
                continue
            who = it.get("player")  # item_seat, in line (the hottest loop of the cold load)
            t = seat.get(who, -1) if isinstance(who, str) else -1
            if t < 0:
                audit["answers.unknown_player"] += 1
            lab = it.get("guessed_role")
            c_raw = it.get("confidence")
            c = c_raw if c_raw.__class__ is float else num(c_raw)
            if isinstance(c_raw, float) and math.isnan(c_raw):
                audit["answers.nan_confidence"] += 1
            elif "confidence" in it and math.isnan(c):
                audit["answers.non_numeric_confidence"] += 1
            elif not math.isnan(c) and not 0 <= c <= 100:
                audit["answers.out_of_range_confidence"] += 1
            rows.append((pos, src, t, *role_codes(lab), c))
    elif pid == "role_beliefs" and isinstance(eff, dict):  # legacy battery (viewer fallback)
        for pos, (name, v) in enumerate(eff.items()):
            if isinstance(v, dict):
                t = seat.get(name, -1)
                lab = v.get("role")
                rows.append((pos, src, t, *role_codes(lab), num(v.get("confidence"))))
    elif pid == "suspicion_ranking" and (isinstance(eff, list) or wrapped_list(eff) is not None):
        # src 2 = a list wrapped in an object ({"thoughts": ..., "ranking": [...]}); only the
        # episode selector reads those, every original metric requires a bare list
        lst, src = (eff, src) if isinstance(eff, list) else (wrapped_list(eff), 2)
        for pos, it in enumerate(lst):
            if not isinstance(it, dict):
                continue
            t = item_seat(it, seat, audit)
            rows.append((pos, src, t, num(it.get("score"))))
    elif pid == "social_map":
        tm = eff.get("toward_me") if isinstance(eff, dict) else None
        if not isinstance(tm, list):
            audit["answers.bad_shape.social_map"] += 1
            return rows
        for pos, it in enumerate(tm):
            if not isinstance(it, dict):
                continue
            t = item_seat(it, seat, audit)
            a = it.get("attitude")
            rows.append((pos, src, t, L.ATT_CODES.get(a, -1) if isinstance(a, str) else -1, not a,
                         num(it.get("confidence", math.nan))))
    elif pid == "personality_profile" and isinstance(eff, list):
        for pos, it in enumerate(eff):
            if isinstance(it, dict):
                t = item_seat(it, seat, None)
                rows.append((pos, src, t, num(it.get("O")), num(it.get("C")), num(it.get("E")), num(it.get("A")),
                             num(it.get("N"))))
    elif pid == "planned_action" and isinstance(eff, dict):
        tg = eff.get("target")
        rows.append((src, str(eff.get("action") or ""), seat.get(tg, -1) if isinstance(tg, str) else -1))
    return rows
