"""The plan's estimate: calls, tokens, money and duration per arm and in total, with an interval.

Per-game figures come from a *profile* of the arm's rule set and language:

* bundled defaults (``defaults.json``), measured from offline bot games with the chained battery
  by ``mafiascope study calibrate``, game by game: each game's line-up, acting calls and tokens,
  the (step, living seat) pairs each probe trigger fired on, calls and tokens per probe id, and
  CPU seconds;
* replaced, for an arm with at least ``OWN_MIN`` settled games, by the study's own games: their
  usage records give calls, tokens, money and seconds per game directly.

A battery's size is real: for every profile game, each active probe is asked on the (step, seat)
pairs of its ``when`` triggers in that game (``own_turn``: the seat that just acted) at that
game's tokens per call of the probe, so calls scale with probes x living seats x messages and the
longer contexts of longer games are priced as they were measured. Money: each backend's share of
the arm's seats times the tokens at its price.

Uncertainty: each quantity's 90 % interval comes from its own spread over the profile's games,
split into the spread of games within one line-up (``w``: it averages out over the arm's n games),
the spread between line-ups (``b``: an arm plays one line-up, so it does not average out) and
the error of the profile's mean (``m``), with Student's t on the profile's degrees of freedom:
``total * (1 +- t * sqrt(w^2/n + b^2 + m^2))`` (relative sds). With its own games an arm's
settled games are known; only its remaining r games are uncertain:
``t(k-1) * sd * sqrt(r + r^2/k)`` over k own games. docs/studies.md says how the intervals
covered the bundled games.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from .spec import Arm, StudySpec, arm_rules, battery_path

DEFAULTS_FILE = Path(__file__).resolve().parent / "defaults.json"
OWN_MIN = 2
STEP_KINDS = ("after_each_message", "after_night_action", "after_round")
DEFAULT_LATENCY_S = {"openai": 2.0, "bus": 2.0, "human": 30.0}


# ---------------------------------------------------------------------- measuring games


def measure_games(game_dirs: list[Path], cpu_seconds: dict[str, float] | None = None) -> dict[str, Any]:
    """A profile from finished games, game by game (``per_game``), with per-game means and sds for reading.

    ``cpu_seconds`` (game directory name -> CPU seconds of the process while it played that game
    alone): the profile's seconds are CPU time, which is what an offline bot game costs on an idle
    core; the games' wall time (setup to game_over) is used only without it, and is inflated on a
    loaded machine (``seconds_basis`` says which). A game's line-up is the multiset of its seats'
    backends (``lineup``): the spread between line-ups is measured apart from the spread within one."""
    from ..logs import LogFormatError, kinds, read_game

    games: list[dict[str, Any]] = []
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
        lineup = Counter(str(p.get("backend")) for p in log.raw_setup.get("players") or [])
        pairs: dict[str, set[tuple[Any, Any]]] = defaultdict(set)
        probes: dict[str, list[int]] = {}
        for r in log.probe_dicts:
            key = (r.get("step_index"), r.get("player_name"))
            pairs[str(r.get("when"))].add(key)
            if r.get("speaker"):
                pairs["own_turn"].add(key)
            if r.get("tokens_prompt") is not None:
                row = probes.setdefault(str(r.get("probe_id")), [0, 0, 0])
                row[0] += 1
                row[1] += int(r["tokens_prompt"])
                row[2] += int(r.get("tokens_completion") or 0)
        if cpu_seconds is not None:
            took = cpu_seconds.get(gdir.name)
        else:
            took = float(over["ts"]) - float(t0) if t0 is not None and over.get("ts") is not None else None
        games.append({
            "lineup": ",".join(f"{b}x{n}" for b, n in sorted(lineup.items())),
            "act": [int(act["calls"]), int(act["prompt_tokens"]), int(act["completion_tokens"])],
            "steps": {w: len(pairs.get(w, ())) for w in (*STEP_KINDS, "own_turn")},
            "probes": probes, "rounds": int(over.get("round") or 0),
            "seconds": round(float(took), 4) if took is not None else None,
        })  # fmt: skip
    if not games:
        raise ValueError("no finished games with acting-call accounting to measure")
    act_calls = [g["act"][0] for g in games]
    secs: list[float] = [g["seconds"] for g in games if g["seconds"] is not None]
    all_calls = sum(g["act"][0] + sum(v[0] for v in g["probes"].values()) for g in games if g["seconds"] is not None)
    tok: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for g in games:
        for pid, v in g["probes"].items():
            tok[pid] = [x + y for x, y in zip(tok[pid], v, strict=True)]
    every = [sum(v[i] for v in tok.values()) for i in range(3)]
    return {
        "games": len(games),
        "lineups": len({g["lineup"] for g in games}),
        "act_calls": _ms(act_calls),
        "act_prompt_per_call": round(sum(g["act"][1] for g in games) / max(1, sum(act_calls)), 1),
        "act_completion_per_call": round(sum(g["act"][2] for g in games) / max(1, sum(act_calls)), 1),
        "rounds": _ms([g["rounds"] for g in games]),
        "seconds_per_game": round(statistics.fmean(secs), 3) if secs else None,
        "seconds_per_call": round(sum(secs) / max(1, all_calls), 6) if secs else None,
        "seconds_basis": "cpu" if cpu_seconds is not None else "wall",
        "seat_steps": {w: _ms([g["steps"][w] for g in games]) for w in (*STEP_KINDS, "own_turn")},
        "probe_tokens": {pid: [round(v[1] / v[0], 1), round(v[2] / v[0], 1)] for pid, v in sorted(tok.items()) if v[0]},
        "probe_tokens_mean": [round(every[1] / every[0], 1), round(every[2] / every[0], 1)] if every[0] else None,
        "per_game": games,
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


def profile_games(prof: dict[str, Any], probes: list[Any]) -> list[dict[str, Any]]:
    """Each game of the profile as the arm's battery would have made it: its calls and tokens (acting as
    measured; each active probe on that game's (step, seat) pairs of its triggers, at that game's tokens
    per call of the probe, else its mean over the game's probes, else the profile's), its line-up and its
    seconds (the game's seconds per call x its calls)."""
    mean_tok = prof.get("probe_tokens_mean") or [0.0, 0.0]
    out = []
    for g in prof["per_game"]:
        calls, prompt, completion = g["act"]
        row: dict[str, Any] = {"act_calls": float(calls), "probe_calls": 0.0, "prompt_tokens": float(prompt),
                               "completion_tokens": float(completion), "lineup": g["lineup"]}  # fmt: skip
        every = [sum(v[i] for v in g["probes"].values()) for i in range(3)]
        for probe in probes:
            n = sum(g["steps"].get(w, 0) for w in (["own_turn"] if probe.own_turn else list(probe.when)))
            got = g["probes"].get(probe.id)
            if got and got[0]:
                tp, tc = got[1] / got[0], got[2] / got[0]
            elif every[0]:
                tp, tc = every[1] / every[0], min(every[2] / every[0], probe.max_tokens)
            else:
                tp, tc = mean_tok[0], min(mean_tok[1], probe.max_tokens)
            row["probe_calls"] += n
            row["prompt_tokens"] += n * tp
            row["completion_tokens"] += n * tc
        row["calls"] = row["act_calls"] + row["probe_calls"]
        measured_calls = calls + every[0]
        row["seconds"] = g["seconds"] / max(1, measured_calls) * row["calls"] if g.get("seconds") is not None else None
        out.append(row)
    return out


def per_game_from_profile(prof: dict[str, Any], probes: list[Any]) -> dict[str, float]:
    """Expected calls and tokens of one game (act + the battery's probes): the mean over line-ups of the
    profile's games (:func:`profile_games`)."""
    games = profile_games(prof, probes)
    return {k: spread([g[k] for g in games], [g["lineup"] for g in games])["mean"]
            for k in ("act_calls", "probe_calls", "prompt_tokens", "completion_tokens", "calls")}  # fmt: skip


def spread(values: list[float], groups: list[str]) -> dict[str, float]:
    """One quantity over a profile's games, grouped by line-up (one-way random effects): the mean over
    line-ups and the relative sds of a game within its line-up (``w``), of line-ups' means around the
    mean (``b``, less what ``w`` explains) and of the mean itself (``m``), with the degrees of freedom
    ``df`` the mean is known to (line-ups - 1; games - 1 when every game has one line-up)."""
    by: dict[str, list[float]] = defaultdict(list)
    for v, g in zip(values, groups, strict=True):
        by[g].append(float(v))
    means = [statistics.fmean(v) for v in by.values()]
    grand = statistics.fmean(means)
    n, k = len(values), len(by)
    var_w = sum((x - statistics.fmean(v)) ** 2 for v in by.values() for x in v) / (n - k) if n > k else 0.0
    if k > 1:
        var_means = statistics.variance(means)
        size = k / sum(1 / len(v) for v in by.values())  # harmonic mean games per line-up
        var_b, var_m, df = max(0.0, var_means - var_w / size), var_means / k, k - 1
    else:
        var_b, var_m, df = 0.0, var_w / max(1, n), n - 1

    def rel(v: float) -> float:
        return math.sqrt(v) / abs(grand) if grand else 0.0

    return {"mean": grand, "w": rel(var_w), "b": rel(var_b), "m": rel(var_m), "df": max(1, df)}


_T90_SMALL = {1: 6.313752, 2: 2.919986, 3: 2.353363, 4: 2.131847}
_Z95 = 1.6448536269514722


def t90(df: float) -> float:
    """Student's t for a two-sided 90 % interval (its 0.95 quantile): exact for 1-4 degrees of freedom, the
    Cornish-Fisher expansion beyond (within 0.04 % of scipy.stats.t.ppf; importing scipy.stats
    costs `study status` two seconds)."""
    nu = max(1, int(df))
    if nu in _T90_SMALL:
        return _T90_SMALL[nu]
    z = _Z95
    return (
        z
        + (z**3 + z) / (4 * nu)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * nu**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * nu**3)
    )


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


QUANTITIES = ("calls", "act_calls", "probe_calls", "prompt_tokens", "completion_tokens", "money")


def own_per_game(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Per-game means and sds from the arm's own settled games (ledger rows carry their usage and seconds)."""
    done = [r for r in rows if r.get("state") in ("finished", "invalid") and isinstance(r.get("usage"), dict)]
    if len(done) < OWN_MIN:
        return None
    vals = {
        k: [float(r.get("money") or 0.0) if k == "money" else float(r["usage"].get(k) or 0) for r in done] for k in QUANTITIES
    }
    vals["seconds"] = [float(r.get("seconds") or 0.0) for r in done]
    return {
        "games": len(done),
        **{k: statistics.fmean(v) for k, v in vals.items()},
        "sd": {k: statistics.stdev(v) for k, v in vals.items()},
    }


def concurrency(rows: dict[str, dict[str, Any]]) -> float:
    """How many games ran at once, as the ledger saw it: the settled games' seconds over the busy wall time
    (the union of their [claimed, settled] spans); 1 when it cannot tell."""
    done = [r for r in rows.values() if r.get("state") in ("finished", "invalid") and r.get("seconds")]
    busy = busy_seconds(done)
    return max(1.0, sum(float(r["seconds"]) for r in done) / busy) if busy > 0 else 1.0


def busy_seconds(rows: list[dict[str, Any]]) -> float:
    """The union of the rows' [claimed, settled] spans, in seconds."""
    spans = sorted((float(r["started"]), float(r["updated"])) for r in rows if r.get("started") and r.get("updated"))
    total, cur = 0.0, None
    for a, b in spans:
        if cur is None or a > cur[1]:
            if cur is not None:
                total += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return total + (cur[1] - cur[0] if cur else 0.0)


def _arm_money(games: list[dict[str, Any]], shares: dict[str, float], spec: StudySpec) -> None:
    for g in games:
        g["money"] = sum(_price_money(g["prompt_tokens"], g["completion_tokens"], shares, spec).values())


def estimate_study(spec: StudySpec, schedule: list[Any], rows: dict[str, dict[str, Any]] | None = None,
                   defaults: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Per arm and total: games, calls, tokens, money and duration, each with a 90 % interval.

    With ``rows`` (the ledger), an arm with enough settled games is estimated from them (module docstring)."""
    defaults = load_defaults() if defaults is None else defaults
    rows = rows or {}
    par_seen = concurrency(rows)
    arms_out: dict[str, Any] = {}
    parts: list[tuple[str, dict[str, float], dict[str, float], float]] = []  # (profile, value, sd, df) per arm
    for arm in spec.arms:
        games = [g for g in schedule if g.arm == arm.name]
        n = len(games)
        rules = arm_rules(arm.rules, spec.source_path)
        shares = seat_shares(games)
        own = own_per_game([rows[g.game_id] for g in games if g.game_id in rows])
        prof, source = profile_for(rules.name, rules.family, arm.language, defaults)
        rel: dict[str, float] = {}
        if own is not None:
            k, left = own["games"], max(0, n - own["games"])
            pg = {q: own[q] for q in QUANTITIES}
            for q in (*QUANTITIES, "seconds"):
                total = (own[q] if q != "seconds" else own["seconds"]) * n
                rel[q] = t90(k - 1) * own["sd"][q] * math.sqrt(left + left * left / k) / total if total else 0.0
            df, key, source = float(k - 1), f"own:{arm.name}", f"own:{k} games"
            duration = n * own["seconds"] / par_seen
            spreads = None
        elif prof is not None:
            per = profile_games(prof, _battery(arm, spec))
            _arm_money(per, shares, spec)
            lineups = [g["lineup"] for g in per]
            spreads = {q: spread([g[q] for g in per], lineups) for q in QUANTITIES}
            pg = {q: spreads[q]["mean"] for q in QUANTITIES}
            for q, sp in spreads.items():
                rel[q] = t90(sp["df"]) * math.sqrt(sp["w"] ** 2 / max(1, n) + sp["b"] ** 2 + sp["m"] ** 2)
            secs = [g["seconds"] for g in per if g["seconds"] is not None]
            rel["seconds"] = rel["calls"]
            df, key = min(sp["df"] for sp in spreads.values()), source
            duration = _duration(spec, pg, shares, n, statistics.fmean(secs) if secs else 0.0)
        else:
            raise ValueError(f"arm {arm.name!r}: no profile for rule set {rules.name!r} (run mafiascope study calibrate)")
        row = {
            "games": n, "source": source, "seat_shares": {b: round(s, 3) for b, s in shares.items()},
            **{q: _round(q, pg[q] * n) for q in QUANTITIES}, "duration_s": round(duration, 1),
            "per_game": {"calls": round(pg["calls"], 1), "prompt_tokens": round(pg["prompt_tokens"]),
                         "completion_tokens": round(pg["completion_tokens"]), "money": round(pg["money"], 6)},
            "rel_halfwidth90": round(rel["money"] if pg["money"] else rel["calls"], 3),
        }  # fmt: skip
        if spreads is not None:
            row["spread"] = {q: {k: round(v, 4) for k, v in spreads[q].items() if k != "mean"} for q in ("calls", "money")}
        for q in QUANTITIES:
            row[f"{q}_90"] = [_round(q, max(0.0, pg[q] * n * (1 - rel[q]))), _round(q, pg[q] * n * (1 + rel[q]))]
        row["duration_s_90"] = [round(max(0.0, duration * (1 - rel["seconds"])), 1), round(duration * (1 + rel["seconds"]), 1)]
        value = {**{q: pg[q] * n for q in QUANTITIES}, "duration_s": duration, "games": n}
        sd = {q: value[q] * rel[q] / t90(df) for q in QUANTITIES}
        sd["duration_s"] = duration * rel["seconds"] / t90(df)
        parts.append((key, value, sd, df))
        arms_out[arm.name] = row
    return {"arms": arms_out, "total": _total(parts), "uncertainty": UNCERTAINTY}


UNCERTAINTY = ("90% intervals from each quantity's spread over the profile's games: within one line-up (averages out "
               "over n games), between line-ups (an arm plays one: it does not) and the error of the profile's mean, "
               "with Student's t; an arm with 2 or more settled games is estimated from them (only its remaining games "
               "are uncertain). Hosted models may write longer or shorter replies than the bots the profiles were "
               "measured on; durations assume the configured parallelism, latency_s and rpm until games have run")  # fmt: skip


def _total(parts: list[tuple[str, dict[str, float], dict[str, float], float]]) -> dict[str, Any]:
    """The study's total: arms estimated from one profile err together (their sds add), different profiles
    and arms' own games independently (their variances add); t on the fewest degrees of freedom."""
    total: dict[str, Any] = {}
    keys = (*QUANTITIES, "duration_s")
    t = t90(min((p[3] for p in parts), default=1.0))
    for q in (*keys, "games"):
        total[q] = _round(q, sum(p[1][q] for p in parts)) if q != "duration_s" else round(sum(p[1][q] for p in parts), 1)
    for q in keys:
        by_profile: dict[str, float] = defaultdict(float)
        for key, _, sd, _ in parts:
            by_profile[key] += sd[q]
        half = t * math.sqrt(sum(v * v for v in by_profile.values()))
        lo, hi = max(0.0, sum(p[1][q] for p in parts) - half), sum(p[1][q] for p in parts) + half
        total[f"{q}_90"] = [round(lo, 1), round(hi, 1)] if q == "duration_s" else [_round(q, lo), _round(q, hi)]
    total["games"] = int(total["games"])
    return total


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
    per = profile_games(prof, battery)
    sp = spread([g["calls"] for g in per], [g["lineup"] for g in per])
    half = t90(sp["df"]) * math.sqrt(sp["w"] ** 2 / max(1, games) + sp["b"] ** 2 + sp["m"] ** 2)
    pg = per_game_from_profile(prof, battery)
    out: dict[str, Any] = {"games": games, "source": source, "rel_halfwidth90": round(half, 3)}
    for k in ("act_calls", "probe_calls", "prompt_tokens", "completion_tokens"):
        out[k] = round(pg[k] * games)
    out["calls"] = out["act_calls"] + out["probe_calls"]
    out["calls_90"] = [round(out["calls"] * (1 - half)), round(out["calls"] * (1 + half))]
    types = [getattr(cfg.backends[s.backend], "type", "bot") for s in cfg.seats]
    out["paid_share"] = round(sum(1 for t in types if t != "bot") / max(1, len(types)), 3)
    return out
