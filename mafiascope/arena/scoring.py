"""Leaderboards, pairs and rule-set measures, computed only from recorded game events.

Points: 1 for a seat on the winning side; the first player shot gets +0.25 when two of the
(up to three) suspects of its best move are Mafia and +0.5 when all three are. Points vs
side = a seat's points minus the mean points of the same side under the same rule set. A
model's score is the mean of its seats' points vs side, with the standard error of that mean.

Pairs (every ranking shrunk toward zero as total / (games + 4)):
* teammates  -- same side: per shared game, won (1/0) minus the side's win rate under those rules
* mismatches -- opposite sides, ordered (a, b): a's side won minus that side's base rate
* rivals     -- opposite sides who accused each other (nominations and day votes) in the same game

Everything here reads ``game.jsonl`` files: seats from ``setup``, outcomes from ``game_over``,
shots, votes, nominations, best moves and checks from their events.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

from ..logs import GameLog, MissingSetupError, kinds, read_game
from ..logs.io import GAME_FILE
from ..logs.schema import MAFIA_ROLES, DayEliminate, DonResult, NightKill, NightShots, Nomination, SheriffResult, Utterance

SHRINK = 4
TOWN, MAFIA = "Villagers", "Mafia"
ELIMINATING_VOTES = ("vote", "revote", "runoff", "remove_all", "lone_nominee")


def side(role: str) -> str:
    return MAFIA if role in MAFIA_ROLES else TOWN


# ------------------------------------------------------------------------------ loading


def find_games(path: str | Path) -> list[Path]:
    """game.jsonl files under a run dir or logs dir (depth 1 or 2)."""
    p = Path(path)
    if p.is_file():
        return [p]
    return sorted(set(p.glob(f"*/{GAME_FILE}")) | set(p.glob(f"*/*/{GAME_FILE}")))


def game_record(log: GameLog) -> dict[str, Any] | None:
    """One finished ten-seat game reduced to what the scores need (None if unfinished or another family)."""
    setup, over = log.setup, log.game_over
    if over is None or setup.game_type != "tournament":
        return None
    seats = {p.name: {"model": p.backend or p.model or "?", "role": p.role, "side": side(p.role)} for p in setup.players}
    winner = over.winner
    says = log.events_of(Utterance)
    first = next(iter(log.events_of(NightKill)), None)
    first_shot = first.victim if first else None
    bm = next((e for e in says if e.kind == kinds.BEST_MOVE and e.player == first_shot), None)
    suspects = [s for s in (bm.suspects if bm else None) or [] if s in seats][:3]
    n_maf = sum(1 for s in suspects if seats[s]["side"] == MAFIA)
    points = {n: (1.0 if s["side"] == winner else 0.0) for n, s in seats.items()}
    bonus = 0.5 if n_maf >= 3 else 0.25 if n_maf == 2 else 0.0
    if first_shot in points:
        points[first_shot] += bonus
    ballots = [(e.player, e.target, e.round) for e in says
               if e.kind == kinds.DAY_VOTE and e.target_valid and e.target in seats and _extra(e, "ballot") != "remove_all"]  # fmt: skip
    accus = [(a, t) for a, t, _ in ballots]
    accus += [(e.nominator, e.nominee) for e in log.events_of(Nomination)]
    elims = log.events_of(DayEliminate)
    first_vote = [e.eliminated for e in elims if e.round == elims[0].round] if elims else None
    sheriff_checks = [(e.sheriff, e.result) for e in log.events_of(SheriffResult)]
    don_checks = [(e.don, e.result) for e in log.events_of(DonResult)]
    shots = log.events_of(NightShots)
    day_turns = sum(1 for e in says if e.kind in (kinds.DAY_DISCUSS, kinds.DEFENCE) and not _extra(e, "passed") and not e.fault)
    return {
        "game_id": setup.game_id, "rules": setup.rule_set or (setup.rules or {}).get("variant") or "?",
        "winner": winner, "rounds": over.round, "seats": seats, "points": points, "first_shot": first_shot,
        "suspects": suspects, "bonus": bonus, "ballots": ballots, "accusations": accus, "first_vote_out": first_vote,
        "sheriff_checks": sheriff_checks, "don_checks": don_checks, "nights": len(shots),
        "missed": sum(1 for e in shots if not e.landed and any(v for v in e.shots.values())),
        "day_turns": day_turns, "invalid": over.invalid,
    }  # fmt: skip


def _extra(ev: Utterance, name: str) -> Any:
    """A field the engine adds to some replies only (``ballot``, ``passed``), kept as an extra."""
    return (ev.model_extra or {}).get(name)


def load_records(path: str | Path) -> list[dict[str, Any]]:
    out = []
    for f in find_games(path):
        try:
            log = read_game(f)
        except MissingSetupError:  # not started yet
            continue
        rec = game_record(log)
        if rec is not None:
            out.append(rec)
    return out


# ------------------------------------------------------------------------------ statistics


CLUSTER_BOOT = 1000  # game-level bootstrap resamples of a leaderboard score (seeded: reports are reproducible)


def cluster_mean_se(sums: list[float], counts: list[int], boot: int = CLUSTER_BOOT,
                    seed: int = 0) -> tuple[float | None, float | None, list[float] | None]:
    """Mean of seat values and its standard error and 95% interval from the game-level cluster
    bootstrap: ``sums``/``counts`` are one game's total and number of the model's seats. The seats
    of one game share its outcome, so resampling seats as if independent understated the error."""
    import numpy as np

    from ..analytics.modes import Mode
    from ..analytics.stats import multiplicities, percentile_ci, ratio_stat

    n = sum(counts)
    if n == 0:
        return None, None, None
    mu = sum(sums) / n
    if len(sums) < 2:
        return mu, None, None
    per_game = np.column_stack([np.asarray(sums, dtype=float), np.asarray(counts, dtype=float)])
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = ratio_stat(0, 1)(multiplicities(len(sums), Mode(boot=boot, seed=seed)) @ per_game)
    ci = percentile_ci(vals)
    vals = vals[~np.isnan(vals)]
    return mu, (float(vals.std(ddof=1)) if len(vals) > 1 else None), (list(ci) if ci else None)


def competition_ranks(scores: list[float | None]) -> list[int]:
    """Rank = 1 + the number of strictly better scores ("1224"): equal scores share a rank."""
    vals = [(s if s is not None else float("-inf")) for s in scores]
    return [1 + sum(1 for o in vals if o > v) for v in vals]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float | None, float | None]:
    if n == 0:
        return None, None
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, c - h), min(1.0, c + h)


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(x, nd)


# ------------------------------------------------------------------------------ the report


def side_means(recs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for g in recs:
        for n, s in g["seats"].items():
            acc[g["rules"]][s["side"]].append(g["points"][n])
    return {rs: {sd: sum(v) / len(v) for sd, v in d.items()} for rs, d in acc.items()}


def base_rates(recs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    acc: dict[str, list[str]] = defaultdict(list)
    for g in recs:
        acc[g["rules"]].append(g["winner"])
    return {rs: {sd: sum(1 for w in ws if w == sd) / len(ws) for sd in (MAFIA, TOWN)} for rs, ws in acc.items()}


def leaderboard(recs: list[dict[str, Any]], rules: str | None = None, side_only: str | None = None) -> list[dict[str, Any]]:
    """Per model: mean points vs side over its seats; ``se`` and ``ci95`` from the game-level cluster
    bootstrap; ``games`` = distinct games it sat in, ``seats`` = its seats; equal scores share a rank."""
    means = side_means(recs)
    per: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))  # model -> game -> seat values
    wins: dict[str, int] = defaultdict(int)
    for gi, g in enumerate(recs):
        if rules and g["rules"] != rules:
            continue
        for n, s in g["seats"].items():
            if side_only and s["side"] != side_only:
                continue
            per[s["model"]][gi].append(g["points"][n] - means[g["rules"]][s["side"]])
            wins[s["model"]] += int(s["side"] == g["winner"])
    rows = []
    for m, games in per.items():
        mu, se, ci = cluster_mean_se([sum(v) for v in games.values()], [len(v) for v in games.values()])
        rows.append({"model": m, "score": _r(mu), "se": _r(se), "ci95": [_r(x) for x in ci] if ci else None,
                     "games": len(games), "seats": sum(len(v) for v in games.values()), "wins": wins[m]})
    rows.sort(key=lambda r: (-(r["score"] or 0), r["model"]))
    for r, rank in zip(rows, competition_ranks([r["score"] for r in rows])):
        r["rank"] = rank
    return rows


def spearman(boards: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    from scipy.stats import spearmanr

    out = []
    for a, b in combinations(sorted(boards), 2):
        sa = {r["model"]: r["score"] for r in boards[a]}
        sb = {r["model"]: r["score"] for r in boards[b]}
        common = sorted(set(sa) & set(sb))
        rho = None
        xa, xb = [sa[m] for m in common], [sb[m] for m in common]
        if len(common) >= 3 and len(set(xa)) > 1 and len(set(xb)) > 1:
            res = spearmanr(xa, xb)
            rho = _r(float(res.statistic if hasattr(res, "statistic") else res[0]))
        why = None
        if rho is None:
            why = (f"only {len(common)} model(s) ranked under both rule sets (need 3)" if len(common) < 3
                   else "every model has the same score under one of the rule sets")
        out.append({"a": a, "b": b, "rho": rho, "models": len(common), "why_none": why})
    return out


def pairs(recs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    base = base_rates(recs)
    team: dict[tuple[str, str], dict[str, Any]] = {}
    mism: dict[tuple[str, str], dict[str, Any]] = {}
    riv: dict[tuple[str, str], dict[str, Any]] = {}
    for g in recs:
        seats = g["seats"]
        models_side = {(s["model"], s["side"]) for s in seats.values()}
        accused: dict[tuple[str, str], int] = defaultdict(int)
        for a, t in g["accusations"]:
            if a in seats and t in seats:
                accused[(seats[a]["model"], seats[t]["model"])] += 1
        for (ma, sa), (mb, sb) in combinations(sorted(models_side), 2):
            if ma == mb:
                continue
            if sa == sb:
                lift = (1.0 if g["winner"] == sa else 0.0) - base[g["rules"]][sa]
                row = team.setdefault((ma, mb), {"a": ma, "b": mb, "games": 0, "total": 0.0, "mafia_games": 0, "town_games": 0})
                row["games"] += 1
                row["total"] += lift
                row["mafia_games" if sa == MAFIA else "town_games"] += 1
            else:
                for (x, sx), (y, _sy) in (((ma, sa), (mb, sb)), ((mb, sb), (ma, sa))):
                    lift = (1.0 if g["winner"] == sx else 0.0) - base[g["rules"]][sx]
                    row = mism.setdefault((x, y), {"a": x, "b": y, "games": 0, "total": 0.0, "wins": 0})
                    row["games"] += 1
                    row["total"] += lift
                    row["wins"] += int(g["winner"] == sx)
                key = (ma, mb) if ma < mb else (mb, ma)
                row = riv.setdefault(key, {"a": key[0], "b": key[1], "games": 0, "clashes": 0, "a_wins": 0, "accusations": 0})
                row["games"] += 1
                both = accused[(ma, mb)] > 0 and accused[(mb, ma)] > 0
                row["accusations"] += accused[(ma, mb)] + accused[(mb, ma)]
                if both:
                    row["clashes"] += 1
                    a_side = sa if key[0] == ma else sb
                    row["a_wins"] += int(g["winner"] == a_side)

    def finish(rows: dict[Any, dict[str, Any]], total_key: str) -> list[dict[str, Any]]:
        out = []
        for r in rows.values():
            r = dict(r)
            tot = r[total_key]
            r["total"] = _r(float(r.get("total", tot)))
            r["per_game"] = _r(r["total"] / r["games"]) if total_key == "total" else _r(r["clashes"] / r["games"])
            r["ranked"] = _r(tot / (r["games"] + SHRINK))
            out.append(r)
        out.sort(key=lambda r: (-(r["ranked"] or 0), r["a"], r["b"]))
        return out

    return {"teammates": finish(team, "total"), "mismatches": finish(mism, "total"), "rivals": finish(riv, "clashes")}


def rule_measures(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for g in recs:
        by[g["rules"]].append(g)
    out = []
    for rs, gs in sorted(by.items()):
        n = len(gs)
        mw = sum(1 for g in gs if g["winner"] == MAFIA)
        lo, hi = wilson(mw, n)
        town_ballots = [(g, v, t) for g in gs for v, t, _ in g["ballots"] if g["seats"][v]["side"] == TOWN]
        on_mafia = sum(1 for g, _, t in town_ballots if g["seats"][t]["side"] == MAFIA)
        fv = [g for g in gs if g["first_vote_out"]]
        fv_town = [g for g in fv if any(g["seats"][x]["side"] == TOWN for x in g["first_vote_out"])]
        nights = sum(g["nights"] for g in gs)
        out.append({
            "rules": rs, "games": n, "mafia_wins": mw, "mafia_win_rate": _r(mw / n), "mafia_win_ci": [_r(lo), _r(hi)],
            "draws": sum(1 for g in gs if g["winner"] not in (MAFIA, TOWN)),
            "town_ballots": len(town_ballots), "town_ballots_on_mafia": _r(on_mafia / len(town_ballots)) if town_ballots else None,
            "day_turns_per_game": _r(sum(g["day_turns"] for g in gs) / n, 2),
            "first_vote_removed_town": len(fv_town), "first_votes": len(fv),
            "town_wins_after_wrong_first_vote": sum(1 for g in fv_town if g["winner"] == TOWN),
            "night_shots": nights, "night_shots_missed": sum(g["missed"] for g in gs) if nights else None,
            "mean_rounds": _r(sum(g["rounds"] for g in gs) / n, 2),
            "best_move_bonus_games": sum(1 for g in gs if g["bonus"] > 0),
        })  # fmt: skip
    return out


def model_records(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    base = base_rates(recs)
    m: dict[str, dict[str, Any]] = defaultdict(lambda: {"mafia": defaultdict(lambda: [0, 0]), "town": defaultdict(lambda: [0, 0]),
                                                       "don": [0, 0, 0, 0], "sheriff": [0, 0, 0, 0]})  # fmt: skip
    for g in recs:
        for n, s in g["seats"].items():
            row = m[s["model"]]
            won = int(s["side"] == g["winner"])
            cell = row["mafia" if s["side"] == MAFIA else "town"][g["rules"]]
            cell[0] += won
            cell[1] += 1
            if s["role"] in ("Don", "Sheriff"):
                rec = row["don" if s["role"] == "Don" else "sheriff"]
                checks = [r for who, r in (g["don_checks"] if s["role"] == "Don" else g["sheriff_checks"]) if who == n]
                rec[0] += won
                rec[1] += 1
                rec[2] += sum(1 for r in checks if r in ("Sheriff", "Mafia"))
                rec[3] += len(checks)
    out = []
    for model, row in sorted(m.items()):
        imb = row["town"].get("imbalanced", [0, 0])
        out.append({
            "model": model,
            "mafia_win_rate": {rs: {"wins": w, "games": n, "rate": _r(w / n)} for rs, (w, n) in sorted(row["mafia"].items())},
            "town_win_rate": {rs: {"wins": w, "games": n, "rate": _r(w / n)} for rs, (w, n) in sorted(row["town"].items())},
            "town_imbalanced": {"wins": imb[0], "games": imb[1], "rate": _r(imb[0] / imb[1]) if imb[1] else None,
                                "side_average": _r(base["imbalanced"][TOWN]) if "imbalanced" in base else None},
            "don": {"wins": row["don"][0], "games": row["don"][1], "sheriff_found": row["don"][2], "checks": row["don"][3]},
            "sheriff": {"wins": row["sheriff"][0], "games": row["sheriff"][1], "mafia_found": row["sheriff"][2], "checks": row["sheriff"][3]},
        })  # fmt: skip
    return out


def report(recs: list[dict[str, Any]], include_invalid: bool = False) -> dict[str, Any]:
    """The whole arena report as one JSON-able object (documented in docs/arena.md). Games over
    their fault budget (``invalid``) are left out unless ``include_invalid``; ``invalid_left_out`` counts them."""
    left_out = 0 if include_invalid else sum(1 for g in recs if g.get("invalid"))
    if left_out:
        recs = [g for g in recs if not g.get("invalid")]
    rule_sets = sorted({g["rules"] for g in recs})
    per_rules = {rs: leaderboard(recs, rs) for rs in rule_sets}
    overall = leaderboard(recs)
    ses = [r["se"] for r in overall if r["se"] is not None]
    return {
        "games": len(recs),
        "invalid_left_out": left_out,
        "rule_sets": rule_sets,
        "side_means": {rs: {k: _r(v) for k, v in d.items()} for rs, d in side_means(recs).items()},
        "base_rates": {rs: {k: _r(v) for k, v in d.items()} for rs, d in base_rates(recs).items()},
        "leaderboards": {
            "overall": overall,
            "by_rules": per_rules,
            "mafia": leaderboard(recs, side_only=MAFIA),
            "town": leaderboard(recs, side_only=TOWN),
            "by_rules_side": {rs: {"mafia": leaderboard(recs, rs, MAFIA), "town": leaderboard(recs, rs, TOWN)} for rs in rule_sets},
        },
        "spearman": spearman(per_rules),
        "pairs": pairs(recs),
        "rule_measures": rule_measures(recs),
        "models": model_records(recs),
        "noise": {"median_se": _r(sorted(ses)[len(ses) // 2]) if ses else None,
                  "note": "a score's standard error; gaps under about twice it are noise"},
    }  # fmt: skip
