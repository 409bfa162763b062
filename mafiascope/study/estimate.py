"""The plan's estimate: calls, tokens, money and duration per arm and in total, with an interval.

Per-game figures come from a *profile* of the arm's rule set and language:

* bundled defaults (``defaults.json``), measured from offline bot games with the chained battery
  by ``mafiascope study calibrate`` (game length in acting calls, tokens per acting call, the
  (step, living seat) pairs each probe trigger fires on, tokens per probe call by probe id,
  seconds per game);
* replaced, for an arm with at least ``OWN_MIN`` finished games, by the study's own games:
  their usage records give calls, tokens and money per game directly.

A battery's size is real: each active probe is asked on the (step, seat) pairs of its ``when``
triggers (``own_turn``: the seat that just acted), so calls scale with probes x living seats x
messages. Money: each backend's share of the arm's seats times the tokens at its price.

Uncertainty: a 90 % interval from the spread of game length (sd of acting calls per game over
the profile's games) for n games, plus the error of the profile's mean (m measured games):
``total * (1 +- 1.645 * cv * sqrt(1/n + 1/m))``. It does not cover how a hosted model's
replies differ in length from the bots' (completion tokens); docs/studies.md says how close
plans came on the shipped examples.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from .spec import Arm, StudySpec, arm_rules, battery_path

DEFAULTS_FILE = Path(__file__).resolve().parent / "defaults.json"
OWN_MIN = 2
Z90 = 1.645
STEP_KINDS = ("after_each_message", "after_night_action", "after_round")
DEFAULT_LATENCY_S = {"openai": 2.0, "bus": 2.0, "human": 30.0}


# ---------------------------------------------------------------------- measuring games


def measure_games(game_dirs: list[Path], cpu_seconds: dict[str, float] | None = None) -> dict[str, Any]:
    """A profile from finished games: per-game means and sds, tokens per call (act and per probe id).

    ``cpu_seconds`` (game directory name -> CPU seconds of the process while it played that game
    alone): the profile's seconds are CPU time, which is what an offline bot game costs on an idle
    core; the games' wall time (setup to game_over) is used only without it, and is inflated on a
    loaded machine (``seconds_basis`` says which)."""
    from ..logs import LogFormatError, kinds, read_game

    act_calls, act_p, act_c, rounds, secs, all_calls = [], [], [], [], [], []
    steps: dict[str, list[int]] = defaultdict(list)
    probe_tok: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for gdir in game_dirs:
        try:
            log = read_game(gdir, skip_corrupt=True)
        except LogFormatError:  # no setup record: not a finished game
            continue
        t0 = log.raw_setup.get("ts")
        over = next((r for r in reversed(log.records) if kinds.of(r) == kinds.GAME_OVER), None)
        if not over or not (over.get("cost") or {}).get("act"):
            continue
        act = over["cost"]["act"]
        act_calls.append(int(act["calls"]))
        act_p.append(int(act["prompt_tokens"]))
        act_c.append(int(act["completion_tokens"]))
        rounds.append(int(over.get("round") or 0))
        all_calls.append(int(act["calls"]) + int(((over["cost"].get("probes") or {}).get("calls")) or 0))
        if cpu_seconds is not None and gdir.name in cpu_seconds:
            secs.append(float(cpu_seconds[gdir.name]))
        elif cpu_seconds is None and t0 is not None and over.get("ts") is not None:
            secs.append(float(over["ts"]) - float(t0))
        pairs: dict[str, set[tuple[Any, Any]]] = defaultdict(set)
        for r in log.probe_dicts:
            key = (r.get("step_index"), r.get("player_name"))
            pairs[str(r.get("when"))].add(key)
            if r.get("speaker"):
                pairs["own_turn"].add(key)
            if r.get("tokens_prompt") is not None:
                probe_tok[str(r.get("probe_id"))].append((int(r["tokens_prompt"]), int(r.get("tokens_completion") or 0)))
        for w in (*STEP_KINDS, "own_turn"):
            steps[w].append(len(pairs.get(w, ())))
    n = len(act_calls)
    if not n:
        raise ValueError("no finished games with acting-call accounting to measure")
    all_tok = [t for v in probe_tok.values() for t in v]
    return {
        "games": n,
        "act_calls": _ms(act_calls),
        "act_prompt_per_call": round(sum(act_p) / max(1, sum(act_calls)), 1),
        "act_completion_per_call": round(sum(act_c) / max(1, sum(act_calls)), 1),
        "rounds": _ms(rounds),
        "seconds_per_game": round(statistics.fmean(secs), 3) if secs else None,
        "seconds_per_call": round(sum(secs) / max(1, sum(all_calls)), 6) if secs else None,
        "seconds_basis": "cpu" if cpu_seconds is not None else "wall",
        "seat_steps": {w: _ms(v) for w, v in steps.items()},
        "probe_tokens": {pid: [round(statistics.fmean(p for p, _ in v), 1), round(statistics.fmean(c for _, c in v), 1)]
                         for pid, v in sorted(probe_tok.items())},  # fmt: skip
        "probe_tokens_mean": [round(statistics.fmean(p for p, _ in all_tok), 1), round(statistics.fmean(c for _, c in all_tok), 1)]
        if all_tok else None,
    }


def _ms(xs: list[int] | list[float]) -> list[float]:
    return [round(statistics.fmean(xs), 2), round(statistics.stdev(xs), 2) if len(xs) > 1 else 0.0]


# ---------------------------------------------------------------------- profiles


def load_defaults() -> dict[str, Any]:
    return json.loads(DEFAULTS_FILE.read_text(encoding="utf-8")) if DEFAULTS_FILE.is_file() else {"profiles": {}}


def profile_for(rules: str, family: str, language: str, defaults: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The bundled profile of (rules, language); else the same rules in English; else the family's first."""
    profiles = defaults.get("profiles") or {}
    for key in (f"{rules}|{language}", f"{rules}|en"):
        if key in profiles:
            return profiles[key], f"bundled:{key}"
    for key, p in sorted(profiles.items()):
        if p.get("family") == family:
            return p, f"bundled:{key} (nearest: no profile for {rules}|{language})"
    return None, "none"


def _battery(arm: Arm, spec: StudySpec) -> list[Any]:
    if arm.probes == "none":
        return []
    from ..probes.dsl import load_battery

    return load_battery(battery_path(arm.probes, arm.language, spec.source_path)).active


def per_game_from_profile(prof: dict[str, Any], probes: list[Any]) -> dict[str, float]:
    """Expected calls and tokens of one game (act + the battery's probes) from a profile."""
    calls = prof["act_calls"][0]
    out = {"act_calls": calls, "probe_calls": 0.0, "prompt_tokens": calls * prof["act_prompt_per_call"],
           "completion_tokens": calls * prof["act_completion_per_call"]}  # fmt: skip
    steps = prof["seat_steps"]
    mean_tok = prof.get("probe_tokens_mean") or [0.0, 0.0]
    for p in probes:
        whens = ["own_turn"] if p.own_turn else list(p.when)
        n = sum(steps.get(w, [0.0])[0] for w in whens)
        tp, tc = (prof.get("probe_tokens") or {}).get(p.id) or [mean_tok[0], min(mean_tok[1], p.max_tokens)]
        out["probe_calls"] += n
        out["prompt_tokens"] += n * tp
        out["completion_tokens"] += n * tc
    return out


def seat_shares(games: list[Any]) -> dict[str, float]:
    """Each backend's share of the seats over an arm's scheduled games."""
    count: dict[str, int] = defaultdict(int)
    total = 0
    for g in games:
        for s in g.seats:
            count[str(s["backend"])] += 1
            total += 1
    return {b: c / max(1, total) for b, c in count.items()}


def _price_money(tokens_p: float, tokens_c: float, shares: dict[str, float], spec: StudySpec) -> dict[str, float]:
    out = {}
    for b, share in shares.items():
        p = spec.backends[b].price
        out[b] = (share * (tokens_p * p.prompt_per_mtok + tokens_c * p.completion_per_mtok) / 1e6) if p else 0.0
    return out


def own_per_game(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Per-game means and the sd of calls from the arm's own settled games (ledger rows carry their usage)."""
    done = [r for r in rows if r.get("state") in ("finished", "invalid") and isinstance(r.get("usage"), dict)]
    if len(done) < OWN_MIN:
        return None
    calls = [r["usage"]["calls"] for r in done]
    return {
        "games": len(done),
        "act_calls": statistics.fmean(r["usage"]["act_calls"] for r in done),
        "probe_calls": statistics.fmean(r["usage"]["probe_calls"] for r in done),
        "prompt_tokens": statistics.fmean(r["usage"]["prompt_tokens"] for r in done),
        "completion_tokens": statistics.fmean(r["usage"]["completion_tokens"] for r in done),
        "money": statistics.fmean(float(r.get("money") or 0.0) for r in done),
        "seconds": statistics.fmean(float(r.get("seconds") or 0.0) for r in done),
        "cv": (statistics.stdev(calls) / statistics.fmean(calls)) if len(calls) > 1 and statistics.fmean(calls) else 0.0,
    }


def estimate_study(spec: StudySpec, schedule: list[Any], rows: dict[str, dict[str, Any]] | None = None,
                   defaults: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Per arm and total: games, calls, tokens, money and duration, each with a 90 % interval.

    With ``rows`` (the ledger), an arm with enough settled games is estimated from them."""
    defaults = load_defaults() if defaults is None else defaults
    rows = rows or {}
    arms_out: dict[str, Any] = {}
    tot: defaultdict[str, float] = defaultdict(float)
    var: defaultdict[str, float] = defaultdict(float)
    for arm in spec.arms:
        games = [g for g in schedule if g.arm == arm.name]
        n = len(games)
        rules = arm_rules(arm.rules, spec.source_path)
        shares = seat_shares(games)
        own = own_per_game([rows[g.game_id] for g in games if g.game_id in rows])
        prof, source = profile_for(rules.name, rules.family, arm.language, defaults)
        if own is not None:
            pg = {k: own[k] for k in ("act_calls", "probe_calls", "prompt_tokens", "completion_tokens")}
            money_pg, cv, m, source = own["money"], own["cv"], own["games"], f"own:{own['games']} games"
            bot_secs = own["seconds"]
        elif prof is not None:
            pg = per_game_from_profile(prof, _battery(arm, spec))
            money_pg = sum(_price_money(pg["prompt_tokens"], pg["completion_tokens"], shares, spec).values())
            cv, m = prof["act_calls"][1] / max(1e-9, prof["act_calls"][0]), prof["games"]
            bot_secs = (prof.get("seconds_per_call") or 0.0) * (pg["act_calls"] + pg["probe_calls"])
        else:
            raise ValueError(f"arm {arm.name!r}: no profile for rule set {rules.name!r} (run mafiascope study calibrate)")
        calls_pg = pg["act_calls"] + pg["probe_calls"]
        half = Z90 * cv * math.sqrt(1 / max(1, n) + 1 / max(1, m))
        duration = _duration(spec, pg, shares, n, bot_secs)
        row = {
            "games": n, "source": source, "seat_shares": {b: round(s, 3) for b, s in shares.items()},
            "calls": round(calls_pg * n), "act_calls": round(pg["act_calls"] * n), "probe_calls": round(pg["probe_calls"] * n),
            "prompt_tokens": round(pg["prompt_tokens"] * n), "completion_tokens": round(pg["completion_tokens"] * n),
            "money": round(money_pg * n, 4), "duration_s": round(duration, 1),
            "per_game": {"calls": round(calls_pg, 1), "prompt_tokens": round(pg["prompt_tokens"]),
                         "completion_tokens": round(pg["completion_tokens"]), "money": round(money_pg, 6)},
            "rel_halfwidth90": round(half, 3),
        }  # fmt: skip
        for k in ("calls", "act_calls", "probe_calls", "prompt_tokens", "completion_tokens", "money"):
            row[f"{k}_90"] = [_round(k, max(0.0, row[k] * (1 - half))), _round(k, row[k] * (1 + half))]
            tot[k] += row[k]
            var[k] += (row[k] * half / Z90) ** 2
        tot["games"] += n
        tot["duration_s"] += duration  # arms share the executor: their durations add up
        var["duration_s"] += (duration * half / Z90) ** 2
        arms_out[arm.name] = row
    total: dict[str, Any] = {k: (round(v, 4) if k == "money" else round(v)) for k, v in tot.items()}
    for k in ("calls", "act_calls", "probe_calls", "prompt_tokens", "completion_tokens", "money", "duration_s"):
        sd = math.sqrt(var[k])
        total[f"{k}_90"] = [_round(k, max(0.0, tot[k] - Z90 * sd)), _round(k, tot[k] + Z90 * sd)]
    return {
        "arms": arms_out,
        "total": total,
        "uncertainty": "90% intervals from the spread of game length (sd of calls per game) for n games and the "
                       "error of the profile mean; completion tokens of hosted models may differ from the bots' "
                       "(the profile's source); durations assume the configured parallelism, latency_s and rpm",
    }  # fmt: skip


def _round(k: str, x: float) -> float:
    return round(x, 4) if k == "money" else round(x)


def _duration(spec: StudySpec, pg: dict[str, float], shares: dict[str, float], n: int, bot_secs: float) -> float:
    """Seconds for the arm's n games: offline bots are CPU-bound in one process (parallel games share it;
    Ray spreads them over ``parallel`` workers); API backends are bound by the longest of the acting
    critical path, their concurrency caps and their rpm."""
    par = spec.executor.parallel
    api = {b: s for b, s in shares.items() if spec.backends[b].type in DEFAULT_LATENCY_S}
    bot_share = 1.0 - sum(api.values())
    cpu = n * bot_secs * bot_share / (par if spec.executor.kind == "ray" else 1)
    if not api:
        return cpu
    calls_pg = pg["act_calls"] + pg["probe_calls"]
    lat = {b: spec.backends[b].latency_s or DEFAULT_LATENCY_S[spec.backends[b].type] for b in api}
    path = pg["act_calls"] * sum(lat[b] * s for b, s in api.items())  # acting calls are sequential in a game
    bounds = [math.ceil(n / par) * path]
    for b, s in api.items():
        lim = spec.backends[b].limits
        calls_b = calls_pg * s * n
        bounds.append(calls_b * lat[b] / max(1, int(lim["max_concurrency"])))
        if lim["rpm"]:
            bounds.append(calls_b / float(lim["rpm"]) * 60.0)
    return cpu + max(bounds)


def estimate_config(cfg: Any, games: int, probes: bool = True) -> dict[str, Any]:
    """The estimate of ``games`` games of one game config (``batch --dry-run``): calls and tokens with a
    90 % interval, and the share of seats held by backends that are not offline bots."""
    prof, source = profile_for(cfg.rules.name, cfg.rules.family, cfg.language, load_defaults())
    if prof is None:
        raise ValueError(f"no estimate profile for rule set {cfg.rules.name!r} (run mafiascope study calibrate)")
    battery: list[Any] = []
    if probes and cfg.probes.enabled:
        from ..probes.dsl import battery_for_config

        battery = battery_for_config(cfg)[0].active
    pg = per_game_from_profile(prof, battery)
    half = Z90 * prof["act_calls"][1] / max(1e-9, prof["act_calls"][0]) * math.sqrt(1 / max(1, games) + 1 / max(1, prof["games"]))
    out: dict[str, Any] = {"games": games, "source": source, "rel_halfwidth90": round(half, 3)}
    for k in ("act_calls", "probe_calls", "prompt_tokens", "completion_tokens"):
        out[k] = round(pg[k] * games)
    out["calls"] = out["act_calls"] + out["probe_calls"]
    out["calls_90"] = [round(out["calls"] * (1 - half)), round(out["calls"] * (1 + half))]
    types = [getattr(cfg.backends[s.backend], "type", "bot") for s in cfg.seats]
    out["paid_share"] = round(sum(1 for t in types if t != "bot") / max(1, len(types)), 3)
    return out
