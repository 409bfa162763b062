"""Arena batches: schedule, ledger, and the local (asyncio) or Ray executor.

``run_arena`` turns the roster and rule sets into a schedule and plays it through the one study
runner (:mod:`mafiascope.play.runner`): the study ledger in ``<run dir>/.study/`` claims and
resumes games (never-started ones, a killed run's ones replayed from scratch, failed ones),
on the local executor (``parallel`` games in one event loop) or on Ray (``address`` of a
running cluster, or a local instance). The arena's own ``ledger.jsonl`` (plan, scheduled,
finished, failed) is still written for the leaderboards and the app; a run begun before the
study ledger existed is imported from it (:func:`import_arena_ledger`).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..config import CONFIG_DIR, GameConfig, SeatSpec, format_validation_error, read_yaml, shipped_config
from ..engine.rules import RuleSet, VARIANT_ALIASES, tournament_rules
from ..play.ledger import StudyLedger
from ..play.runner import Job, RunnerError, run_games, spec_hash
from .ledger import Ledger
from .roster import Roster
from .schedule import Scheduled, make_fixed_schedule, make_schedule

RULES_DIR = CONFIG_DIR / "rules"
STUDY_DIR = ".study"  # <run dir>/.study/: the study ledger the runner claims and resumes from


def import_arena_ledger(study: StudyLedger, arena: Ledger) -> None:
    """A run begun before arena runs went through the study runner has only the arena ledger: its
    finished games become ``finished`` (or ``invalid``) rows of the new study ledger, so a resume
    plays exactly the rest (a scheduled or failed game is played again from scratch, as before)."""
    last: dict[str, dict[str, Any]] = {}
    for r in arena.records():
        if r.get("event") in ("finished", "failed") and r.get("game_id"):
            last[str(r["game_id"])] = r
    rows = study.rows()
    recs = []
    for gid, r in last.items():
        if r["event"] == "finished" and gid in rows:
            fields = {k: r.get(k) for k in ("winner", "rounds", "reason", "faults", "acts", "seconds")}
            state = "invalid" if r.get("invalid") else "finished"
            if state == "invalid":
                fields["invalid_reason"] = r.get("invalid_reason")
            recs.append({"event": "state", "game_id": gid, "state": state, "runner": "imported-arena-ledger", **fields})
    if recs:
        study.append(*recs)


def run_prefix(run_dir: Path) -> str:
    """Game ids start with the run directory's name, so games of different runs never share an id."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", run_dir.resolve().name).strip("-_")[:40] or "arena"


class ArenaError(ValueError):
    """A user-facing arena problem (bad rule-set name, a ledger from another plan ...)."""


def load_rule_set(name: str) -> RuleSet:
    """A rule set by name (sport, open/open_table, imbalanced, or configs/rules/<name>.yaml) or YAML path."""
    path = Path(name)
    if not path.suffix:
        key = VARIANT_ALIASES.get(name, name)
        path = RULES_DIR / f"{key}.yaml"
        if not path.is_file():
            try:
                return tournament_rules(key)
            except ValueError as exc:
                raise ArenaError(str(exc)) from None
    if not path.is_file():
        path = shipped_config(path) or path  # configs/rules/sport.yaml from any directory
    if not path.is_file():
        raise ArenaError(f"{name}: rule set not found (use sport, open, imbalanced or a YAML path)")
    data = read_yaml(path, ArenaError, "rule set")
    try:
        rules = RuleSet.model_validate(data)
    except ValidationError as exc:
        raise ArenaError(format_validation_error(exc, str(path), data, "rule set").replace("\n  ", "; ")) from None
    if rules.family != "tournament":
        raise ArenaError(f"{name}: the arena plays ten-seat rule sets (family: tournament), not {rules.family!r}")
    return rules


def rule_keys(rule_sets: list[str], rules: dict[str, RuleSet]) -> dict[str, str]:
    """The name each rule set goes by in game ids, the ledger and the leaderboards: a shipped name as
    given, a YAML path by the rule set's own ``name`` (a path cannot be part of a game id)."""
    keys: dict[str, str] = {}
    for rs in rule_sets:
        if Path(rs).suffix:
            key = re.sub(r"[^A-Za-z0-9_-]+", "-", rules[rs].name).strip("-_")[:40] or re.sub(r"[^A-Za-z0-9_-]+", "-", Path(rs).stem)[:40]
        else:
            key = rs
        if key in keys.values():
            other = next(k for k, v in keys.items() if v == key)
            raise ArenaError(f"--rules: {other} and {rs} are both named {key!r}; give the YAML rule set another name")
        keys[rs] = key
    return keys


def parse_rule_list(spec: str | list[str]) -> list[str]:
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise ArenaError("--rules: name at least one rule set (sport, open, imbalanced)")
    return [VARIANT_ALIASES.get(n, n) for n in names]


def game_config(roster: Roster, rules: RuleSet, g: Scheduled, *, probes: bool, snapshots: bool, language: str,
                fault_budget: float | None = None) -> GameConfig:  # fmt: skip
    used = {s["backend"] for s in g.seats}
    return GameConfig(
        name=f"arena-{g.game_id}",
        rules=rules,
        language=language,
        seats=[SeatSpec(backend=s["backend"], role=s["role"]) for s in g.seats],
        backends=roster.backend_specs(used | {rules.option("host_backend")}),
        probes={"enabled": probes},
        snapshots=snapshots,
        seed=g.seed,
        **({"fault_budget": fault_budget} if fault_budget is not None else {}),
    )


# probe calls per game (act) call and tokens per probe call, measured on the bundled demo games
# (data/demo: 660.8 probes and 40.8 act calls per game, 820 question and 425 answer characters per
# probe, tokens = characters / 3) with the chained five-probe battery
PROBES_PER_ACT_CALL = 16.2
PROBE_EXTRA_PROMPT_TOKENS = 275
PROBE_COMPLETION_TOKENS = 140


def estimate(roster: Roster, rule_sets: list[str], games: int, *, probes: bool = False) -> dict[str, Any]:
    """Calls and tokens a run will cost (per-game averages measured on offline games).

    The paid share is the share of paid models in the balanced schedule (every model plays
    about equally often), and the share of seats held by paid models under fixed seating.
    ``probes``: add the probe battery's calls (a copy of the acting context plus the question)."""
    per_game = {"sport": (70, 2600), "open_table": (150, 3000), "imbalanced": (85, 2700)}  # (calls, prompt tokens per call)
    calls = prompt = 0
    for rs in rule_sets:
        c, t = per_game.get(rs, (100, 2800))
        calls += c * games
        prompt += c * t * games
    seats = roster.seating or list(roster.models)
    paid = [m for m in seats if roster.models[m].get("type") not in ("bot",)]
    share = len(paid) / max(1, len(seats))
    act_calls, completion = calls, calls * 80
    probe_calls = int(round(calls * PROBES_PER_ACT_CALL)) if probes else 0
    if probes:
        prompt += int(round(prompt * PROBES_PER_ACT_CALL)) + probe_calls * PROBE_EXTRA_PROMPT_TOKENS
        completion += probe_calls * PROBE_COMPLETION_TOKENS
        calls += probe_calls
    return {"games": games * len(rule_sets), "mode": plan_mode(roster), "calls": calls, "prompt_tokens": prompt,
            "completion_tokens": completion, "paid_share": round(share, 3), "paid_calls": int(calls * share),
            "probes": probes, "act_calls": act_calls, "probe_calls": probe_calls,
            "note": "rough: measured call counts of offline games x typical context sizes"
                    + ("; probes: measured probes per act call of the demo games" if probes else "")}  # fmt: skip


def plan_mode(roster: Roster) -> str:
    return "fixed" if roster.seating else "balanced"


def arena_schedule(roster: Roster, rule_sets: list[str], games: int, seed: int = 0, prefix: str = "") -> list[Scheduled]:
    """The run's games: the balanced schedule over the roster, or every game at the roster's fixed seating."""
    if roster.seating:
        return make_fixed_schedule(roster.seating, rule_sets, games, seed, prefix)
    return make_schedule(roster.labels, rule_sets, games, seed, prefix)


class Progress:
    def __init__(self, total: int, done: int, stream: Any = None, quiet: bool = False):
        self.total, self.done, self.t0, self.quiet = total, done, time.time(), quiet
        self.stream = stream or sys.stderr
        self.bar = None
        if not quiet:
            try:
                from tqdm import tqdm  # optional; never a dependency

                self.bar = tqdm(total=total, initial=done, unit="game", file=self.stream)
            except ImportError:
                self.bar = None

    def step(self, gid: str, note: str) -> None:
        self.done += 1
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix_str(f"{gid} {note}")
            return
        rate = self.done / max(1e-9, time.time() - self.t0)
        print(f"[arena] {self.done}/{self.total} ({100 * self.done // max(1, self.total)}%) {gid}: {note}  {rate:.2f} games/s",
              file=self.stream, flush=True)  # fmt: skip

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_arena(
    roster: Roster,
    rule_sets: list[str],
    games: int,
    run_dir: str | Path,
    *,
    parallel: int = 4,
    executor: str = "local",
    address: str | None = None,
    seed: int = 0,
    probes: bool = False,
    snapshots: bool = False,
    language: str = "en",
    quiet: bool = False,
    backend_factory: Callable[[GameConfig], dict[str, Any]] | None = None,
    limit: int | None = None,
    fault_budget: float | None = None,
) -> dict[str, Any]:
    """Play (or continue) an arena run; returns a summary. ``limit`` stops after that many new games."""
    run_dir = Path(run_dir)
    given = parse_rule_list(rule_sets)
    loaded = {rs: load_rule_set(rs) for rs in given}
    keys = rule_keys(given, loaded)
    rule_sets = [keys[rs] for rs in given]
    rules = {keys[rs]: loaded[rs] for rs in given}
    for rs, rset in rules.items():
        if roster.seating and len(roster.seating) != rset.n_seats:
            raise ArenaError(f"seating: {len(roster.seating)} seats, but rule set {rs} seats {rset.n_seats}")
    params = {"roster": roster.fingerprint(), "rules": rule_sets, "games": games, "seed": seed, "language": language,
              "probes": probes, "mode": plan_mode(roster)}  # fmt: skip
    if roster.seating:
        params["seating"] = list(roster.seating)
    ledger = Ledger(run_dir)
    old = ledger.plan()
    if old is not None and {"mode": "balanced", **old} != params:  # plans written before fixed seating carry no mode
        raise ArenaError(f"{run_dir}: this run directory holds a different arena plan (roster, seating, rules, games or seed "
                         "differ); use another --logs directory or the same arguments to resume")  # fmt: skip
    schedule = arena_schedule(roster, rule_sets, games, seed, prefix=run_prefix(run_dir))
    if old is None:
        ledger.append({"event": "plan", "params": params})
        for g in schedule:
            ledger.append({"event": "scheduled", **g.as_dict()})
    done = set(ledger.status()["finished_ids"])
    progress = Progress(len(schedule), len(done), quiet=quiet)
    failures: list[dict[str, Any]] = []
    invalid: list[str] = []
    by_id = {g.game_id: g for g in schedule}
    jobs = [Job(g.game_id, g.seed, g.rules, i, fields={"rules": g.rules, "seats": g.seats}) for i, g in enumerate(schedule)]
    header = {"name": f"arena-{run_prefix(run_dir)}", "spec_hash": spec_hash({"kind": "arena", **params}), "games": len(schedule),
              "front_end": "arena"}  # fmt: skip
    cfgs: dict[str, GameConfig] = {}

    def cfg_of(j: Job) -> GameConfig:
        if j.game_id not in cfgs:
            g = by_id[j.game_id]
            cfgs[j.game_id] = game_config(roster, rules[g.rules], g, probes=probes, snapshots=snapshots, language=language,
                                          fault_budget=fault_budget)  # fmt: skip
        return cfgs[j.game_id]

    def record(j: Job, state: str, out: dict[str, Any] | BaseException, spend: float) -> None:
        if isinstance(out, BaseException):
            failures.append({"game_id": j.game_id, "error": repr(out)[:500]})
            ledger.append({"event": "failed", "game_id": j.game_id, "error": repr(out)[:500]})
            progress.step(j.game_id, "FAILED")
        else:
            ledger.append({"event": "finished", "game_id": j.game_id, "rules": by_id[j.game_id].rules, **out})
            if state == "invalid":
                invalid.append(j.game_id)
            progress.step(j.game_id, str(out["winner"]) + (" INVALID" if state == "invalid" else ""))

    try:
        outcome = run_games(run_dir / STUDY_DIR, header, jobs, cfg_of, games_dir=run_dir, executor=executor, parallel=max(1, parallel),
                            address=address, backend_factory=backend_factory, limit=limit, owns_game_dirs=True,
                            on_settle=record, on_ledger=lambda led, created: import_arena_ledger(led, ledger) if created else None)  # fmt: skip
    except RunnerError as exc:
        msg = str(exc)
        raise ArenaError("--" + msg if msg.startswith("executor: ") else msg) from None
    finally:
        progress.close()
    played = len(outcome.started)
    elapsed = outcome.seconds
    st = ledger.status()
    return {"run_dir": str(run_dir), "scheduled": st["scheduled"], "finished": st["finished"], "failed": len(failures),
            "played_now": played, "seconds": round(elapsed, 3),
            "games_per_second": round(played / elapsed, 3) if elapsed > 0 and played else None,
            "failures": failures, "invalid": sorted(invalid)}  # fmt: skip


